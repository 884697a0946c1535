// The front's blueprint: one actor, restarted after a failure (an invalid config) with backoff.
// Requests in flight when it fails are answered Failed by the runtime; clients retry.
#include <chrono>
#include <string>
#include <tuple>

#include <elfin/actor_group.hpp>
#include <elfin/actors/kv.hpp>
#include <elfin/map_router.hpp>
#include <elfin/messages.hpp>
#include <elfin/restart_policy.hpp>
#include <elfin/singleton.hpp>
#include <elfin/telemetry.hpp>

#include "actor.hpp"

namespace elfin::actors::kv {

Blueprint blueprint() {
  metrics::describe("elfin_kv_forwarded_total",
                    "Attempts of client requests the front sent to another pod's front (the shard's leader, or a "
                    "replica to try, is there)");
  return ActorGroup()
      .config<Config>()
      // Room for many clients' requests and other fronts' shard requests at once.
      .mailbox_capacity(1024)
      // ValidateConfig reaches the actor (groups opt in), so a start or reload is checked beyond types.
      .router(MapRouter<Singleton>([](const Envelope& e) {
        if (e.is<Terminate>() || e.is<Ping>()) return Outcome<Singleton>::GentleUnicast(Singleton{});
        return Outcome<Singleton>::Unicast(Singleton{});
      }))
      .restart_policy(RestartPolicy::on_failure(RestartParams{std::chrono::milliseconds{100}, std::chrono::seconds{5}}))
      .exec([](internal::FrontContext ctx) { return internal::exec(ctx); });
}

void register_blueprints(BlueprintRegistry& registry) {
  std::ignore = registry.add(std::string(kBlueprintName), blueprint(),
                             "the KV front: protocols/kv requests to the shard's partition leader");
  std::ignore = registry.add_selector(std::string(kNodeSelectorName), shard_request_node,
                                      "a kv.ShardRequest to the node it names (`node`)");
}

}  // namespace elfin::actors::kv
