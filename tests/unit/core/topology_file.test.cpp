// Topology files: what a file declares (node, groups, routes, remote groups) and that a topology
// loaded from a file behaves exactly like the same topology built in C++. The malformed-file
// table runs through the real `elfin` binary (tests/cli).
#include <algorithm>

#include <catch2/catch.hpp>

#include <elfin/blueprint_registry.hpp>
#include <elfin/elfin.hpp>
#include <elfin/topology_file.hpp>

#include "../temp_dir.hpp"
#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using elfin::test::other::Note;
using Lines = std::vector<std::string>;

namespace {

// Groups: `driver` sends one message of each kind once started; `left` and `right` write what
// they get to the journal, and `left` passes every Note on as a Tick (route left -> right: "*").
//   driver -> left  : test.Increment, other.*
//   driver -> right : test.Keyed, test.Increment
//   left   -> right : *
Task<> driver(Context<> ctx) {
  std::ignore = co_await ctx.recv();  // the start-up ConfigUpdated
  Increment increment{1};
  journal().add("driver: Increment " + name_of(co_await ctx.send(increment)));
  Keyed keyed{7, {}, "k"};
  journal().add("driver: Keyed " + name_of(co_await ctx.send(std::move(keyed))));
  Note note{"hello"};
  journal().add("driver: Note " + name_of(co_await ctx.send(std::move(note))));
  Numbered numbered{1, 2};
  journal().add("driver: Numbered " + name_of(co_await ctx.send(numbered)));
}

Task<> left(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->vtable().is_system) continue;
    journal().add(fmt::format("left: {}.{}", envelope->protocol(), envelope->name()));
    if (envelope->is<Note>()) {
      Tick tick{1};
      journal().add("left: Tick " + name_of(co_await ctx.send(tick)));
    }
  }
}

Task<> right(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->vtable().is_system) continue;
    journal().add(fmt::format("right: {}.{}", envelope->protocol(), envelope->name()));
  }
}

BlueprintRegistry registry() {
  BlueprintRegistry r;
  REQUIRE(r.add("test.driver", ActorGroup().exec(driver)).ok());
  REQUIRE(r.add("test.left", ActorGroup().exec(left)).ok());
  REQUIRE(r.add("test.right", ActorGroup().exec(right)).ok());
  return r;
}

constexpr const char* kTopologyToml = R"(
[node]
no = 7
name = "equivalence"
config = "configs/node.config.toml"

[[groups]]
name = "driver"
blueprint = "test.driver"
entrypoint = true

[[groups]]
name = "left"
blueprint = "test.left"

[[groups]]
name = "right"
blueprint = "test.right"

[[routes]]
from = "driver"
to = "left"
messages = ["test.Increment", "other.*"]

[[routes]]
from = "driver"
to = "right"
messages = ["test.Keyed", "test.Increment"]

[[routes]]
from = "left"
to = "right"
messages = ["*"]

[[remote]]
name = "storage"
nodes = [2, 3]
)";

Topology code_built() {
  Topology topology;
  auto d = topology.local("driver");
  auto l = topology.local("left");
  auto r = topology.local("right");
  d.route_to(l, [](const Envelope& e) { return e.is<Increment>() || e.protocol() == "other"; });
  d.route_to(r, filters::messages<Keyed, Increment>());
  l.route_all_to(r);
  d.mount(ActorGroup().exec(driver)).entrypoint();
  l.mount(ActorGroup().exec(left));
  r.mount(ActorGroup().exec(right));
  return topology;
}

/// Runs `topology` until the driver and the routed messages are done; the journal, sorted.
Lines run_and_record(Topology topology) {
  journal().clear();
  auto system = System::start(std::move(topology), quick_options());
  REQUIRE(system.ok());
  // 4 driver lines, left: Increment, Note, Tick; right: Keyed, Increment, Tick.
  CHECK(journal().wait([](const Lines& lines) { return lines.size() >= 10; }));
  system->terminate();
  system->join();
  return sorted(journal().lines());
}

}  // namespace

TEST_CASE("a topology file declares the node, its groups, routes and remote groups", "[core][topology_file]") {
  auto reg = registry();
  auto file = parse_topology_file(kTopologyToml, "node.toml", reg, "/srv/node");
  REQUIRE(file.ok());
  CHECK(file->node_no == 7);
  CHECK(file->node_name == "equivalence");
  CHECK(file->config_path == "/srv/node/configs/node.config.toml");
  CHECK(file->start_options().node_no == 7);
  CHECK(file->start_options().config_path == "/srv/node/configs/node.config.toml");
  REQUIRE(file->remote_groups.size() == 1);
  CHECK(file->remote_groups[0].name == "storage");
  CHECK(file->remote_groups[0].nodes == std::vector<std::uint16_t>{2, 3});
}

TEST_CASE("a topology file builds the same groups, entrypoints and routes as the C++ API", "[core][topology_file]") {
  auto reg = registry();
  auto file = parse_topology_file(kTopologyToml, "node.toml", reg);
  REQUIRE(file.ok());
  const Topology code = code_built();
  const auto& a = file->topology.groups();
  const auto& b = code.groups();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("group " << a[i].name);
    CHECK(a[i].name == b[i].name);
    CHECK(a[i].entrypoint == b[i].entrypoint);
    CHECK(a[i].blueprint.has_value());
    REQUIRE(a[i].routes.size() == b[i].routes.size());
    for (std::size_t j = 0; j < a[i].routes.size(); ++j) CHECK(a[i].routes[j].to == b[i].routes[j].to);
  }
}

TEST_CASE("a topology from a file routes every message as the same topology built in C++", "[core][topology_file]") {
  auto reg = registry();
  auto file = parse_topology_file(kTopologyToml, "node.toml", reg);
  REQUIRE(file.ok());
  const Lines from_code = run_and_record(code_built());
  const Lines from_file = run_and_record(file->topology);
  CHECK(from_file == from_code);
  // And that flow is the one the routes describe.
  CHECK(from_code == sorted({"driver: Increment ok", "driver: Keyed ok", "driver: Note ok", "driver: Numbered NoRoute",
                             "left: test.Increment", "left: other.Note", "left: Tick ok", "right: test.Keyed",
                             "right: test.Increment", "right: test.Tick"}));
}

TEST_CASE("load_topology_file resolves the config path against the file's directory", "[core][topology_file]") {
  TempDir dir;
  auto path = dir.write("node.toml", kTopologyToml);
  auto reg = registry();
  auto file = load_topology_file(path, reg);
  REQUIRE(file.ok());
  CHECK(file->config_path == (dir.path() / "configs/node.config.toml").string());
  CHECK(file->source == path);

  auto missing = load_topology_file((dir.path() / "nope.toml").string(), reg);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message(), Catch::Contains("nope.toml: cannot read the topology file"));
}

TEST_CASE("a topology file with several mistakes reports all of them with their lines", "[core][topology_file]") {
  auto reg = registry();
  auto file = parse_topology_file(R"([[groups]]
name = "a"
blueprint = "test.nope"

[[groups]]
name = "a"
blueprint = "test.left"

[[routes]]
from = "a"
to = "a"
messages = ["test.Nope"]
)",
                                  "bad.toml", reg);
  REQUIRE_FALSE(file.ok());
  CHECK_THAT(file.error().message(), Catch::Contains("bad.toml:3: group `a`: unknown blueprint `test.nope`"));
  CHECK_THAT(file.error().message(), Catch::Contains("bad.toml:5: duplicate group `a` (first declared at line 1)"));
  CHECK_THAT(file.error().message(), Catch::Contains("bad.toml:12: message pattern \"test.Nope\""));
  CHECK_THAT(file.error().message(), Catch::Contains("bad.toml:9: route a -> a: a group cannot route to itself"));
  // The same mistakes one by one, with their lines, for a program.
  CHECK(file.error().kind() == TopologyError::Invalid);
  CHECK(file.error().source() == "bad.toml");
  std::vector<std::uint32_t> lines;
  for (const auto& problem : file.error().problems()) lines.push_back(problem.line);
  std::sort(lines.begin(), lines.end());
  CHECK(lines == std::vector<std::uint32_t>{3, 5, 9, 12});
}

TEST_CASE("a topology file that is not TOML is a TopologyError of kind Syntax with line and column",
          "[core][topology_file]") {
  auto reg = registry();
  auto file = parse_topology_file("[[groups]]\nname = \"a\"\nblueprint = \n", "bad.toml", reg);
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().kind() == TopologyError::Syntax);
  CHECK(file.error().line() == 3);
  CHECK(file.error().column() > 0);
  CHECK(file.error().problems().empty());
  auto missing = load_topology_file("/nonexistent/elfin/node.toml", reg);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind() == TopologyError::Unreadable);
}

TEST_CASE("a blueprint registry refuses a name twice and lists its entries sorted", "[core][topology_file]") {
  BlueprintRegistry reg;
  CHECK(reg.add("b.two", ActorGroup().exec(right), "second").ok());
  CHECK(reg.add("a.one", ActorGroup().exec(left), "first").ok());
  auto again = reg.add("a.one", ActorGroup().exec(left));
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().message() == "a blueprint named `a.one` is already registered");
  CHECK(again.error().kind() == TopologyError::BlueprintName);
  REQUIRE(reg.entries().size() == 2);
  CHECK(reg.entries()[0].name == "a.one");
  CHECK(reg.entries()[1].description == "second");
  CHECK(reg.find("b.two") != nullptr);
  CHECK(reg.find("c") == nullptr);
}

TEST_CASE("with a network battery registered, [[remote]] mounts a remote group that routes accept",
          "[core][topology_file]") {
  auto reg = registry();
  REQUIRE(reg.add("test.network", ActorGroup().exec(left)).ok());
  std::vector<RemoteGroupDecl> made;
  reg.set_remote_factory([&](const RemoteGroupDecl& decl) {
    made.push_back(decl);
    return ActorGroup().exec(right);
  });
  constexpr const char* kToml = R"(
[[groups]]
name = "system.network"
blueprint = "test.network"

[[groups]]
name = "driver"
blueprint = "test.driver"

[[remote]]
name = "storage"
nodes = [3, 2]
routing = "broadcast"

[[routes]]
from = "driver"
to = "storage"
messages = ["test.*"]
)";
  auto file = parse_topology_file(kToml, "node.toml", reg);
  REQUIRE(file.ok());
  REQUIRE(made.size() == 1);
  CHECK(made[0].name == "storage");
  CHECK(made[0].nodes == std::vector<std::uint16_t>{3, 2});
  CHECK(made[0].routing == "broadcast");
  const auto& groups = file->topology.groups();
  REQUIRE(groups.size() == 3);
  CHECK(groups[2].name == "storage");
  CHECK(groups[2].blueprint.has_value());
  REQUIRE(groups[1].routes.size() == 1);
  CHECK(groups[groups[1].routes[0].to].name == "storage");

  // Without `system.network` the remote group has no way out: an error with its line.
  auto missing = parse_topology_file(R"(
[[groups]]
name = "driver"
blueprint = "test.driver"

[[remote]]
name = "storage"
nodes = [2]
)",
                                     "bare.toml", reg);
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message(), Catch::Contains("bare.toml:6") &&
                                            Catch::Contains("remote group `storage` needs a `system.network` group"));
}

TEST_CASE("a [[remote]] names its node selector with pick, registered by name next to the blueprints",
          "[core][topology_file]") {
  auto reg = registry();
  REQUIRE(reg.add("test.network", ActorGroup().exec(left)).ok());
  REQUIRE(reg.add_selector(
                 "test.second",
                 [](const Envelope&, const std::vector<std::uint16_t>& connected) {
                   return connected.size() > 1 ? std::optional<std::uint16_t>(connected[1]) : std::nullopt;
                 },
                 "the second connected node")
              .ok());
  REQUIRE(reg.add_selector(
                 "test.none",
                 [](const Envelope&, const std::vector<std::uint16_t>&) { return std::optional<std::uint16_t>{}; })
              .ok());
  CHECK_FALSE(reg.add_selector(
                     "test.none",
                     [](const Envelope&, const std::vector<std::uint16_t>&) { return std::optional<std::uint16_t>{}; })
                  .ok());
  REQUIRE(reg.selectors().size() == 2);
  CHECK(reg.selectors()[1].description == "the second connected node");
  std::vector<RemoteGroupDecl> made;
  reg.set_remote_factory([&](const RemoteGroupDecl& decl) {
    made.push_back(decl);
    return ActorGroup().exec(right);
  });
  constexpr const char* kToml = R"(
[[groups]]
name = "system.network"
blueprint = "test.network"

[[remote]]
name = "storage.peers"
nodes = [1, 2, 3]
remote_name = "storage"
pick = "test.second"
)";
  auto file = parse_topology_file(kToml, "node.toml", reg);
  REQUIRE(file.ok());
  REQUIRE(made.size() == 1);
  CHECK(made[0].remote_name == "storage");
  CHECK(made[0].pick == "test.second");
  // The factory is handed the registered function itself.
  REQUIRE(made[0].selector);
  const Envelope envelope = Envelope::make(Increment{}, Addr{}, TraceId{});
  CHECK(made[0].selector(envelope, {5, 7}) == std::optional<std::uint16_t>(7));
  CHECK(made[0].selector(envelope, {5}) == std::nullopt);

  SECTION("an unknown selector is an error at its line, listing the known ones") {
    auto bad = parse_topology_file(R"(
[[groups]]
name = "system.network"
blueprint = "test.network"

[[remote]]
name = "storage.peers"
nodes = [1, 2]
pick = "test.secnod"
remote_name = ""
)",
                                   "bad.toml", reg);
    REQUIRE_FALSE(bad.ok());
    CHECK_THAT(bad.error().message(),
               Catch::Contains("bad.toml:9: remote group `storage.peers` pick: unknown node selector `test.secnod`; "
                               "registered: test.none, test.second") &&
                   Catch::Contains("bad.toml:10: remote group `storage.peers` remote_name: must not be empty"));
  }
}
