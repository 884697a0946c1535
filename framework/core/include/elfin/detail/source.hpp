// Sources inside the runtime: what every source (Interval, Delay, Signal, Stream) implements, and
// the set of sources attached to one actor, polled by `recv` together with the mailbox.
//
// A source produces envelopes for its actor. Producers on other threads (the timer thread, the
// signal thread) only mark the source ready under its own lock and wake the actor; the envelope
// is made and taken on the actor's thread, in `poll`. Streams run their coroutine right inside
// `poll`, on the actor's thread.
//
// Thread safety: `SourceSet` belongs to the actor's thread. A source's `poll` and `detach` run on
// the actor's thread; what else may touch it is documented per source.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include <elfin/envelope.hpp>

namespace elfin::detail {

class ActorCell;
class SourceSet;
/// The cell's source set (defined with ActorCell; this header cannot include it).
[[nodiscard]] SourceSet& cell_sources(ActorCell& cell);

class SourceBase {
 public:
  enum class Poll : unsigned char { Item, Pending, Done };

  SourceBase() = default;
  SourceBase(const SourceBase&) = delete;
  SourceBase& operator=(const SourceBase&) = delete;
  virtual ~SourceBase() = default;

  /// Called once by `ctx.attach`, on the actor's thread.
  virtual void attach(ActorCell& cell) = 0;
  /// The next item, if one is ready. `Done` means the source is finished and can be dropped;
  /// an `Item` may be the last one (then `finished()` is true afterwards).
  virtual Poll poll(ActorCell& cell, Envelope& out) = 0;
  /// Stops producing for good (cancels timers, unsubscribes). Idempotent.
  virtual void detach() = 0;
  [[nodiscard]] virtual bool finished() const = 0;

  /// True the first time only: a source handle attached twice is attached once.
  bool attach_once() { return !std::exchange(attached_, true); }

 private:
  bool attached_ = false;  // actor thread only
};

class SourceSet {
 public:
  SourceSet() = default;
  SourceSet(const SourceSet&) = delete;
  SourceSet& operator=(const SourceSet&) = delete;
  ~SourceSet() { clear(); }

  /// Takes ownership of a new source; safe while `poll` runs (a stream may attach sources).
  void add(std::shared_ptr<SourceBase> source) { added_.push_back(std::move(source)); }
  [[nodiscard]] bool empty() const { return sources_.empty() && added_.empty(); }
  [[nodiscard]] std::size_t size() const { return sources_.size() + added_.size(); }

  /// One item from the first ready source, round-robin, so a busy source cannot starve the
  /// others. Drops finished sources. False if none is ready, or when called from inside a
  /// source's own poll (a stream that calls `try_recv`).
  bool poll(ActorCell& cell, Envelope& out);
  /// Detaches and drops every source (the actor finished).
  void clear();

 private:
  std::vector<std::shared_ptr<SourceBase>> sources_;
  std::vector<std::shared_ptr<SourceBase>> added_;
  std::size_t next_ = 0;
  bool polling_ = false;
};

}  // namespace elfin::detail

namespace elfin::detail {

/// What `ctx.attach` needs from a source handle: its core (shared with the actor's SourceSet).
template <class S>
concept Source = requires(const S& s) {
  { s.source_core() } -> std::convertible_to<std::shared_ptr<SourceBase>>;
};

/// Attaches `source` to `cell` (on the actor's thread) and hands the handle back.
template <Source S>
S attach_source(S source, ActorCell& cell) {
  std::shared_ptr<SourceBase> core = source.source_core();
  if (core->attach_once()) {
    core->attach(cell);
    cell_sources(cell).add(std::move(core));
  }
  return source;
}

}  // namespace elfin::detail
