#include <elfin/detail/stream_core.hpp>

#include <exception>
#include <utility>

#include <elfin/detail/group_runtime.hpp>

#include "observers/runtime_log.hpp"

namespace elfin::detail {

StreamCore::~StreamCore() { detach(); }

void StreamCore::attach(ActorCell& cell) {
  cell_ = &cell;
  trace_ = cell.trace_id();
  resume_ = body_.valid() ? body_.handle() : std::coroutine_handle<>{};
  if (!resume_) done_ = true;
}

void StreamCore::resume_body(ActorCell& cell) {
  // The stream borrows the cell's resume slots and trace id while it runs (see the header).
  auto saved_resume = std::exchange(cell.resume_point_, {});
  auto saved_poll = std::exchange(cell.poll_fn_, nullptr);
  auto saved_arg = std::exchange(cell.poll_arg_, nullptr);
  const bool saved_yield = std::exchange(cell.yield_requested_, false);
  const TraceId saved_trace = cell.trace_id();
  cell.set_trace_id(trace_);

  running_ = true;
  std::exchange(resume_, {}).resume();
  running_ = false;

  resume_ = std::exchange(cell.resume_point_, saved_resume);
  poll_fn_ = std::exchange(cell.poll_fn_, saved_poll);
  poll_arg_ = std::exchange(cell.poll_arg_, saved_arg);
  yielded_ = std::exchange(cell.yield_requested_, saved_yield);
  trace_ = cell.trace_id();  // the stream may have moved on to another trace (a response's)
  cell.set_trace_id(saved_trace);
}

SourceBase::Poll StreamCore::poll(ActorCell& cell, Envelope& out) {
  // A few steps per poll: a stream that awaits things that are ready at once (a send to a
  // mailbox with room) gets to its next item without another wakeup, but cannot keep recv busy.
  for (int step = 0; step < 16; ++step) {
    if (done_) return Poll::Done;
    if (item_.valid()) {
      out = std::move(item_);
      if (single_item_) detach();  // nothing can follow; detached as it delivers
      return Poll::Item;
    }
    if (body_.done()) {
      if (auto error = body_.exception()) {
        const std::string reason = describe_exception(error);
        log_runtime(cell.group().system(), LogLevel::Error, cell, "a stream failed and was detached: {}", reason);
      }
      detach();
      return Poll::Done;
    }
    if (poll_fn_ != nullptr && !poll_fn_(poll_arg_)) return Poll::Pending;
    poll_fn_ = nullptr;
    if (!resume_) {
      // Suspended without telling the cell where to resume: it awaited something that is not an
      // elfin awaitable, and nobody will ever wake it.
      log_runtime(cell.group().system(), LogLevel::Error, cell,
                  "a stream awaited something elfin cannot resume; detached");
      detach();
      return Poll::Done;
    }
    resume_body(cell);
    if (done_) {  // terminated from inside its own coroutine
      detach();
      return Poll::Done;
    }
    if (yielded_ && !item_.valid() && !body_.done()) {
      // `yield_now` inside the stream: come back after others had a turn.
      cell.notify();
      return Poll::Pending;
    }
  }
  cell.notify();  // more to do; let the mailbox have its turn first
  return Poll::Pending;
}

void StreamCore::detach() {
  done_ = true;
  if (running_) return;  // called from inside the stream: poll destroys it once it suspends
  item_ = Envelope{};
  resume_ = {};
  poll_fn_ = nullptr;
  body_ = {};  // destroys the frame (and whatever it awaited) on the actor's thread
  keep_alive_.reset();
}

}  // namespace elfin::detail
