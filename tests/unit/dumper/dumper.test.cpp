// The dumper battery end to end: a running system's messages in a real dump file, read back.
#include <catch2/catch.hpp>

#include <fstream>

#include <elfin/dumper/dump_file_writer.hpp>
#include <elfin/dumper/dump_reader.hpp>
#include <elfin/dumper/dumper.hpp>
#include <elfin/internal/dump_storage.hpp>

#include "../core/test_support.hpp"
#include "dumper_test_support.hpp"

using namespace elfin;
using namespace elfin::test;

namespace {

struct Order {
  std::string item;
  std::uint32_t count = 0;
  ELFIN_MESSAGE(shop, Order, item, count);
};
struct Price {
  std::string item;
  ELFIN_REQUEST(shop, Price, std::uint32_t, item);
};

Task<> buyer(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<ConfigUpdated>()) continue;
    Order order{"tea", 2};
    std::ignore = co_await ctx.send(std::move(order));
    Price question{"tea"};
    auto price = co_await ctx.request(std::move(question));
    journal().add(fmt::format("price {}", price.value_or(0)));
  }
}

Task<> shop(Context<NoConfig, std::string> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Price>()) ctx.respond(envelope->take_token<Price>(), 7u);
  }
}

Outcome<std::string> by_item(const Envelope& envelope) {
  if (const auto* m = envelope.get<Order>()) return Outcome<std::string>::Unicast(m->item);
  if (const auto* m = envelope.get<Price>()) return Outcome<std::string>::Unicast(m->item);
  return Outcome<std::string>::Default();
}

Topology shop_topology() {
  Topology topology;
  auto b = topology.local("buyers");
  auto s = topology.local("shops");
  b.route_to(s, filters::protocol("shop"));
  b.mount(ActorGroup().exec(buyer)).entrypoint();
  s.mount(ActorGroup().router(MapRouter<std::string>(by_item)).exec(shop));
  topology.local("system.dumpers").mount(dumper::blueprint());
  return topology;
}

void run_shop(const std::string& config) {
  journal().clear();
  StartOptions options = quick_options();
  options.config_toml = config;
  auto system = System::start(shop_topology(), std::move(options));
  REQUIRE(system.ok());
  CHECK(journal().wait_for_line("price 7"));
  system->terminate("test over");
  system->join();  // the dumper writes the last dumps as it stops
}

}  // namespace

TEST_CASE("the dumper writes every message of a running system to its file", "[dumper][battery]") {
  dumper::test::TempDir dir;
  auto path = dir.file("shop.dump");
  run_shop(fmt::format("[system.dumpers]\npath = \"{}\"\nwrite_interval = \"10ms\"\n", path));

  dumper::ReadStats stats;
  std::vector<dumper::MalformedLine> bad;
  dumper::DumpFilter not_dumpers;
  not_dumpers.groups = {"buyers", "shops"};
  auto records = dumper::read_dumps({path}, not_dumpers, stats, [&](const auto& m) { bad.push_back(m); });
  REQUIRE(records.ok());
  CHECK(bad.empty());
  CHECK(stats.malformed == 0);

  std::vector<std::string> story;
  std::uint64_t order_trace = 0;
  for (const auto& r : *records) {
    if (r.message_name == "UpdateConfig" || r.message_name == "Terminate") continue;
    story.push_back(fmt::format("{}{} {} {} {}", r.group, r.key ? "/" + *r.key : "", dumper::to_string(r.direction),
                                r.message_name, dumper::to_string(r.kind)));
    CHECK(r.node_no == 0);
    CHECK(r.ts > 1'700'000'000'000'000'000);  // unix nanoseconds, not a monotonic clock
    if (r.message_name == "Order") {
      if (order_trace == 0) order_trace = r.trace_id;
      CHECK(r.trace_id == order_trace);  // the same trace on both sides
      CHECK(r.body_json == R"({"item":"tea","count":2})");
    }
    if (r.kind != dumper::MessageKind::Regular) CHECK(r.correlation_id.has_value());
  }
  std::sort(story.begin(), story.end());
  CHECK(story == std::vector<std::string>{"buyers In Price Response", "buyers Out Order Regular",
                                          "buyers Out Price Request", "shops/tea In Order Regular",
                                          "shops/tea In Price Request", "shops/tea Out Price Response"});
}

TEST_CASE("a dumper without a path fails and says what to set", "[dumper][battery]") {
  StatusLog statuses;
  StartOptions options = quick_options();
  options.on_status = statuses.callback();
  Topology topology;
  topology.local("system.dumpers").mount(dumper::blueprint());
  auto system = System::start(std::move(topology), std::move(options));
  REQUIRE(system.ok());
  auto failed = statuses.wait_for("system.dumpers", "_", ActorStatusKind::Failed);
  REQUIRE(failed.has_value());
  CHECK_THAT(failed->details(), Catch::Contains("[system.dumpers] path is not set"));
  system->terminate("test over");
  system->join();
}

namespace {
// A dump as the storage tests push it: any message will do.
dumping::Dump dump() {
  static const std::string group = "g";
  dumping::Dump d;
  d.group = &group;
  d.vtable = &vtable_of<ConfigUpdated>();
  return d;
}
}  // namespace

TEST_CASE("a dump's storage slot is freed once the writer wrote it, not when it is drained", "[dumper]") {
  // The storage's capacity bounds the dumps waiting for the disk too: a writer that falls behind
  // makes new dumps count as lost instead of letting its queue grow.
  dumper::test::TempDir dir;
  dumping::DumpStorage storage(1, 2);
  dumper::DumpFileWriter writer(dir.file("slots.dump"), 1, 1024, &storage);
  REQUIRE(storage.push(dump()));
  REQUIRE(storage.push(dump()));
  auto batch = storage.drain_chunks();
  CHECK_FALSE(storage.push(dump()));  // drained, not written: the two slots are still taken
  writer.submit(std::move(batch));
  writer.flush();
  CHECK(writer.stats().written == 2);
  CHECK(storage.push(dump()));
  CHECK(storage.push(dump()));
  CHECK_FALSE(storage.push(dump()));
}

TEST_CASE("the writer drains by itself when dumps pile up faster than its interval takes them", "[dumper]") {
  // No drain() is asked for: once kBacklogChunks chunks are full, the storage's alarm makes the
  // writer take them, so a fast stream neither fills the storage nor waits a whole interval.
  dumper::test::TempDir dir;
  constexpr std::size_t kChunk = dumping::DumpStorage::kChunkSize;
  dumping::DumpStorage storage(1, 64 * kChunk);
  dumper::DumpFileWriter writer(dir.file("backlog.dump"), 1, 1024, &storage);
  const std::size_t backlog = dumper::DumpFileWriter::kBacklogChunks * kChunk;
  for (std::size_t i = 0; i + 1 < backlog; ++i) REQUIRE(storage.push(dump()));
  CHECK(writer.stats().written == 0);  // one dump short of the alarm: nothing is drained yet
  REQUIRE(storage.push(dump()));
  CHECK(dumper::test::eventually([&] { return writer.stats().written == backlog; }));
}

TEST_CASE("a relative dump path is taken relative to the config file that names it", "[dumper][battery]") {
  dumper::test::TempDir dir;
  const auto config = dir.write("node.toml", "[system.dumpers]\npath = \"shop.dump\"\nwrite_interval = \"10ms\"\n");
  journal().clear();
  StartOptions options = quick_options();
  options.config_path = config;
  auto system = System::start(shop_topology(), std::move(options));
  REQUIRE(system.ok());
  CHECK(journal().wait_for_line("price 7"));
  system->terminate("test over");
  system->join();
  dumper::ReadStats stats;
  auto records = dumper::read_dumps({dir.file("shop.dump")}, {}, stats, [](const auto&) {});
  REQUIRE(records.ok());
  CHECK(stats.matched > 0);
}
