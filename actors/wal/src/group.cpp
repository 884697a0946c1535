// The WAL group's blueprint: the router, the termination policy that lets each WAL actor flush
// before it closes, and the file layer each actor gets.
#include <string>
#include <tuple>

#include <elfin/actor_group.hpp>
#include <elfin/actors/wal.hpp>

#include "actor.hpp"
#include "router.hpp"

namespace elfin::actors::wal {

Blueprint blueprint(Options options) {
  return ActorGroup()
      .config<Config>()
      .router(internal::router())
      // Terminate reaches the actor, which writes and answers what it admitted, then closes.
      .termination_policy(TerminationPolicy::manually())
      // A failed WAL (fsync error) stays up answering WalFailed; only an exception (a bug) ends
      // an actor, and it is not restarted blindly: its partitions would need to recover too.
      .restart_policy(RestartPolicy::never())
      .exec([file_system = std::move(options.file_system)](internal::WalContext ctx) {
        return internal::exec(ctx, file_system);
      });
}

void register_blueprints(BlueprintRegistry& registry) {
  std::ignore = registry.add(std::string(kBlueprintName), blueprint(),
                             "WAL actors: a write-ahead log shared by many partitions, group commit");
}

}  // namespace elfin::actors::wal
