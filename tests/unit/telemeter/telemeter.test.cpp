// The telemeter: a real HTTP endpoint serving the system's metrics in Prometheus's text format.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <asio.hpp>

#include <elfin/telemeter/prometheus_text.hpp>
#include <elfin/telemeter/telemeter.hpp>

#include "../core/test_support.hpp"

using namespace elfin;
using namespace elfin::test;

namespace {

// A plain HTTP/1.0 GET over loopback: the body, or the error.
std::string http_get(const std::string& host_port, const std::string& path) {
  auto colon = host_port.rfind(':');
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address(host_port.substr(0, colon)),
                  static_cast<unsigned short>(std::stoi(host_port.substr(colon + 1)))});
  std::string request = "GET " + path + " HTTP/1.0\r\nHost: " + host_port + "\r\n\r\n";
  asio::write(socket, asio::buffer(request));
  std::string response;
  asio::error_code ec;
  asio::read(socket, asio::dynamic_buffer(response), ec);  // until the server closes
  auto body = response.find("\r\n\r\n");
  return body == std::string::npos ? response : response.substr(body + 4);
}

struct Hello {
  ELFIN_MESSAGE(telemeter_test, Hello);
};

// Greets the echo group a few times, then asks the telemeter where it listens.
Task<> asker(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<ConfigUpdated>()) continue;
    for (int i = 0; i < 3; ++i) std::ignore = co_await ctx.send(Hello{});
    metrics::increment_counter("asker_greetings_total", 3);
    telemeter::GetListenAddress question;
    auto address = co_await ctx.request(std::move(question));
    journal().add("listening on " + address.value_or("?"));
  }
}

Task<> sink(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Hello>()) journal().add("sink got Hello");
  }
}

Topology with_telemeter() {
  Topology topology;
  auto a = topology.local("asker");
  auto s = topology.local("sink");
  auto t = topology.local("system.telemeters");
  a.route_to(s, filters::messages<Hello>());
  a.route_to(t, filters::messages<telemeter::GetListenAddress>());
  a.mount(ActorGroup().exec(asker)).entrypoint();
  s.mount(ActorGroup().exec(sink));
  t.mount(telemeter::blueprint());
  return topology;
}

bool is_listening_line(const std::string& line) { return line.starts_with("listening on"); }

// The families of `body` with a `# TYPE` line and no `# HELP` line.
std::vector<std::string> families_without_help(const std::string& body) {
  std::vector<std::string> typed;
  std::vector<std::string> helped;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string hash, kind, name;
    words >> hash >> kind >> name;
    if (hash != "#") continue;
    if (kind == "TYPE") typed.push_back(name);
    if (kind == "HELP" && words.peek() != EOF) helped.push_back(name);
  }
  std::vector<std::string> out;
  for (const auto& name : typed) {
    if (std::find(helped.begin(), helped.end(), name) == helped.end()) out.push_back(name);
  }
  return out;
}

// A system with the telemeter on a free loopback port; the asker reports the address it got.
Result<System, StartError> start_with_telemeter() {
  journal().clear();
  StartOptions options = quick_options();
  options.config_toml = "[system.telemeters]\nlisten = \"127.0.0.1:0\"\n";
  return System::start(with_telemeter(), std::move(options));
}

}  // namespace

TEST_CASE("the telemeter serves the built-in metrics on /metrics", "[telemeter]") {
  metrics::describe("asker_greetings_total", "Hellos the asker sent");
  auto system = start_with_telemeter();
  REQUIRE(system.ok());
  // The asker's first Hello carries a send stamp (the first send of its run), so once the sink
  // has taken all three its waiting time has been recorded.
  REQUIRE(journal().wait([](const auto& lines) {
    return std::count(lines.begin(), lines.end(), "sink got Hello") == 3 &&
           std::any_of(lines.begin(), lines.end(), is_listening_line);
  }));
  auto lines = journal().lines();
  auto line = *std::find_if(lines.begin(), lines.end(), is_listening_line);
  REQUIRE(line.starts_with("listening on 127.0.0.1:"));
  auto address = line.substr(std::string{"listening on "}.size());
  CHECK_FALSE(address.ends_with(":0"));  // the port actually bound

  auto body = http_get(address, "/metrics");
  CHECK_THAT(body, Catch::Contains("# TYPE elfin_sent_messages_total counter"));
  CHECK_THAT(
      body,
      Catch::Contains(R"(elfin_sent_messages_total{actor_group="asker",message="Hello",protocol="telemeter_test"} 3)"));
  CHECK_THAT(body, Catch::Contains(R"(elfin_active_actors{actor_group="sink",status="Normal"} 1)"));
  CHECK_THAT(body, Catch::Contains("# TYPE elfin_message_waiting_time_seconds histogram"));
  CHECK_THAT(body, Catch::Contains(R"(elfin_message_waiting_time_seconds_bucket{actor_group="sink",le="+Inf"})"));
  // Every family explains itself: the runtime's, and an actor's own once described.
  CHECK_THAT(body, Catch::Contains("# HELP elfin_sent_messages_total Messages the group's actors sent"));
  CHECK_THAT(body, Catch::Contains("# HELP asker_greetings_total Hellos the asker sent"));
  CHECK(families_without_help(body) == std::vector<std::string>{});
  system->terminate("test over");
  system->join();
}

TEST_CASE("a telemeter that cannot listen fails with the address in the reason", "[telemeter]") {
  // Hold a port, then ask the telemeter to serve on it.
  asio::io_context io;
  asio::ip::tcp::acceptor taken(io, {asio::ip::make_address("127.0.0.1"), 0});
  auto port = taken.local_endpoint().port();
  StatusLog statuses;
  StartOptions options = quick_options();
  options.on_status = statuses.callback();
  options.config_toml = fmt::format("[system.telemeters]\nlisten = \"127.0.0.1:{}\"\n", port);
  Topology topology;
  topology.local("system.telemeters").mount(telemeter::blueprint());
  auto system = System::start(std::move(topology), std::move(options));
  REQUIRE(system.ok());
  auto failed = statuses.wait_for("system.telemeters", "_", ActorStatusKind::Failed);
  REQUIRE(failed.has_value());
  CHECK_THAT(failed->details(), Catch::Contains(fmt::format("cannot serve metrics on 127.0.0.1:{}", port)));
  system->terminate("test over");
  system->join();
}

TEST_CASE("histograms become cumulative buckets, families are grouped by name", "[telemeter]") {
  telemetry::MetricSample h;
  h.name = "x_seconds";
  h.kind = telemetry::MetricKind::Histogram;
  h.histogram.record(1e-6);
  h.histogram.record(3e-6);
  h.histogram.record(50.0);
  telemetry::MetricSample c1{"y_total", {{"actor_group", "b"}}, telemetry::MetricKind::Counter, 2, {}};
  telemetry::MetricSample c2{"y_total", {{"actor_group", "a"}}, telemetry::MetricKind::Counter, 5, {}};
  auto families = telemeter::to_families({h, c1, c2});
  REQUIRE(families.size() == 2);
  CHECK(families[0].name == "x_seconds");
  const auto& buckets = families[0].metric[0].histogram.bucket;
  REQUIRE(buckets.size() == telemetry::kBuckets.size() + 1);
  CHECK(buckets[0].cumulative_count == 1);                   // le=1e-6
  CHECK(buckets[2].cumulative_count == 2);                   // le=5e-6
  CHECK(buckets[buckets.size() - 2].cumulative_count == 2);  // le=10
  CHECK(buckets.back().cumulative_count == 3);               // +Inf
  CHECK(families[1].name == "y_total");
  CHECK(families[1].metric.size() == 2);
}

TEST_CASE("a system with a telemeter stops without waiting out the HTTP server's poll", "[telemeter]") {
  // civetweb's accepting thread polls its socket for up to 2 s between looks at its stop flag;
  // the endpoint wakes it (metrics_endpoint.hpp), so stopping takes milliseconds, not 2 s.
  auto system = start_with_telemeter();
  REQUIRE(system.ok());
  REQUIRE(journal().wait([](const auto& lines) {  // the server is up
    return std::any_of(lines.begin(), lines.end(), is_listening_line);
  }));
  const auto before = std::chrono::steady_clock::now();
  system->terminate("test over");
  system->join();
  const auto took = std::chrono::steady_clock::now() - before;
  INFO("terminate + join took " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
  CHECK(took < std::chrono::milliseconds(1500));
}
