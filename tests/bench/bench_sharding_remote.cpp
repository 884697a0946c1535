// bench_sharding_remote: entity messages to entities on another node, over loopback TCP.
//
//   remote_entity_send (family remote_entity_vs_routed)   a driver on node 1 `co_await ctx.send`s
//                      Add messages to 64 entities whose shards pod-2 on node 2 owns (node 2 is
//                      this binary started again with `--serve PORT`: its own process), through
//                      `counters`, a remote group whose node selector is actors::sharding::owner_node
//                      over node 1's assignment cache (the map names pod-2 the owner of all 1024
//                      shards of jump-xxh64/1:1024); node 2's entity group (`entities`, its pod
//                      owning every shard) checks ownership again and delivers. Then it asks each
//                      entity its count the same way (the sum must be the number sent). The
//                      `off_*` columns: the same stream through a plain remote group (nodes = {2})
//                      to a group on node 2 keyed by the id (MapRouter<std::string>) — a plain
//                      remote routed send. ops = messages
//
// No CAF peer.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/sharding/assignment_cache.hpp>
#include <elfin/actors/sharding/entities.hpp>
#include <elfin/actors/sharding/owner_node.hpp>
#include <elfin/elfin.hpp>
#include <elfin/hashing/shard_function.hpp>
#include <elfin/network/network.hpp>
#include <elfin/protocols/sharding.hpp>

#include "bench_common.hpp"
#include "bench_counter_entity.hpp"

namespace {

using elfin::ActorGroup;
using elfin::Addr;
using elfin::Context;
using elfin::Envelope;
using elfin::NoConfig;
using elfin::Task;
using elfin::Topology;
using elfin_bench::Figure;
using elfin_bench::Options;
using Clock = std::chrono::steady_clock;
namespace ps = elfin::protocols::sharding;
namespace sharding = elfin::actors::sharding;

constexpr std::string_view kBench = "sharding_remote";
constexpr const char* kFunction = "jump-xxh64/1:1024";

using elfin_bench::Add;
using elfin_bench::Count;
using elfin_bench::counter_exec;
using elfin_bench::counter_id;

elfin::MapRouter<std::string> plain_router() {
  return elfin::MapRouter<std::string>([](const Envelope& e) {
    auto id = counter_id(e);
    if (!id) return elfin::Outcome<std::string>::Default();
    return elfin::Outcome<std::string>::Unicast(std::move(*id));
  });
}

/// A pod's cache. `owner` 2: pod-2 (on node 2) owns every shard; `self` is this node's pod.
std::shared_ptr<sharding::AssignmentCache> cache_for(std::uint16_t self_node) {
  auto function = *elfin::hashing::ShardFunction::parse(kFunction);
  auto cache = std::make_shared<sharding::AssignmentCache>();
  const ps::PodRef one{"bench:1", 1};
  const ps::PodRef two{"bench:2", 2};
  const std::uint64_t at1 = Addr::make(1, 1, 0, 1).raw();
  const std::uint64_t at2 = Addr::make(2, 1, 0, 1).raw();
  cache->set_self(self_node == 1 ? one : two, self_node == 1 ? at1 : at2);
  ps::Assignments map;
  map.epoch = 1;
  map.shard_function = kFunction;
  map.first_shard = function.first_shard();
  map.pods = {ps::PodEntry{one, at1, "1.0.0"}, ps::PodEntry{two, at2, "1.0.0"}};
  map.owners.assign(function.shard_count(), 1);
  if (!cache->apply(map)) throw std::runtime_error("cannot fill the cache");
  if (self_node == 2) {
    std::vector<std::uint32_t> shards;
    for (std::uint32_t s = function.first_shard(); s <= function.last_shard(); ++s) shards.push_back(s);
    if (!cache->assign(two, shards, 1)) throw std::runtime_error("cannot assign the shards");
  }
  return cache;
}

std::string network_config(std::string_view listen, std::string_view dial) {
  return fmt::format(R"([system.network]
listen = [{}]
discovery.predefined = [{}]
discovery.attempt_interval = "100ms"
secret = "bench"
)",
                     listen.empty() ? "" : fmt::format("\"tcp://{}\"", listen),
                     dial.empty() ? "" : fmt::format("\"tcp://{}\"", dial));
}

/// `--serve PORT`: node 2 (pod-2's entity group and the plain group) until stdin closes.
int serve(std::uint16_t port) {
  Topology topology;
  topology.local("system.network").mount(elfin::network::blueprint());
  sharding::EntityOptions options;
  options.cache = cache_for(2);
  options.shard_function = kFunction;
  options.entity_id = counter_id;
  topology.local("counters.local").mount(sharding::entities(std::move(options), counter_exec));
  topology.local("counters.plain").mount(ActorGroup().router(plain_router()).exec(counter_exec));
  elfin::StartOptions start;
  start.node_no = 2;
  start.workers = 2;
  start.config_toml = network_config(fmt::format("127.0.0.1:{}", port), "");
  return elfin_bench::serve_until_stdin_closes(std::move(topology), std::move(start), "bench_sharding_remote");
}

std::runtime_error os_error(std::string_view what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::system_category().message(errno)));
}

/// Node 2, started once for all runs and stopped with the benchmark.
class ServerProcess {
 public:
  ServerProcess() {
    port_ = free_port();
    int in[2];
    if (::pipe(in) != 0) throw os_error("pipe");
    pid_ = ::fork();
    if (pid_ < 0) throw os_error("fork");
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::close(in[0]);
      ::close(in[1]);
      const std::string port = std::to_string(port_);
      const std::string self = self_path();
      ::execl(self.c_str(), self.c_str(), "--serve", port.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    stdin_ = in[1];
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess() {
    ::close(stdin_);  // EOF: the server terminates its system and exits
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  [[nodiscard]] std::string address() const { return fmt::format("127.0.0.1:{}", port_); }

 private:
  static std::uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw os_error("socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    auto* as = reinterpret_cast<sockaddr*>(&address);  // the BSD API's types
    if (::bind(fd, as, sizeof address) != 0 || ::getsockname(fd, as, &length) != 0) {
      ::close(fd);
      throw os_error("bind");
    }
    ::close(fd);
    return ntohs(address.sin_port);  // a small race until node 2 binds it; the bench then fails loudly
  }
  static std::string self_path() {
    std::array<char, 4096> path{};
    const auto n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
    if (n <= 0) throw os_error("readlink /proc/self/exe");
    return std::string(path.data(), static_cast<std::size_t>(n));
  }
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
  int stdin_ = -1;
};

ServerProcess& server() {
  static ServerProcess process;  // the benchmark's lifetime; started by the first run
  return process;
}

struct StreamConfig {
  std::uint64_t messages = 0;
  std::uint32_t keys = 64;
  ELFIN_CONFIG(messages, keys);
};

Task<> stream_driver(Context<StreamConfig> ctx) {
  const auto cfg = ctx.config();
  std::vector<std::string> ids;
  ids.reserve(cfg.keys);
  for (std::uint32_t i = 0; i < cfg.keys; ++i) ids.push_back(fmt::format("cart-{}", i));
  // Untimed: node 2 connected (a request fails at once until it is) and every counter started.
  const auto deadline = Clock::now() + std::chrono::seconds{30};
  std::uint64_t before = 0;  // node 2's counters live across runs: each run counts its own
  for (const auto& id : ids) {
    while (true) {
      auto started = co_await ctx.request(Count{id});
      if (started) {
        before += *started;
        break;
      }
      if (Clock::now() > deadline) {
        co_return elfin_bench::report_error(elfin_bench::error_text("driver: first Count", started.error()));
      }
      co_await ctx.yield_now();
    }
  }
  const auto t0 = Clock::now();
  for (std::uint64_t i = 0; i < cfg.messages; ++i) {
    auto sent = co_await ctx.send(Add{ids[i % ids.size()]});
    if (!sent) co_return elfin_bench::report_error(elfin_bench::error_text("driver: Add", sent.error()));
  }
  std::uint64_t total = 0;
  for (const auto& id : ids) {  // per-sender order: each answer comes after that entity's Adds
    auto count = co_await ctx.request(Count{id});
    if (!count) co_return elfin_bench::report_error(elfin_bench::error_text("driver: Count", count.error()));
    total += *count;
  }
  const auto t1 = Clock::now();
  if (total - before != cfg.messages) {
    co_return elfin_bench::report_error(fmt::format("counted {} of {} Adds", total - before, cfg.messages));
  }
  elfin_bench::report({elfin_bench::seconds_between(t0, t1), cfg.messages});
  while (co_await ctx.recv()) {
  }
}

Figure remote_stream(bool entities, std::uint64_t messages) {
  Topology topology;
  topology.local("system.network").mount(elfin::network::blueprint());
  auto driver = topology.local("driver");
  auto counters = topology.local("counters");
  driver.route_to(counters, elfin::filters::messages<Add, Count>());
  driver.mount(ActorGroup().config<StreamConfig>().exec(stream_driver)).entrypoint();
  elfin::network::RemoteGroupOptions front;
  front.nodes = {1, 2};
  if (entities) {
    front.remote_name = "counters.local";
    front.pick = sharding::owner_node(cache_for(1), kFunction, counter_id);
  } else {
    front.nodes = {2};
    front.remote_name = "counters.plain";
  }
  counters.mount(elfin::network::remote_group(std::move(front)));
  return elfin_bench::run_elfin(
      entities ? "remote_entity_send" : "remote_routed_send", std::move(topology),
      fmt::format("[driver]\nmessages = {}\n", messages) + network_config("", server().address()), 2);
}

std::vector<elfin_bench::Case> cases() {
  std::vector<elfin_bench::Case> out;
  out.push_back({"remote_entity_send", "remote_entity_vs_routed", [](const Options& o) {
                   const std::uint64_t n = o.quick ? 20'000 : 400'000;
                   return elfin_bench::run_overhead_case(
                       kBench, "remote_entity_send", o, [&] { return remote_stream(true, n); },
                       [&] { return remote_stream(false, n); });
                 }});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--serve") {
    return serve(static_cast<std::uint16_t>(std::stoi(argv[2])));
  }
  return elfin_bench::run_main(kBench, cases(), argc, argv);
}
