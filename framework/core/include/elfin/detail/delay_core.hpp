// DelayCore: the message-independent part of `Delay<M>` — one timer on the system's timer
// service and the "fired" flag it sets for the actor's `recv`.
//
// Thread safety: the timer thread (or the advancing thread under virtual time) fires; the rest
// runs on the actor's thread; shared state is guarded by `mu_`.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>

#include <elfin/detail/source.hpp>
#include <elfin/detail/timer_service.hpp>
#include <elfin/trace_id.hpp>

namespace elfin::detail {

class DelayCore : public SourceBase, public std::enable_shared_from_this<DelayCore> {
 public:
  explicit DelayCore(std::chrono::nanoseconds delay) : delay_(delay) {}

  void attach(ActorCell& cell) override;
  Poll poll(ActorCell& cell, Envelope& out) override;
  void detach() override;
  [[nodiscard]] bool finished() const override;
  void terminate() { detach(); }

 protected:
  /// The envelope to deliver, continuing `trace` (the actor's trace when it attached the delay).
  virtual Envelope make_message(ActorCell& cell, TraceId trace) = 0;

 private:
  void on_fire();

  const std::chrono::nanoseconds delay_;
  mutable std::mutex mu_;
  std::weak_ptr<ActorCell> cell_;
  TimerService* timers_ = nullptr;  // set at attach, cleared by detach
  TimerService::TimerId timer_ = 0;
  TraceId trace_;
  bool fired_ = false;
  bool done_ = false;  // delivered or terminated
};

}  // namespace elfin::detail
