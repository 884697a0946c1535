#include <elfin/detail/actor_cell.hpp>

#include <cassert>
#include <exception>

#include <elfin/detail/group_dumping.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/group_telemetry.hpp>
#include <elfin/detail/observation.hpp>
#include <elfin/detail/request_state.hpp>
#include <elfin/internal/mailbox.hpp>
#include <elfin/messages.hpp>
#include <elfin/request.hpp>
#include "actor/current_actor.hpp"

#include "system/system_core.hpp"

namespace elfin::detail {

static_assert(sizeof(Mailbox) == ActorCell::kMailboxSize && alignof(Mailbox) == ActorCell::kMailboxAlign,
              "ActorCell reserves room for exactly one Mailbox: update kMailboxSize and kMailboxAlign");

ActorCell::ActorCell(GroupRuntime& group, bool external) : group_(&group), external_(external) {
  new (mailbox_) Mailbox();
}

ActorCell::~ActorCell() {
  // The frame may hold envelopes and tokens whose destructors look at this cell; end it first.
  sources_.clear();
  task_ = {};
  settle_abandoned(RequestError::Ignored);
  mailbox().~Mailbox();
}

bool ActorCell::close_mailbox() { return mailbox().close(); }

void ActorCell::set_mailbox_capacity(std::size_t capacity) { mailbox().set_capacity(capacity); }

const std::shared_ptr<const std::string>& ActorCell::key_for_dumps() {
  if (!dump_key_made_) {
    dump_key_made_ = true;
    if (has_key()) dump_key_ = std::make_shared<const std::string>(key_text());
  }
  return dump_key_;
}

ActorMeta ActorCell::meta() const { return ActorMeta{group_->name(), key_text()}; }

void ActorCell::notify() {
  if (external_) {
    {
      std::lock_guard lock(ext_mu_);
      ++ext_signals_;
    }
    ext_cv_.notify_all();
    return;
  }
  // Every notification of a live actor is a read-modify-write of sched_, even one that finds the
  // actor already notified: the worker moves the state to Running with an RMW before it polls
  // (run_cell), so either that RMW reads from this one — and the poll sees the message this
  // sender queued before notifying — or this one comes after it and finds Running. A plain load
  // here would let the poll miss a message still being linked while this sender, seeing an old
  // RunningNotified or Scheduled, left it to a poll that had already looked: the actor would go
  // idle with the message in its mailbox.
  SchedState s = sched_.load(std::memory_order_relaxed);
  for (;;) {
    switch (s) {
      case SchedState::Idle:
        if (sched_.compare_exchange_weak(s, SchedState::Scheduled, std::memory_order_acq_rel)) {
          assert(resume_point_ && "notified an actor that is not suspended");
          group_->system().scheduler().schedule(this);
          return;
        }
        break;
      case SchedState::Running:
        if (sched_.compare_exchange_weak(s, SchedState::RunningNotified, std::memory_order_acq_rel)) return;
        break;
      case SchedState::Scheduled:
      case SchedState::RunningNotified:
        // It will poll anyway, after an RMW that reads from this one or a later one.
        if (sched_.compare_exchange_weak(s, s, std::memory_order_acq_rel)) return;
        break;
      case SchedState::Dead:
        return;  // never again
    }
  }
}

bool ActorCell::request_kill(std::string reason) {
  {
    std::lock_guard lock(status_mu_);
    if (kill_requested_.load(std::memory_order_relaxed)) return false;
    kill_reason_ = std::move(reason);
    kill_requested_.store(true, std::memory_order_release);
  }
  notify();
  return true;
}

std::string ActorCell::kill_reason() const {
  std::lock_guard lock(status_mu_);
  return kill_reason_;
}

bool ActorCell::wait_external(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(ext_mu_);
  bool signalled = ext_cv_.wait_until(lock, deadline, [&] { return ext_signals_ != ext_seen_; });
  ext_seen_ = ext_signals_;
  return signalled;
}

std::uint64_t ActorCell::external_signals() {
  std::lock_guard lock(ext_mu_);
  return ext_signals_;
}

bool ActorCell::wait_external_after(std::uint64_t seen, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(ext_mu_);
  return ext_cv_.wait_until(lock, deadline, [&] { return ext_signals_ != seen; });
}

void ActorCell::set_status(ActorStatus status) {
  if (status == status_) return;
  if (auto& telemetry = group_->telemetry(); telemetry.active()) {
    telemetry.on_status(*this, status_.kind(), status.kind());
  }
  {
    std::lock_guard lock(status_mu_);
    status_ = std::move(status);
  }
  group_->system().report_status(*this, status_);
}

void ActorCell::begin_lifecycle(ActorStartInfo info) {
  start_info_ = info;
  restart_override_.reset();
  failure_.clear();
  seen_recv_ = false;
  sources_first_ = false;
  yield_requested_ = false;
  poll_fn_ = nullptr;
  poll_arg_ = nullptr;
  config_ = group_->current_config();
  std::lock_guard lock(status_mu_);
  status_ = ActorStatus::INITIALIZING;  // reported by start_actor
}

void ActorCell::settle_abandoned(const RequestError& error) {
  if (abandoned_.empty()) return;
  // The answer this actor gave by failing (or by dropping the token) is a response it sent.
  const bool observed = t_current_actor == this;
  for (auto& state : std::exchange(abandoned_, {})) {
    if (observed) observe_error_sent(*state, error, trace_id_);
    state->fail(error);
  }
}

void abandon_answer(std::shared_ptr<RequestStateBase> state, RequestError error) noexcept {
  // Destroyed while an exception unwinds an actor's handler: whether that is the actor failing
  // or a handler that catches its own exception is known only later, so the cell keeps the state.
  if (std::uncaught_exceptions() > 0 && t_current_actor != nullptr) {
    t_current_actor->keep_abandoned(std::move(state));
    return;
  }
  state->fail(std::move(error));
}

PopResult ActorCell::take_next(Envelope& out) {
  // Asking for the next message means the actor survived whatever unwound before.
  if (!abandoned_.empty()) settle_abandoned(RequestError::Ignored);
  if (!seen_recv_) {
    seen_recv_ = true;
    if (status_.kind() == ActorStatusKind::Initializing) set_status(ActorStatus::NORMAL);
  }
  // Every message handed to the actor, from the mailbox or a source, is observed the same way.
  // Both forced inline: `received` runs for every message (a load and a branch per observer when
  // they are off), `from_source` whenever the mailbox runs dry (a check that there are no sources).
  auto received = [&]() __attribute__((always_inline)) {
    EnvelopeAccess::mark_received(out);
    trace_id_ = out.trace_id();
    observe_delivered(*this, out);
  };
  auto from_source = [&]() __attribute__((always_inline)) {
    if (sources_.empty() || !sources_.poll(*this, out)) return false;
    sources_first_ = false;
    received();
    return true;
  };
  for (;;) {
    if (sources_first_ && from_source()) return PopResult::Item;
    const PopResult result = mailbox().pop(out);
    if (result == PopResult::Closed) {
      end_handling();
      if (!status_.is_finished() && status_.kind() != ActorStatusKind::Terminating)
        set_status(ActorStatus::TERMINATING);
      return result;
    }
    if (result == PopResult::Empty) {
      if (!sources_first_ && from_source()) return PopResult::Item;
      end_handling();
      return result;
    }
    sources_first_ = !sources_.empty();
    received();
    if (!out.vtable().is_system) return result;

    // The runtime's share of the mailbox: these never reach user code, or reach it transformed.
    if (out.is<Ping>()) {
      out.take_token<Ping>().respond(Unit{});
      continue;
    }
    if (out.is<UpdateConfig>()) {
      config_ = group_->current_config();
      out = EnvelopeAccess::make_unqueued(ConfigUpdated{}, out.sender(), out.trace_id());
      EnvelopeAccess::mark_received(out);
      return result;
    }
    if (const auto* terminate = out.get<Terminate>()) {
      if (terminate->force_close || !group_->traits().termination.is_manual()) {
        mailbox().close();
        continue;
      }
      set_status(ActorStatus::TERMINATING);  // TerminationPolicy::manually: the actor decides when
    }
    return result;
  }
}

void ActorCell::end_handling() {
  if (auto& telemetry = group_->telemetry(); telemetry_.handling != nullptr && telemetry.active()) {
    telemetry.on_receive(*this, nullptr, {});
  }
}

SourceSet& cell_sources(ActorCell& cell) { return cell.sources(); }

RouteCache* current_route_cache() noexcept {
  ActorCell* cell = t_current_actor;
  return cell != nullptr ? &cell->route_cache_ : nullptr;
}

void Waker::wake() const {
  if (cell_) cell_->notify();
}

}  // namespace elfin::detail
