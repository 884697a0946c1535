#include "supervision/status_subscriptions.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/messages.hpp>

namespace elfin::detail {

namespace {

void send_report(SystemCore& system, Addr from, Addr to, const ActorCell& cell, const ActorStatus& status,
                 bool& delivered) {
  ActorMeta meta = cell.meta();
  ActorStatusReport report{std::move(meta.group), std::move(meta.key), cell.addr().raw(), status.kind(),
                           status.details()};
  SendOp op{system, to, Envelope::make(std::move(report), from, TraceId::generate()), SendMode::Unbounded};
  std::ignore = op.run(nullptr);
  delivered = op.result().ok();
}

}  // namespace

void StatusSubscriptions::subscribe(SystemCore& system, Addr from, Addr subscriber,
                                    const std::function<void(const std::function<void(ActorCell&)>&)>& for_each_actor) {
  // Reports go to an actor; a group address could route a report back into this group while its
  // subscribers' lock is held.
  if (subscriber.is_null() || subscriber.is_group()) return;
  std::lock_guard lock(mu_);
  if (std::find(subscribers_.begin(), subscribers_.end(), subscriber) == subscribers_.end()) {
    subscribers_.push_back(subscriber);
  }
  has_subscribers_.store(true, std::memory_order_seq_cst);
  // The snapshot is read and sent under mu_, which every change report takes too: a change that
  // lands after our read is reported after our snapshot, never before it.
  std::vector<std::pair<std::shared_ptr<ActorCell>, ActorStatus>> snapshot;
  for_each_actor([&](ActorCell& cell) { snapshot.emplace_back(cell.shared_from_this(), cell.reported_status()); });
  bool delivered = true;
  for (const auto& [cell, status] : snapshot) {
    if (delivered) send_report(system, from, subscriber, *cell, status, delivered);
  }
  if (!delivered) std::erase(subscribers_, subscriber);
}

void StatusSubscriptions::publish(SystemCore& system, Addr from, const ActorCell& cell, const ActorStatus& status) {
  // No change is missed by a subscriber that arrives concurrently: the owner wrote the status
  // (under the cell's lock) before this seq_cst load; the subscriber stores the flag (seq_cst) and
  // then reads the status under the same lock. If this load sees false, it precedes the store in
  // the seq_cst order, so the subscriber's locked read comes after our locked write and its
  // snapshot already holds this status.
  if (!has_subscribers_.load(std::memory_order_seq_cst)) return;
  std::lock_guard lock(mu_);
  std::erase_if(subscribers_, [&](Addr to) {
    bool delivered = true;
    send_report(system, from, to, cell, status, delivered);
    return !delivered;
  });
}

}  // namespace elfin::detail
