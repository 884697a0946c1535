// The actor the calling worker thread is running right now, for code that is handed no context
// (a ResponseToken answering, a log record) but must say which actor it belongs to.
//
// Set by the scheduler around each run of an actor; null on other threads (timers, test proxies).
#pragma once

#include <cstdint>

namespace elfin::detail {

class ActorCell;

inline thread_local ActorCell* t_current_actor = nullptr;
/// Counts the runs this thread started: what a thread-local cache valid "within one run" (the
/// dump rate limit's clock, see dumping.cpp) compares, so a thread back from idle never uses it.
inline thread_local std::uint64_t t_actor_runs = 0;

/// Makes `cell` current for the scope's lifetime.
class CurrentActorScope {
 public:
  explicit CurrentActorScope(ActorCell* cell) : previous_(t_current_actor) {
    t_current_actor = cell;
    ++t_actor_runs;
  }
  CurrentActorScope(const CurrentActorScope&) = delete;
  CurrentActorScope& operator=(const CurrentActorScope&) = delete;
  ~CurrentActorScope() { t_current_actor = previous_; }

 private:
  ActorCell* previous_;
};

}  // namespace elfin::detail
