#include <elfin/detail/request_deadline.hpp>

#include <string>
#include <utility>

#include <elfin/detail/request_state.hpp>
#include <elfin/detail/timer_service.hpp>

namespace elfin::detail {

RequestDeadline::RequestDeadline(SystemCore& system, const std::shared_ptr<RequestStateBase>& state,
                                 std::chrono::nanoseconds limit)
    : system_(&system) {
  std::weak_ptr<RequestStateBase> slot = state;
  timer_ = timers_of(system).schedule_after(limit, [slot, limit] {
    if (auto expiring = slot.lock()) {
      expiring->expire(RequestError{
          RequestError::TimedOut,
          "no answer within " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(limit).count()) +
              " ms"});
    }
  });
}

void RequestDeadline::cancel_timer() noexcept { timers_of(*system_).cancel(std::exchange(timer_, 0)); }

}  // namespace elfin::detail
