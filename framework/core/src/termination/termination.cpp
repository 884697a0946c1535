#include "termination/termination.hpp"

#include <algorithm>
#include <utility>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/internal/thread_name.hpp>
#include <elfin/messages.hpp>

#include "actor/lifecycle.hpp"
#include "observers/runtime_log.hpp"
#include "system/system_core.hpp"

namespace elfin::detail {

// System::start fills both from the config or their defaults before the core exists.
std::chrono::milliseconds Termination::closing_after() const {
  return system_.options().terminate_closing_after.value_or(std::chrono::milliseconds::zero());
}
std::chrono::milliseconds Termination::give_up_after() const {
  return system_.options().terminate_give_up_after.value_or(std::chrono::milliseconds::zero());
}

Termination::~Termination() {
  if (terminator_.joinable()) terminator_.join();
}

void Termination::actor_finished(ActorCell& cell) {
  {
    std::lock_guard lock(mu_);
    cell.group().on_finished(cell);
    live_actors_.fetch_sub(1, std::memory_order_release);
  }
  cv_.notify_all();
}

void Termination::terminate(std::string reason) {
  {
    std::lock_guard lock(mu_);
    if (terminating_) return;
    terminating_ = true;
  }
  system_.stop_memory_tracker();
  begin_phase(false, reason);
  std::lock_guard lock(mu_);
  terminator_ = std::thread([this, reason = std::move(reason)]() mutable {
    name_this_thread("elfin-terminate");
    sequence(std::move(reason));
  });
}

void Termination::terminate_and_wait(std::string reason) {
  terminate(std::move(reason));
  join();
  std::thread terminator;
  {
    std::lock_guard lock(mu_);
    terminator.swap(terminator_);
  }
  if (terminator.joinable()) terminator.join();
}

void Termination::kill(std::string reason) {
  {
    std::lock_guard lock(mu_);
    if (killed_) return;
    killed_ = true;
    terminating_ = true;  // a later terminate() has nothing left to do
    if (!failure_) failure_ = std::move(reason);
  }
  cv_.notify_all();  // a termination in progress stops waiting for actors that will never finish
  system_.stop_memory_tracker();
  for (const auto& g : system_.groups()) g->stop_spawning();
  // Workers first: once they are joined no actor runs, so frames can be destroyed under nobody.
  system_.scheduler().stop();
  system_.timers().shutdown();
  for (const auto& cell : system_.address_book().snapshot()) close_for_good(*cell);
  mark_terminated();
}

void Termination::fail(std::string reason) {
  {
    std::lock_guard lock(mu_);
    if (!failure_) failure_ = reason;
  }
  terminate(std::move(reason));
}

std::optional<std::string> Termination::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

void Termination::join() {
  if (system_.timers().is_virtual()) {
    // Under virtual time the termination stages wait for a clock nobody else advances while the
    // owner is blocked here, so an actor that ignores Terminate would hang the join for ever: let
    // the stages' time pass once real time shows the system is not finishing by itself.
    const auto stages = closing_after() + give_up_after();
    while (!join_for(std::chrono::milliseconds(20)))
      std::ignore = system_.advance_time(stages, std::chrono::milliseconds(1000));
    return;
  }
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return terminated_; });
}

bool Termination::join_for(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return terminated_; });
}

std::vector<GroupRuntime*> Termination::phase_groups(bool system_phase) const {
  std::vector<GroupRuntime*> phase;
  for (const auto& g : system_.groups()) {
    if (g->stops_in_system_phase() == system_phase && !g->traits().external) phase.push_back(g.get());
  }
  return phase;
}

void Termination::begin_phase(bool system_phase, const std::string& reason) {
  std::vector<GroupRuntime*> groups = phase_groups(system_phase);
  std::uint64_t phase = 0;
  {
    std::lock_guard lock(mu_);
    phase = phase_ = ++phases_begun_;
    phase_gave_up_ = false;
  }
  for (auto* g : groups) g->stop_spawning();
  for (auto* g : groups)
    system_.send_to_group(*g, Envelope::make(Terminate{false, reason}, Addr{}, TraceId::generate()));
  const auto timer = system_.timers().schedule_after(
      closing_after(), [this, phase, groups, reason] { close_phase(phase, groups, reason); });
  std::lock_guard lock(mu_);
  if (phase_ == phase) stage_timer_ = timer;
}

void Termination::close_phase(std::uint64_t phase, const std::vector<GroupRuntime*>& groups,
                              const std::string& reason) {
  {
    std::lock_guard lock(mu_);
    if (phase_ != phase) return;  // the phase ended before its grace period did
  }
  for (auto* g : groups)
    system_.send_to_group(*g, Envelope::make(Terminate::closing(reason), Addr{}, TraceId::generate()));
  const auto timer = system_.timers().schedule_after(give_up_after(), [this, phase] {
    {
      std::lock_guard lock(mu_);
      if (phase_ != phase) return;
      phase_gave_up_ = true;
    }
    cv_.notify_all();
  });
  std::lock_guard lock(mu_);
  if (phase_ == phase) stage_timer_ = timer;
}

void Termination::sequence(std::string reason) {
  for (bool system_phase : {false, true}) {
    if (system_phase) begin_phase(true, reason);
    const std::vector<GroupRuntime*> groups = phase_groups(system_phase);
    auto all_empty = [&] {
      return std::all_of(groups.begin(), groups.end(), [](GroupRuntime* g) { return g->active_actors() == 0; });
    };
    TimerService::TimerId pending = 0;
    bool killed = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return all_empty() || phase_gave_up_ || killed_; });
      phase_ = 0;  // stage timers still pending or firing now find another phase and stop
      pending = std::exchange(stage_timer_, 0);
      killed = killed_;
    }
    if (pending != 0) std::ignore = system_.timers().cancel(pending);
    for (auto* g : killed ? std::vector<GroupRuntime*>{} : groups) {
      if (g->active_actors() != 0) {
        log_runtime(system_, LogLevel::Warn, ActorMeta{g->name(), "_"},
                    "{} actor(s) did not terminate in time; giving up on them", g->active_actors());
      }
    }
  }
  for (const auto& g : system_.groups()) g->stop_spawning();
  mark_terminated();
}

void Termination::mark_terminated() {
  {
    std::lock_guard lock(mu_);
    terminated_ = true;
  }
  cv_.notify_all();
}

}  // namespace elfin::detail
