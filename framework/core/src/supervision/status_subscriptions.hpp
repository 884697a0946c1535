// StatusSubscriptions: who of the actors subscribed to a group's actor statuses (elfo's status
// subscription), and the reports they are sent — each subscriber first gets every actor's current
// status, then every change.
//
// Reports go out as ActorStatusReport messages from the group's address, sent unbounded; a
// subscriber whose report reaches no mailbox is dropped.
//
// Thread safety: `subscribe` and `publish` from any thread. A change published concurrently with a
// subscription is never missed (see `publish`).
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <vector>

#include <elfin/actor_status.hpp>
#include <elfin/addr.hpp>

namespace elfin::detail {

class ActorCell;
class SystemCore;

class StatusSubscriptions {
 public:
  /// Registers `subscriber` (an actor; a group address is ignored) and sends it the current status
  /// of every actor `for_each_actor` visits, reports coming from `from`.
  void subscribe(SystemCore& system, Addr from, Addr subscriber,
                 const std::function<void(const std::function<void(ActorCell&)>&)>& for_each_actor);
  /// Tells the subscribers about a status change of `cell`. Any thread (the cell's owner).
  void publish(SystemCore& system, Addr from, const ActorCell& cell, const ActorStatus& status);

 private:
  // `has_subscribers_` lets status changes skip the lock while nobody listens; see `publish` for
  // why no change is missed.
  std::mutex mu_;
  std::vector<Addr> subscribers_;  // guarded by mu_
  std::atomic<bool> has_subscribers_{false};
};

}  // namespace elfin::detail
