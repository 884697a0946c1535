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
    match(
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
    match(
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
  CHECK_THAT(system.error(), Catch::Contains("counters.toml") && Catch::Contains("[counters]"));

  CHECK_THROWS_WITH(testing::proxy(configured_group(), "step = \"twenty\""), Catch::Contains("[subject]"));
}

TEST_CASE("a config document that is not valid TOML stops System::start and says where", "[core][config]") {
  StartOptions options = quick_options();
  options.config_toml = "[counters]\nstep = = 2\n";
  options.config_source = "broken.toml";
  auto system = System::start(one_group(configured_group()), options);
  REQUIRE_FALSE(system.ok());
  CHECK_THAT(system.error(), Catch::Contains("broken.toml:2") && Catch::Contains("invalid TOML"));
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
