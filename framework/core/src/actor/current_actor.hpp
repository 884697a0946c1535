// The actor the calling worker thread is running right now, for code that is handed no context
// (a ResponseToken answering, a log record) but must say which actor it belongs to.
//
// Set by the scheduler around each run of an actor; null on other threads (timers, test proxies).
#pragma once

#include <cstdint>

#include <elfin/detail/group_dumping.hpp>

namespace elfin::detail {

class ActorCell;

inline thread_local ActorCell* t_current_actor = nullptr;

/// Makes `cell` current for the scope's lifetime. What is valid only within one run (the dump
/// refusal pass, group_dumping.hpp) ends with the scope and never carries into the next run.
class CurrentActorScope {
 public:
  explicit CurrentActorScope(ActorCell* cell) : previous_(t_current_actor) {
    t_current_actor = cell;
    t_dump_refusal_pass.left = 0;
  }
  CurrentActorScope(const CurrentActorScope&) = delete;
  CurrentActorScope& operator=(const CurrentActorScope&) = delete;
  ~CurrentActorScope() {
    t_current_actor = previous_;
    t_dump_refusal_pass.left = 0;
  }

 private:
  ActorCell* previous_;
};

}  // namespace elfin::detail
