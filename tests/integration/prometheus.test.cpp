// Debian's real Prometheus server scrapes a running elfin node: the elfin metrics must arrive
// through its query API with the values the node produced.
//
// The node is an in-process system with a telemeter on a free loopback port; Prometheus is a child
// process scraping it every second. Without the `prometheus` binary the test fails (CI installs
// it through .ci/deps): skipping would hide that the scrape path is untested.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include <elfin/elfin.hpp>
#include <elfin/telemeter/telemeter.hpp>
#include <elfin/testing/proxy.hpp>

#include "../unit/core/test_support.hpp"
#include "../unit/eventually.hpp"
#include "../unit/temp_dir.hpp"
#include "support/prometheus_process.hpp"

using namespace elfin;
using namespace elfin::test;
using elfin::integration::PrometheusProcess;

namespace {

constexpr std::uint32_t kTicks = 500;

struct Tick {
  std::uint32_t n = 0;
  ELFIN_MESSAGE(scraped, Tick, n);
};

Task<> producer(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<ConfigUpdated>()) continue;
    for (std::uint32_t i = 0; i < kTicks; ++i) std::ignore = co_await ctx.send(Tick{i});
  }
}

Task<> consumer(Context<> ctx) {
  std::uint32_t seen = 0;
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Tick>() && ++seen == kTicks) journal().add("consumed all");
  }
}

Topology node() {
  Topology topology;
  auto p = topology.local("producers");
  auto c = topology.local("consumers");
  p.route_to(c, filters::messages<Tick>());
  p.mount(ActorGroup().exec(producer)).entrypoint();
  c.mount(ActorGroup().exec(consumer));
  topology.local("system.telemeters").mount(telemeter::blueprint());
  return topology;
}

// The value of the single series `promql` selects, or nullopt when Prometheus has none (yet).
std::optional<double> single_value(const PrometheusProcess& prometheus, const std::string& promql) {
  auto answer = prometheus.query(promql);
  if (!answer || answer->value("status", "") != "success") return std::nullopt;
  const auto& result = (*answer)["data"]["result"];
  if (!result.is_array() || result.size() != 1) return std::nullopt;
  return std::stod(result[0]["value"][1].get<std::string>());  // [timestamp, "value"]
}

}  // namespace

TEST_CASE("Prometheus scrapes a running node's metrics with the values it produced", "[integration][prometheus]") {
  const auto binary = integration::find_program("prometheus");
  if (!binary) FAIL("the `prometheus` binary is not on PATH: install Debian's package (bash .ci/deps does)");

  journal().clear();
  StartOptions options = quick_options();
  options.config_toml = "[system.telemeters]\nlisten = \"127.0.0.1:0\"\n";
  auto proxy = testing::proxy(node(), "system.telemeters", std::move(options));
  REQUIRE(journal().wait_for_line("consumed all"));
  const std::string target = proxy.request(telemeter::GetListenAddress{});
  REQUIRE(target.starts_with("127.0.0.1:"));

  TempDir dir;  // outlives the server, which writes into it
  PrometheusProcess prometheus(*binary, dir.path(), target);
  INFO("prometheus on 127.0.0.1:" << prometheus.port() << ", scraping " << target);

  // Wait until a scrape of the node is queryable (start-up plus one scrape interval, usually 2-3 s).
  const std::string sent_query =
      R"(elfin_sent_messages_total{job="elfin",actor_group="producers",message="Tick",protocol="scraped"})";
  std::optional<double> sent;
  eventually(
      [&] {
        sent = single_value(prometheus, sent_query);
        return sent || !prometheus.running();
      },
      std::chrono::seconds(60), std::chrono::milliseconds(100));
  if (!sent && !prometheus.running()) FAIL("prometheus exited:\n" << prometheus.log());
  if (!sent) FAIL("no elfin metrics after 60 s; prometheus says:\n" << prometheus.log());

  CHECK(*sent == kTicks);
  CHECK(single_value(prometheus, R"(up{job="elfin"})") == 1.0);
  auto instance = prometheus.query(sent_query);
  REQUIRE(instance.has_value());
  CHECK((*instance)["data"]["result"][0]["metric"]["instance"] == target);

  // Waiting time is measured on a sample: the producer's first send in each run and one in eight
  // after it (plus the config update). All but possibly the last Tick's handling ended.
  auto waiting = single_value(prometheus, R"(elfin_message_waiting_time_seconds_count{actor_group="consumers"})");
  REQUIRE(waiting.has_value());
  constexpr std::uint32_t kSampledAtLeast = kTicks / 8;  // whole samples, rounded down
  CHECK(*waiting >= kSampledAtLeast);
  CHECK(*waiting <= kTicks + 1);
  auto handling =
      single_value(prometheus, R"(elfin_message_handling_time_seconds_count{actor_group="consumers",message="Tick"})");
  REQUIRE(handling.has_value());
  CHECK(*handling >= kTicks - 1);
  CHECK(
      single_value(prometheus,
                   R"(elfin_message_handling_time_seconds_bucket{actor_group="consumers",message="Tick",le="+Inf"})") ==
      handling);
  auto busy = single_value(prometheus, R"(elfin_busy_time_seconds_count{actor_group="consumers"})");
  REQUIRE(busy.has_value());
  CHECK(*busy > 0);

  CHECK(single_value(prometheus, R"(elfin_active_actors{actor_group="consumers",status="Normal"})") == 1.0);
  CHECK(single_value(prometheus, R"(elfin_active_actors{actor_group="producers",status="Normal"})") == 1.0);
  CHECK(single_value(prometheus, R"(elfin_restarting_actors{actor_group="consumers"})") == 0.0);
}
