// StreamCore: a Stream source — a coroutine run on the actor's own thread, inside `recv`, that
// emits messages one at a time.
//
// Driving it: the stream's coroutine awaits elfin awaitables (requests, sends, other Tasks), and
// those record where to resume and what to poll in the actor's cell, as the actor's own
// coroutine does (see actor_cell.hpp). The core therefore runs the stream with the cell's resume
// slots (and current trace id) swapped for its own, and keeps what the stream left there for its
// next poll. When a request the stream waits for is answered, the actor is woken, its `recv`
// polls the sources, and the stream's poll function says it may go on. `Emitter::emit` leaves
// an item and suspends; the item is what `recv` returns, and the stream resumes at the next poll
// (one item in flight: a stream never runs ahead of its actor).
//
// An exception escaping the stream's coroutine ends the stream (logged as an error); the actor
// goes on.
//
// Thread safety: everything runs on the actor's thread.
#pragma once

#include <coroutine>
#include <memory>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/source.hpp>
#include <elfin/envelope.hpp>
#include <elfin/task.hpp>
#include <elfin/trace_id.hpp>

namespace elfin::detail {

class StreamCore final : public SourceBase {
 public:
  /// `new_trace_per_item`: items start new traces (a sequence); otherwise the stream continues
  /// the trace that was current when it was attached (`once`, `generate`).
  /// `single_item`: the stream is done once its first item is taken (`once`).
  StreamCore(bool new_trace_per_item, bool single_item)
      : new_trace_per_item_(new_trace_per_item), single_item_(single_item) {}
  ~StreamCore() override;

  /// The coroutine to run, and whatever must outlive it (the callable that made it).
  void set_body(Task<> body, std::shared_ptr<void> keep_alive) {
    body_ = std::move(body);
    keep_alive_ = std::move(keep_alive);
  }

  void attach(ActorCell& cell) override;
  Poll poll(ActorCell& cell, Envelope& out) override;
  void detach() override;
  [[nodiscard]] bool finished() const override { return done_; }

  // --- for Emitter, called from inside the stream's coroutine ----------------------------------
  [[nodiscard]] ActorCell& cell() const { return *cell_; }
  /// The trace id for the next item.
  [[nodiscard]] TraceId item_trace() const { return new_trace_per_item_ ? TraceId::generate() : cell_->trace_id(); }
  void offer(Envelope item) { item_ = std::move(item); }

 private:
  void resume_body(ActorCell& cell);

  const bool new_trace_per_item_;
  const bool single_item_;
  std::shared_ptr<void> keep_alive_;  // what body_'s frame may point into: declared first, dies last
  Task<> body_;
  ActorCell* cell_ = nullptr;
  TraceId trace_;
  // Where the stream's coroutine waits, as the awaitables left it in the cell.
  std::coroutine_handle<> resume_;
  PollFn poll_fn_ = nullptr;
  void* poll_arg_ = nullptr;
  bool yielded_ = false;
  Envelope item_;
  bool done_ = false;
  bool running_ = false;  // inside resume_body: the frame must not be destroyed now
};

}  // namespace elfin::detail
