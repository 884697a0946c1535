// elfin_sharding_test_node: the `elfin` command with a sharded service of its own, for the
// multi-process sharding tests (`elfin_sharding_test_node run pod.toml`). Besides everything the
// `elfin` binary mounts it has:
//
//   sharding.pod         the pod's sharding actor, sharing its cache with the groups below
//   test.counter_entities  the entity group: one counter per entity id, on the pod owning its shard
//   test.counters        the front: a remote group over the pod nodes (1 to 4) whose node
//                        selector is owner_node, so a counter's messages go to its owner's node
//   test.traffic         a client that asks every counter in turn, forever, through
//                        request_entity, and prints how a sweep went ("traffic: sweep N: K ok,
//                        F failed"): every sweep with a failure, a clean one at most every 100 ms
//   test.scheduler       a cluster singleton (named "scheduler"): runs on the pod owning its
//                        shard, prints "test scheduler started on <pod>" and "... stopped on <pod>"
//
// The owner token: each counter (and the scheduler, as "scheduler"), when it starts, takes an exclusive flock(2) on
// `<owner_dir>/<id>.owner` and holds it until it ends. The kernel drops the lock when the holder's
// process dies (kill -9 included), so the lock is held exactly while some process runs that
// counter. A start that finds the lock taken means another counter with that id is live — on this
// pod or another — and appends a line to `<owner_dir>/violations`; the tests require that file to
// stay absent.
//
// The cluster's shard function is fixed here (kShardFunction); the tests' manager and pods use it.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/sharding.hpp>
#include <elfin/actors/sharding/entities.hpp>
#include <elfin/actors/sharding/owner_node.hpp>
#include <elfin/actors/sharding/request_entity.hpp>
#include <elfin/actors/sharding/singleton.hpp>
#include <elfin/cli.hpp>
#include <elfin/elfin.hpp>
#include <elfin/network/network.hpp>

namespace {

using elfin::Context;
using elfin::Task;
namespace sharding = elfin::actors::sharding;

constexpr const char* kShardFunction = "jump-xxh64/1:24";

struct CounterState {
  std::uint64_t count = 0;  ///< adds this incarnation of the counter handled
  std::string pod;          ///< the pod it runs on
  ELFIN_PART(count, pod);
};

struct CounterAdd {
  std::string id;
  ELFIN_REQUEST(test_counters, CounterAdd, CounterState, id);
};

struct CounterConfig {
  std::string owner_dir;
  ELFIN_CONFIG(owner_dir);
};

struct TrafficConfig {
  std::uint32_t entities = 48;
  std::chrono::milliseconds send_timeout{10'000};
  ELFIN_CONFIG(entities, send_timeout);
};

struct SchedulerConfig {
  std::string owner_dir;
  ELFIN_CONFIG(owner_dir);
};

struct Resume {
  ELFIN_MESSAGE(test_counters, Resume);
};

std::optional<std::string> counter_id(const elfin::Envelope& e) {
  if (const auto* add = e.get<CounterAdd>()) return add->id;
  return std::nullopt;
}

/// The owner token of one counter: an exclusive flock held for the counter's life.
class OwnerToken {
 public:
  OwnerToken(const std::string& dir, const std::string& id, const std::string& pod) {
    const std::string path = fmt::format("{}/{}.owner", dir, id);
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      violation(dir,
                fmt::format("{} on {}: cannot open {}: {}", id, pod, path, std::generic_category().message(errno)));
      return;
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      violation(dir, fmt::format("{} started on {} while another live owner holds its token ({})", id, pod,
                                 std::generic_category().message(errno)));
    }
  }
  OwnerToken(const OwnerToken&) = delete;
  OwnerToken& operator=(const OwnerToken&) = delete;
  ~OwnerToken() {
    if (fd_ >= 0) ::close(fd_);  // drops the lock
  }

 private:
  static void violation(const std::string& dir, const std::string& line) {
    elfin::log::error("owner token: {}", line);
    const std::string path = dir + "/violations";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    const std::string text = line + "\n";
    std::ignore = ::write(fd, text.data(), text.size());
    ::close(fd);
  }
  int fd_ = -1;
};

Task<> counter(Context<CounterConfig, std::string> ctx, std::shared_ptr<sharding::AssignmentCache> cache) {
  const std::string pod = cache->self().address;
  const OwnerToken token(ctx.config().owner_dir, ctx.key(), pod);
  elfin::log::info("test counter {} started on {}", ctx.key(), pod);
  CounterState state{0, pod};
  while (auto envelope = co_await ctx.recv()) {
    co_await elfin::handle(*envelope, [&](const CounterAdd&, elfin::ResponseToken<CounterAdd> reply) {
      ++state.count;
      ctx.respond(std::move(reply), state);
    });
  }
}

Task<> scheduler(Context<SchedulerConfig> ctx, std::shared_ptr<sharding::AssignmentCache> cache) {
  const std::string pod = cache->self().address;
  const OwnerToken token(ctx.config().owner_dir, "scheduler", pod);
  elfin::log::info("test scheduler started on {}", pod);
  while (co_await ctx.recv()) {
  }
  elfin::log::info("test scheduler stopped on {}", pod);
}

/// Waits 100 ms (a Delay's message); false when the mailbox closed meanwhile (the node stops).
Task<bool> pause(Context<TrafficConfig> ctx) {
  ctx.attach(elfin::Delay(std::chrono::milliseconds{100}, Resume{}));
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Resume>()) co_return true;
  }
  co_return false;
}

Task<> traffic(Context<TrafficConfig> ctx, std::shared_ptr<sharding::AssignmentCache> cache) {
  while (cache->endpoint() == 0 || !cache->ready()) {
    if (!co_await pause(ctx)) co_return;
  }
  auto printed = std::chrono::steady_clock::time_point{};
  for (std::uint64_t sweep = 1;; ++sweep) {
    std::uint32_t ok = 0;
    std::uint32_t failed = 0;
    std::string last_error;
    for (std::uint32_t i = 0; i < ctx.config().entities; ++i) {
      if (auto next = ctx.try_recv(); !next && next.error() == elfin::TryRecvError::Closed) co_return;
      sharding::EntitySendOptions options;
      options.pod = elfin::Addr{cache->endpoint()};
      options.send_timeout = ctx.config().send_timeout;
      auto answer = co_await sharding::request_entity(ctx, CounterAdd{fmt::format("e-{}", i)}, options);
      if (answer) {
        ++ok;
      } else {
        ++failed;
        last_error = fmt::format("e-{}: {}", i, answer.error());
      }
    }
    const auto now = std::chrono::steady_clock::now();
    if (failed > 0 || now - printed >= std::chrono::milliseconds{100}) {
      printed = now;
      elfin::log::info("traffic: sweep {}: {} ok, {} failed{}", sweep, ok, failed,
                       last_error.empty() ? "" : " (last: " + last_error + ")");
    }
    if (failed > 0 && !co_await pause(ctx)) co_return;
  }
}

elfin::Outcome<elfin::Singleton> singleton_route(const elfin::Envelope& e) {
  if (e.is<elfin::Ping>() || e.is<elfin::Terminate>()) return elfin::Outcome<elfin::Singleton>::GentleUnicast({});
  return elfin::Outcome<elfin::Singleton>::Unicast({});
}

}  // namespace

int main(int argc, char** argv) {
  auto cache = std::make_shared<sharding::AssignmentCache>();
  elfin::BlueprintRegistry registry;
  elfin::cli::register_framework(registry);
  elfin::actors::shard_manager::register_blueprints(registry);
  std::ignore = registry.add("sharding.pod", sharding::pod({.cache = cache}), "the pod's sharding actor");

  sharding::EntityOptions counters;
  counters.cache = cache;
  counters.shard_function = kShardFunction;
  counters.entity_id = counter_id;
  std::ignore = registry.add(
      "test.counter_entities",
      sharding::entities<CounterConfig>(
          std::move(counters), [cache](Context<CounterConfig, std::string> ctx) { return counter(ctx, cache); }),
      "one counter per entity id, on the pod owning its shard");

  sharding::SingletonOptions scheduler_options;
  scheduler_options.cache = cache;
  scheduler_options.name = "scheduler";
  scheduler_options.shard_function = kShardFunction;
  std::ignore = registry.add(
      "test.scheduler",
      sharding::singleton<SchedulerConfig>(std::move(scheduler_options),
                                           [cache](Context<SchedulerConfig> ctx) { return scheduler(ctx, cache); }),
      "a cluster singleton, on the pod owning the shard of \"scheduler\"");

  elfin::network::RemoteGroupOptions front;
  front.nodes = {1, 2, 3, 4};
  front.remote_name = "test.counter_entities";
  front.pick = sharding::owner_node(cache, kShardFunction, counter_id);
  std::ignore = registry.add("test.counters", elfin::network::remote_group(std::move(front)),
                             "the counters, on whichever pod node owns each");

  std::ignore = registry.add("test.traffic",
                             elfin::ActorGroup()
                                 .config<TrafficConfig>()
                                 .router(elfin::MapRouter<elfin::Singleton>(singleton_route))
                                 .exec([cache](Context<TrafficConfig> ctx) { return traffic(ctx, cache); }),
                             "asks every counter in turn, forever");
  return elfin::cli::main(argc, argv, registry);
}
