// The partition group's blueprint: one actor per partition, restarted after a failure (a WAL
// error, a damaged snapshot) with backoff; a restarted actor recovers from disk again.
#include <chrono>
#include <string>
#include <tuple>

#include <elfin/actor_group.hpp>
#include <elfin/actors/partition.hpp>
#include <elfin/restart_policy.hpp>
#include <elfin/telemetry.hpp>

#include "actor.hpp"
#include "router.hpp"

namespace elfin::actors::partition {

Blueprint blueprint(Options options) {
  metrics::describe("elfin_partition_leaderless_ticks_total",
                    "Raft ticks of voter replicas that knew no leader (per second: tick rate x such replicas)");
  return ActorGroup()
      .config<Config>()
      .router(internal::router())
      .restart_policy(RestartPolicy::on_failure(RestartParams{std::chrono::milliseconds{100}, std::chrono::seconds{5}}))
      .exec([factory = std::move(options.state_machine)](internal::PartitionContext ctx) {
        return internal::exec(ctx, factory);
      });
}

void register_blueprints(BlueprintRegistry& registry) {
  std::ignore = registry.add(std::string(kBlueprintName), blueprint(),
                             "partition actors: one Raft group member per partition (KV state machines), over the WAL");
  std::ignore = registry.add_selector(std::string(kPeerSelectorName), peer_node,
                                      "a RaftMessage to the node it is addressed to (`to`)");
}

}  // namespace elfin::actors::partition
