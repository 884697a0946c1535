// Virtual shards in NoriKV's manner (the sharding study's §4.5) built from an entity group whose
// entity ids are shard numbers: one shard actor per shard, created on first access, each with its
// own state directory `<root>/shard-<id>/`. Checked: shard 0 exists after start-up (started with
// its shard, never passivated); a shard actor is created once however many first messages race,
// and one still being created (its start waits on a gate) blocks no other shard; no other shard
// exists until addressed; a damaged directory fails only its own shard; a graceful
// stop handles every queued request before a shard closes its storage, and nothing is accepted
// after it.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/sharding.hpp>
#include <elfin/actors/sharding/entities.hpp>
#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "../eventually.hpp"
#include "../temp_dir.hpp"

namespace {

using namespace std::chrono_literals;
using elfin::test::eventually;
namespace sharding = elfin::actors::sharding;

struct ShardPut {
  std::uint32_t shard = 0;
  std::string value;
  ELFIN_REQUEST(test_vshards, ShardPut, std::string, shard, value);
};

struct ShardGet {
  std::uint32_t shard = 0;
  ELFIN_REQUEST(test_vshards, ShardGet, std::string, shard);
};

/// Asked by a shard actor while it is created; answered when the test opens the gate.
struct PassGate {
  std::string shard;
  ELFIN_REQUEST(test_vshards, PassGate, elfin::Unit, shard);
};

struct OpenGate {
  ELFIN_MESSAGE(test_vshards, OpenGate);
};

/// What the shard actors did, seen from the test.
class Shards {
 public:
  explicit Shards(std::filesystem::path root) : root_(std::move(root)) {}
  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  [[nodiscard]] std::filesystem::path dir(const std::string& shard) const { return root_ / ("shard-" + shard); }

  void on_created(const std::string& shard) {
    std::lock_guard lock(mutex_);
    ++created_[shard];
  }
  void on_closed(const std::string& shard, std::uint64_t handled) {
    std::lock_guard lock(mutex_);
    closed_[shard].push_back(handled);
  }
  [[nodiscard]] int created(const std::string& shard) {
    std::lock_guard lock(mutex_);
    return created_[shard];
  }
  [[nodiscard]] std::size_t created_total() {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& [shard, count] : created_) n += static_cast<std::size_t>(count);
    return n;
  }
  [[nodiscard]] std::vector<std::uint64_t> closed(const std::string& shard) {
    std::lock_guard lock(mutex_);
    return closed_[shard];
  }
  void gate(std::string shard) {
    std::lock_guard lock(mutex_);
    gated_.insert(std::move(shard));
  }
  void set_gate_addr(elfin::Addr gate) { gate_.store(gate.raw()); }
  [[nodiscard]] elfin::Addr gate_addr() const { return elfin::Addr{gate_.load()}; }
  [[nodiscard]] bool gated(const std::string& shard) {
    std::lock_guard lock(mutex_);
    return gated_.contains(shard);
  }

 private:
  std::filesystem::path root_;
  std::mutex mutex_;
  std::map<std::string, int> created_;
  std::map<std::string, std::vector<std::uint64_t>> closed_;
  std::set<std::string> gated_;
  std::atomic<std::uint64_t> gate_{0};
};

std::string read_value(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return {};
  std::string magic;
  std::string value;
  std::getline(in, magic);
  std::getline(in, value);
  if (magic != "shard-v1") throw std::runtime_error(fmt::format("{}: not a shard file", file.string()));
  return value;
}

void write_value(const std::filesystem::path& file, const std::string& value) {
  std::ofstream out(file, std::ios::trunc);
  out << "shard-v1\n" << value << "\n";
}

/// One shard actor: its state is `<root>/shard-<id>/value`, read when it is created, written on
/// every ShardPut, closed (counted) when it ends.
elfin::Task<> shard_actor(elfin::Context<elfin::NoConfig, std::string> ctx, std::shared_ptr<Shards> shards) {
  const std::string id = ctx.key();
  shards->on_created(id);
  if (shards->gated(id)) std::ignore = co_await ctx.request_to(shards->gate_addr(), PassGate{id});  // a slow creation
  std::filesystem::create_directories(shards->dir(id));
  const auto file = shards->dir(id) / "value";
  std::string value = read_value(file);  // a damaged file fails this shard's actor only
  std::uint64_t handled = 0;
  while (auto envelope = co_await ctx.recv()) {
    co_await elfin::handle(
        *envelope,
        [&](const ShardPut& put, elfin::ResponseToken<ShardPut> token) {
          value = put.value;
          write_value(file, value);
          ++handled;
          ctx.respond(std::move(token), "ok");
        },
        [&](const ShardGet&, elfin::ResponseToken<ShardGet> token) {
          ++handled;
          ctx.respond(std::move(token), value);
        });
  }
  shards->on_closed(id, handled);  // the shard's storage closes here, after its mailbox drained
}

std::optional<std::string> shard_key(const elfin::Envelope& e) {
  if (const auto* put = e.get<ShardPut>()) return std::to_string(put->shard);
  if (const auto* get = e.get<ShardGet>()) return std::to_string(get->shard);
  return std::nullopt;
}

/// A manager, one pod and its shard actors (`shards`), and the gate.
struct VirtualShards {
  elfin::test::TempDir dir;
  std::shared_ptr<Shards> shards = std::make_shared<Shards>(dir.file("data"));
  std::shared_ptr<sharding::AssignmentCache> cache = std::make_shared<sharding::AssignmentCache>();
  std::shared_ptr<sharding::EntityRegistry> registry = std::make_shared<sharding::EntityRegistry>();
  std::unique_ptr<elfin::testing::Proxy> proxy;

  explicit VirtualShards(const std::string& pod_extra = "") {
    elfin::Topology topology;
    auto manager = topology.local("sharding.manager");
    manager.mount(elfin::actors::shard_manager::blueprint());
    auto pod = topology.local("sharding.pod");
    pod.mount(sharding::pod({cache, 7}));
    pod.route_to(manager, elfin::filters::protocol("sharding"));
    auto gate = topology.local("gate");
    gate.mount(elfin::ActorGroup().exec([](elfin::Context<> ctx) -> elfin::Task<> {
      std::vector<elfin::ResponseToken<PassGate>> waiting;
      bool open = false;
      while (auto envelope = co_await ctx.recv()) {
        co_await elfin::handle(
            *envelope,
            [&](const PassGate&, elfin::ResponseToken<PassGate> token) {
              if (open) {
                ctx.respond(std::move(token), elfin::Unit{});
              } else {
                waiting.push_back(std::move(token));
              }
            },
            [&](const OpenGate&) {
              open = true;
              for (auto& token : waiting) ctx.respond(std::move(token), elfin::Unit{});
              waiting.clear();
            });
      }
    }));
    sharding::EntityOptions options;
    options.cache = cache;
    options.shard_function = "jump-xxh64/1:16";
    options.entity_id = shard_key;
    options.registry = registry;
    options.start_with_shard = {"0"};
    topology.local("shards").mount(sharding::entities(
        std::move(options),
        [shards = shards](elfin::Context<elfin::NoConfig, std::string> ctx) { return shard_actor(ctx, shards); }));
    elfin::StartOptions start;
    start.config_toml = fmt::format(R"(
[sharding.manager]
shard_function = "jump-xxh64/1:16"
storage.path = "{}"

[sharding.pod]
address = "pod-1"
shard_function = "jump-xxh64/1:16"
retry_interval = "20ms"
{}
)",
                                    dir.file("shards.state"), pod_extra);
    proxy = std::make_unique<elfin::testing::Proxy>(
        elfin::testing::proxy(std::move(topology), "sharding.manager", std::move(start), {}));
    shards->set_gate_addr(proxy->system().group_addr("gate"));
  }

  elfin::Addr group() { return proxy->system().group_addr("shards"); }
};

}  // namespace

TEST_CASE(
    "sharding pods: virtual shards are created on first access, once under racing first messages, and a slow "
    "creation blocks no other shard",
    "[sharding]") {
  VirtualShards v;
  REQUIRE(eventually([&] { return v.cache->owned().size() == 16; }));
  // Shard 0 exists after start-up, unaddressed; no other shard exists until addressed.
  REQUIRE(eventually([&] { return v.registry->size() == 1; }));
  CHECK(v.registry->token("0"));
  REQUIRE(eventually([&] { return std::filesystem::exists(v.shards->dir("0")); }));
  CHECK(v.shards->created("0") == 1);
  CHECK(v.shards->created_total() == 1);

  // Shard 3's creation waits at the gate; two senders race with its first messages meanwhile.
  v.shards->gate("3");
  auto side = v.proxy->subproxy();
  std::thread racer([&] {
    for (int i = 0; i < 40; ++i) side.send_to(v.group(), ShardPut{3, fmt::format("b{}", i)});
  });
  for (int i = 0; i < 40; ++i) v.proxy->send_to(v.group(), ShardPut{3, fmt::format("a{}", i)});
  racer.join();
  REQUIRE(eventually([&] { return v.shards->created("3") == 1; }));
  // Shard 5 is created and answers while shard 3 is still being created.
  auto five = v.proxy->request_fallible(ShardPut{5, "five"}, v.group());
  REQUIRE(five);
  CHECK(*five == "ok");
  CHECK(v.shards->created("5") == 1);
  CHECK_FALSE(std::filesystem::exists(v.shards->dir("3")));  // still at the gate

  v.proxy->send_to(v.proxy->system().group_addr("gate"), OpenGate{});
  auto three = v.proxy->request_fallible(ShardGet{3}, v.group());
  REQUIRE(three);
  CHECK(v.shards->created("3") == 1);  // one actor took all 80 first messages
  CHECK(v.registry->size() == 3);      // shards 0, 3 and 5
  CHECK(std::filesystem::exists(v.shards->dir("3") / "value"));
  CHECK(std::filesystem::exists(v.shards->dir("5") / "value"));
}

TEST_CASE("sharding pods: each virtual shard keeps its state in its own directory; damaging one fails only that shard",
          "[sharding]") {
  VirtualShards v("entity_max_idle_time = \"100ms\"");
  REQUIRE(eventually([&] { return v.cache->owned().size() == 16; }));
  REQUIRE(v.proxy->request_fallible(ShardPut{3, "three"}, v.group()));
  REQUIRE(v.proxy->request_fallible(ShardPut{5, "five"}, v.group()));
  // Both passivate (shard 0 never does); their state stays in their directories.
  REQUIRE(eventually([&] { return v.registry->size() == 1; }));
  CHECK(v.registry->token("0"));
  CHECK(read_value(v.shards->dir("3") / "value") == "three");
  CHECK(read_value(v.shards->dir("5") / "value") == "five");

  // Shard 3's file is damaged: its next actor fails to load it; shard 5 is unaffected.
  {
    std::ofstream out(v.shards->dir("3") / "value", std::ios::trunc);
    out << "garbage\n";
  }
  CHECK_FALSE(v.proxy->request_fallible(ShardGet{3}, v.group()));
  auto five = v.proxy->request_fallible(ShardGet{5}, v.group());
  REQUIRE(five);
  CHECK(*five == "five");
  // Deleting shard 3's directory gives it a fresh start; shard 5 still has its value.
  std::filesystem::remove_all(v.shards->dir("3"));
  auto fresh = v.proxy->request_fallible(ShardGet{3}, v.group());
  REQUIRE(fresh);
  CHECK(fresh->empty());
  five = v.proxy->request_fallible(ShardGet{5}, v.group());
  REQUIRE(five);
  CHECK(*five == "five");
}

TEST_CASE("sharding pods: a graceful stop handles every queued request before a virtual shard closes its storage",
          "[sharding]") {
  VirtualShards v;
  REQUIRE(eventually([&] { return v.cache->owned().size() == 16; }));
  constexpr std::uint64_t kQueued = 90;  // within the mailbox capacity (100): nothing reads it yet
  // Shard 7's creation waits at the gate, so every request below is queued when the stop begins.
  v.shards->gate("7");
  for (std::uint64_t i = 1; i <= kQueued; ++i) v.proxy->send_to(v.group(), ShardPut{7, fmt::format("v{}", i)});
  REQUIRE(eventually([&] { return v.shards->created("7") == 1; }));
  v.proxy->send_to(v.proxy->system().group_addr("sharding.pod"), elfin::Terminate{});
  REQUIRE(eventually([&] { return v.cache->draining(); }));
  v.proxy->send_to(v.proxy->system().group_addr("gate"), OpenGate{});
  REQUIRE(eventually([&] { return !v.shards->closed("7").empty(); }));
  // Every queued request was handled before the shard closed its storage...
  CHECK(v.shards->closed("7") == std::vector<std::uint64_t>{kQueued});
  CHECK(read_value(v.shards->dir("7") / "value") == fmt::format("v{}", kQueued));
  // ...and after the stop no shard accepts a request.
  CHECK_FALSE(v.proxy->request_fallible(ShardGet{7}, v.group()));
  CHECK_FALSE(v.proxy->request_fallible(ShardGet{5}, v.group()));
  CHECK(v.shards->created("5") == 0);
}
