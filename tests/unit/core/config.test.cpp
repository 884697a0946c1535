// Configs: a group's typed config decoded from its TOML section, what System::start does with a
// config that does not fit, `system.mailbox.capacity`, and routers built from the config.
#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using Key = std::uint64_t;

namespace {

struct StepConfig {
  std::uint32_t step = 1;
  std::string label = "default";
  std::vector<std::string> tags;
  ELFIN_CONFIG(step, label, tags);
};

/// GetValue answers the configured step, Echo the label and tags.
Task<> configured(Context<StepConfig> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        [&](const GetValue&, ResponseToken<GetValue> token) { ctx.respond(std::move(token), ctx.config().step); },
        [&](const Echo&, ResponseToken<Echo> token) {
          std::string text = ctx.config().label;
          for (const auto& tag : ctx.config().tags) text += "," + tag;
          ctx.respond(std::move(token), text);
        });
  }
}

Blueprint configured_group() { return ActorGroup().config<StepConfig>().exec(configured); }

/// Takes the start-up message, waits for the test's Gate, then counts Increments (GetValue).
Task<> gated_counter(Context<> ctx) {
  std::ignore = co_await ctx.recv();
  Gate gate{"counter"};
  std::ignore = co_await ctx.request(std::move(gate));
  std::uint64_t count = 0;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope, [&](const Increment&) { ++count; },
        [&](const GetValue&, ResponseToken<GetValue> token) { ctx.respond(std::move(token), count); });
  }
}

/// How many Increments fit in the gated counter's mailbox before try_send says Full.
std::uint64_t fitting_increments(testing::Proxy& proxy) {
  auto gate = expect_gate(proxy);
  std::uint64_t fitted = 0;
  while (fitted < 1000 && proxy.try_send(Increment{})) ++fitted;
  CHECK(name_of(proxy.try_send(Increment{})) == "Full");
  std::move(gate).respond("go");
  CHECK(proxy.request(GetValue{}) == fitted);  // every accepted one arrived
  return fitted;
}

// A router whose state comes from the config: Keyed{key} goes to actor `key + step`.
struct Offset {
  std::uint64_t by = 0;
};

Task<> keyed_reporter(Context<StepConfig, Key> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Keyed>()) std::ignore = ctx.unbounded_send(Seen{ctx.key(), "keyed"});
  }
}

Blueprint offset_group() {
  return ActorGroup()
      .config<StepConfig>()
      .router(MapRouter<Key>::with_state<StepConfig, Offset>(
          [](const StepConfig& config, const Offset&) { return Offset{config.step}; },
          [](const Envelope& e, const Offset& offset) {
            if (const auto* k = e.get<Keyed>()) return Outcome<Key>::Unicast(k->key + offset.by);
            return Outcome<Key>::Default();
          }))
      .exec(keyed_reporter);
}

Topology one_group(Blueprint blueprint) {
  Topology topology;
  topology.local("counters").mount(std::move(blueprint));
  return topology;
}

}  // namespace

TEST_CASE("a group's config is decoded from its section, keeping the defaults of missing keys", "[core][config]") {
  auto proxy = testing::proxy(configured_group(), "step = 20");
  CHECK(proxy.request(GetValue{}) == 20);
  CHECK(proxy.request(Echo{}) == "default");
}

TEST_CASE("a group without a config section keeps every default", "[core][config]") {
  auto proxy = testing::proxy(configured_group());
  CHECK(proxy.request(GetValue{}) == 1);
  CHECK(proxy.request(Echo{}) == "default");
}

TEST_CASE("strings and arrays in a config section decode into the config struct", "[core][config]") {
  auto proxy = testing::proxy(configured_group(), "label = \"blue\"\ntags = [\"a\", \"b\"]");
  CHECK(proxy.request(Echo{}) == "blue,a,b");
  CHECK(proxy.request(GetValue{}) == 1);
}

TEST_CASE("a config that does not fit the group's config type stops System::start and names the group",
          "[core][config]") {
  StartOptions options = quick_options();
  options.config_toml = "[counters]\nstep = \"twenty\"\n";
  options.config_source = "counters.toml";
  auto system = System::start(one_group(configured_group()), options);
  REQUIRE_FALSE(system.ok());
  CHECK_THAT(system.error().message(), Catch::Contains("counters.toml") && Catch::Contains("[counters]"));

  CHECK_THROWS_WITH(testing::proxy(configured_group(), "step = \"twenty\""), Catch::Contains("[subject]"));
}

TEST_CASE("a config document that is not valid TOML stops System::start and says where", "[core][config]") {
  StartOptions options = quick_options();
  options.config_toml = "[counters]\nstep = = 2\n";
  options.config_source = "broken.toml";
  auto system = System::start(one_group(configured_group()), options);
  REQUIRE_FALSE(system.ok());
  CHECK_THAT(system.error().message(), Catch::Contains("broken.toml:2") && Catch::Contains("invalid TOML"));
}

TEST_CASE("system.mailbox.capacity sets the capacity of the group's mailboxes", "[core][config]") {
  auto proxy = testing::proxy(ActorGroup().exec(gated_counter), "system.mailbox.capacity = 2");
  CHECK(fitting_increments(proxy) == 2);
}

TEST_CASE("mailboxes hold 100 messages unless the blueprint or the config says otherwise", "[core][config]") {
  SECTION("the default") {
    auto proxy = testing::proxy(ActorGroup().exec(gated_counter));
    CHECK(fitting_increments(proxy) == 100);
  }
  SECTION("the blueprint's capacity") {
    auto proxy = testing::proxy(ActorGroup().mailbox_capacity(3).exec(gated_counter));
    CHECK(fitting_increments(proxy) == 3);
  }
  SECTION("the config's capacity wins over the blueprint's") {
    auto proxy = testing::proxy(ActorGroup().mailbox_capacity(3).exec(gated_counter), "system.mailbox.capacity = 5");
    CHECK(fitting_increments(proxy) == 5);
  }
}

TEST_CASE("the system table of a section does not disturb the group's own keys", "[core][config]") {
  auto proxy = testing::proxy(configured_group(), "step = 7\nsystem.mailbox.capacity = 10");
  CHECK(proxy.request(GetValue{}) == 7);
}

TEST_CASE("a router with state rebuilds it from the group's config", "[core][config]") {
  auto proxy = testing::proxy(offset_group(), "step = 10");
  proxy.send(Keyed{1, {}, ""});
  CHECK(recv_seen(proxy, 1) == std::vector<std::string>{"11:keyed"});
}

// --- checking: locations, key paths, expected types, unknown keys, [common] -----------------------

namespace {

struct Limits {
  std::chrono::milliseconds flush_every{500};
  ByteSize max_frame{1024};
  ELFIN_CONFIG(flush_every, max_frame);
};
struct NestedConfig {
  std::uint32_t step = 1;
  Limits limits;
  std::vector<std::uint32_t> ports;
  ELFIN_CONFIG(step, limits, ports);
};
Task<> nested_actor(Context<NestedConfig> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(*envelope, [&](const Echo&, ResponseToken<Echo> token) {
      const auto& c = ctx.config();
      ctx.respond(std::move(token), fmt::format("{} {}ms {}B {}", c.step, c.limits.flush_every.count(),
                                                c.limits.max_frame.bytes, c.ports.size()));
    });
  }
}

Result<std::vector<std::string>, StartError> check(std::string toml) {
  Topology topology;
  topology.local("counters").mount(ActorGroup().config<NestedConfig>().exec(nested_actor));
  topology.local("others").mount(ActorGroup().config<StepConfig>().exec(configured));
  StartOptions options = quick_options();
  options.config_toml = std::move(toml);
  options.config_source = "node.toml";
  return System::check(std::move(topology), options);
}

}  // namespace

TEST_CASE("a value that does not fit names the file, line, key path and expected type", "[core][config]") {
  SECTION("a top-level key") {
    auto checked = check("[counters]\nstep = \"twenty\"\n");
    REQUIRE_FALSE(checked.ok());
    CHECK_THAT(
        checked.error().message(),
        Catch::Contains("node.toml:2: [counters] step: expected a non-negative integer, got a string (\"twenty\")"));
  }
  SECTION("a key of a nested table") {
    auto checked = check("[counters]\nstep = 2\n\n[counters.limits]\nflush_every = 5\n");
    REQUIRE_FALSE(checked.ok());
    CHECK_THAT(checked.error().message(),
               Catch::Contains("node.toml:5: [counters] limits.flush_every: expected a duration "
                               "string such as \"500ms\" or \"5s\", got an integer (5)"));
  }
  SECTION("a duration that does not parse") {
    auto checked = check("[counters.limits]\nflush_every = \"5 parsecs\"\n");
    REQUIRE_FALSE(checked.ok());
    CHECK_THAT(checked.error().message(), Catch::Contains("node.toml:2: [counters] limits.flush_every:"));
  }
  SECTION("an array element") {
    auto checked = check("[counters]\nports = [1, -2]\n");
    REQUIRE_FALSE(checked.ok());
    CHECK_THAT(checked.error().message(),
               Catch::Contains("node.toml:2: [counters] ports[1]: expected a non-negative integer, "
                               "got a negative integer (-2)"));
  }
  SECTION("a runtime key of the system table") {
    auto checked = check("[others]\nsystem.mailbox.capacity = \"big\"\n");
    REQUIRE_FALSE(checked.ok());
    CHECK_THAT(checked.error().message(), Catch::Contains("node.toml:2: [others] system.mailbox.capacity: expected a "
                                                          "non-negative integer, got a string (\"big\")"));
  }
  SECTION("every problem at once") {
    auto checked = check("[counters]\nstep = true\n[others]\nstep = 1.5\n");
    REQUIRE_FALSE(checked.ok());
    CHECK_THAT(checked.error().message(), Catch::Contains("[counters] step") && Catch::Contains("[others] step"));
  }
}

TEST_CASE("durations, sizes and nested tables decode from a config section", "[core][config]") {
  auto proxy = testing::proxy(ActorGroup().config<NestedConfig>().exec(nested_actor),
                              "step = 3\nports = [1, 2]\nlimits.flush_every = \"2s\"\nlimits.max_frame = \"64KiB\"");
  CHECK(proxy.request(Echo{}) == "3 2000ms 65536B 2");
}

TEST_CASE("unknown keys and sections are warnings, not errors", "[core][config]") {
  auto checked = check(
      "[counters]\nstep = 2\nstpe = 3\n[counters.limits]\nflush = \"1s\"\n[countres]\nstep = 1\n"
      "[others.system]\nmailbox.capacty = 3\n");
  REQUIRE(checked.ok());
  CHECK_THAT(*checked, Catch::VectorContains(std::string("node.toml:3: [counters] stpe: unknown key")));
  CHECK_THAT(*checked, Catch::VectorContains(std::string("node.toml:5: [counters] limits.flush: unknown key")));
  CHECK_THAT(*checked, Catch::VectorContains(std::string(
                           "node.toml:6: [countres]: no group of the topology is named `countres`; the section is "
                           "not used")));
  CHECK_THAT(*checked, Catch::VectorContains(std::string("node.toml:9: [others] system.mailbox.capacty: unknown key")));
  CHECK(checked->size() == 4);
}

TEST_CASE("[common] is merged into every group's section, the group's own keys winning", "[core][config]") {
  Topology topology;
  topology.local("a").mount(configured_group());
  topology.local("b").mount(configured_group());
  StartOptions options = quick_options();
  options.config_toml = "[common]\nstep = 7\nlabel = \"shared\"\nunused_by_all = 1\n[b]\nstep = 9\n";
  SECTION("values") {
    auto system = System::start(std::move(topology), options);
    REQUIRE(system.ok());
    // The configs are applied before any actor runs; read them as the group holds them.
    CHECK(system->core_group("a")->applied_config().decode<StepConfig>()->step == 7);
    CHECK(system->core_group("b")->applied_config().decode<StepConfig>()->step == 9);
    CHECK(system->core_group("b")->applied_config().decode<StepConfig>()->label == "shared");
  }
  SECTION("keys from [common] that a group does not know are not reported") {
    auto checked = System::check(std::move(topology), options);
    REQUIRE(checked.ok());
    CHECK(checked->empty());
  }
}

TEST_CASE("a config file that cannot be read stops System::start and names the file", "[core][config]") {
  StartOptions options = quick_options();
  options.config_path = "/nonexistent/elfin/node.toml";
  auto system = System::start(one_group(configured_group()), options);
  REQUIRE_FALSE(system.ok());
  CHECK_THAT(system.error().message(), Catch::Contains("/nonexistent/elfin/node.toml: cannot read the config file"));
}
