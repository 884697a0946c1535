#include "actor/lifecycle.hpp"

#include <fmt/format.h>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/internal/mailbox.hpp>

#include "observers/runtime_log.hpp"
#include "supervision/group_restarts.hpp"
#include "system/system_core.hpp"

namespace elfin::detail {

void close_for_good(ActorCell& cell) {
  GroupRuntime& group = cell.group();
  // Out of the group's map before the mailbox closes: a message routed to this key from now on
  // starts a successor instead of finding a closed mailbox, and one that found it closed in
  // between gets the successor from SendOp.
  group.on_finished(cell);
  cell.mailbox().close();
  cell.sched_.store(SchedState::Dead, std::memory_order_release);
  // What is still queued was meant for this incarnation: dropped, a request among it failing.
  std::ignore = cell.mailbox().drain();
  cell.sources().clear();
  cell.task_ = {};
  cell.route_cache_.clear();  // the frame (and every send that borrowed from it) is gone
}

void register_actor(SystemCore& system, const std::shared_ptr<ActorCell>& cell, std::uint8_t group_no) {
  system.address_book().insert(cell, system.node_no(), group_no);
  system.termination().actor_registered();
}

void start_actor(ActorCell& cell) {
  SystemCore& system = cell.group().system();
  cell.suspend(cell.task_.handle(), nullptr, nullptr);
  cell.set_trace_id(TraceId::generate());  // every lifecycle, restarts too, starts a new trace
  cell.set_started_at(system.timers().now());
  // A new actor is Initializing until its first recv; report that before it can run and move on.
  system.report_status(cell, cell.status());
  if (auto& telemetry = cell.group().telemetry(); telemetry.active())
    telemetry.on_status(cell, {}, cell.status().kind());
  // Until now the cell was Dead, so senders that found it only queued their messages. The release
  // store publishes the state above to whichever notify (ours or a sender's) schedules it.
  cell.sched_.store(SchedState::Idle, std::memory_order_release);
  cell.notify();
}

void forget_actor(ActorCell& cell) {
  close_for_good(cell);
  unregister_actor(cell.group().system(), cell);
}

void unregister_actor(SystemCore& system, ActorCell& cell) {
  system.address_book().remove(cell.addr());
  system.termination().actor_finished(cell);
}

bool kill_actor(SystemCore& system, Addr actor, std::string reason) {
  if (actor.is_null() || actor.is_group() || actor.node_no() != system.node_no()) return false;
  auto cell = system.address_book().find(actor);
  if (!cell || cell->is_external()) return false;
  return cell->request_kill(std::move(reason));
}

void end_killed(ActorCell& cell) {
  auto keep_alive = cell.shared_from_this();
  close_for_good(cell);
  cell.settle_abandoned(RequestError::Ignored);
  cell.set_status(ActorStatus::TERMINATED.with_details("killed: " + cell.kill_reason()));
  GroupRuntime& group = cell.group();
  if (auto& telemetry = group.telemetry(); telemetry.active()) telemetry.on_status(cell, cell.status().kind(), {});
  unregister_actor(group.system(), cell);
}

void finish_actor(ActorCell& cell) {
  auto keep_alive = cell.shared_from_this();
  ActorStatus final_status = ActorStatus::TERMINATED;
  if (auto error = cell.task_.exception()) {
    std::string reason = describe_exception(error);
    cell.settle_abandoned(RequestError{RequestError::Failed, fmt::format("{}: {}", kFailedWhileHandling, reason)});
    final_status = ActorStatus::FAILED.with_details(std::move(reason));
  } else if (!cell.failure_.empty()) {
    final_status = ActorStatus::FAILED.with_details(cell.failure_);
  }
  cell.settle_abandoned(RequestError::Ignored);
  GroupRuntime& group = cell.group();
  if (auto delay = group.restarts().delay(cell, final_status)) {
    // Restarting: the cell keeps its place in the group and its mailbox, so what is sent to it
    // while it waits is handled by its successor (an actor that closed its mailbox gets it
    // reopened). Nothing runs it until the relaunch makes it Idle again.
    cell.sched_.store(SchedState::Dead, std::memory_order_release);
    cell.sources().clear();  // sources die with the actor that attached them, restarted or not
    cell.task_ = {};
    cell.route_cache_.clear();
    cell.set_status(std::move(final_status));
    // Waiting for its restart, it counts as restarting, not as active; start_actor counts it again.
    if (auto& telemetry = group.telemetry(); telemetry.active()) telemetry.on_status(cell, cell.status().kind(), {});
    cell.mailbox().reopen();
    if (group.restarts().schedule(keep_alive, *delay)) return;
    forget_actor(cell);  // the group began terminating meanwhile
    return;
  }
  close_for_good(cell);
  cell.set_status(std::move(final_status));
  if (auto& telemetry = group.telemetry(); telemetry.active()) telemetry.on_status(cell, cell.status().kind(), {});
  unregister_actor(group.system(), cell);
}

}  // namespace elfin::detail
