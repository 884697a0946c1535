// Telemetry in the core: the built-in series, actors' own metrics, labels, and summing the
// per-thread shards at scrape time.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <stdexcept>

#include <elfin/detail/actor_telemetry.hpp>
#include <elfin/detail/envelope_block.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/group_series.hpp>
#include <elfin/detail/telemetry_clock.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/telemetry.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using namespace std::chrono_literals;

namespace {

struct Work {
  std::uint64_t key = 0;
  ELFIN_MESSAGE(telemetry_test, Work, key);
};

struct DriverConfig {
  std::uint32_t increments = 1;
  bool distinct_work = false;  // Work to keys 1, 2, 3 instead of 1, 2, 2
  ELFIN_CONFIG(increments, distinct_work);
};

// Sends Increments to the server and Work to the workers, then waits for the server's count.
Task<> driver(Context<DriverConfig> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<ConfigUpdated>()) continue;
    for (std::uint32_t i = 0; i < ctx.config().increments; ++i) std::ignore = co_await ctx.send(Increment{1});
    const std::uint64_t third = ctx.config().distinct_work ? 3 : 2;
    for (std::uint64_t key : {std::uint64_t{1}, std::uint64_t{2}, third}) std::ignore = co_await ctx.send(Work{key});
    metrics::increment_counter("driver_rounds_total", 2);
    metrics::set_gauge("driver_queue_depth", 7.5);
    metrics::record_histogram("driver_step_seconds", 0.003);
    GetValue get;
    auto value = co_await ctx.request(std::move(get));
    journal().add(fmt::format("driver done: {}", value ? *value : 0));
  }
}

// Set by the scraping race test: streaming_driver sends until it sees it.
std::atomic<bool> g_stop_streaming{false};

// Sends Increments until the test says stop, so scrapes are sure to overlap the sends.
Task<> streaming_driver(Context<DriverConfig> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<ConfigUpdated>()) continue;
    std::uint64_t sent = 0;
    while (!g_stop_streaming.load(std::memory_order_relaxed)) {
      std::ignore = co_await ctx.send(Increment{1});
      ++sent;
    }
    GetValue get;
    auto value = co_await ctx.request(std::move(get));
    journal().add(fmt::format("streamed: {} {}", sent, value ? *value : 0));
  }
}

Task<> server(Context<> ctx) {
  std::uint64_t value = 0;
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* m = envelope->get<Increment>()) value += m->delta;
    if (envelope->is<GetValue>()) ctx.respond(envelope->take_token<GetValue>(), value);
  }
}

Task<> worker(Context<NoConfig, std::uint64_t> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Work>()) {
      metrics::increment_counter("work_done_total");
      journal().add("work done");
    }
  }
}

Task<> idle(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

// Handles one Work, reports it to the server and ends (Terminated): its metrics must outlive it.
Task<> one_shot_worker(Context<NoConfig, std::uint64_t> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<Work>()) continue;
    std::ignore = co_await ctx.send(Increment{1});
    break;
  }
}

Outcome<std::uint64_t> route_work(const Envelope& envelope) {
  if (const auto* work = envelope.get<Work>()) return Outcome<std::uint64_t>::Unicast(work->key);
  return Outcome<std::uint64_t>::Default();
}

using Driver = Task<> (*)(Context<DriverConfig>);

Topology measured(bool with_telemeters, bool one_shot_workers = false, Driver drive = driver) {
  Topology topology;
  auto d = topology.local("driver");
  auto s = topology.local("server");
  auto w = topology.local("workers");
  d.route_to(s, filters::messages<Increment, GetValue>());
  d.route_to(w, filters::messages<Work>());
  d.mount(ActorGroup().config<DriverConfig>().exec(drive)).entrypoint();
  s.mount(ActorGroup().exec(server));
  w.route_to(s, filters::messages<Increment>());
  w.mount(ActorGroup().router(MapRouter<std::uint64_t>(route_work)).exec(one_shot_workers ? one_shot_worker : worker));
  if (with_telemeters) topology.local("system.telemeters").mount(ActorGroup().exec(idle));
  return topology;
}

using Labels = std::vector<std::pair<std::string, std::string>>;

const telemetry::MetricSample* find(const std::vector<telemetry::MetricSample>& samples, const std::string& name,
                                    const Labels& labels) {
  for (const auto& s : samples) {
    if (s.name != name) continue;
    bool all = std::all_of(labels.begin(), labels.end(), [&](const auto& label) {
      return std::find(s.labels.begin(), s.labels.end(), label) != s.labels.end();
    });
    if (all) return &s;
  }
  return nullptr;
}

std::vector<telemetry::MetricSample> run_and_scrape(const std::string& config, const std::string& done) {
  journal().clear();
  StartOptions options = quick_options();
  options.config_toml = config;
  auto system = System::start(measured(true), std::move(options));
  REQUIRE(system.ok());
  CHECK(journal().wait_for_line(done));
  // The driver's answer comes from the server; the workers' Work may still be under way.
  CHECK(journal().wait([](const auto& lines) { return std::count(lines.begin(), lines.end(), "work done") == 3; }));
  auto samples = system->scrape_metrics();
  system->terminate("test over");
  system->join();
  return samples;
}

}  // namespace

namespace {

// What a battery's collector adds (the network adds its elfin_network_* series this way).
void add_battery_series(std::atomic<int>& calls, std::vector<telemetry::MetricSample>& out) {
  ++calls;
  telemetry::MetricSample sample;
  sample.name = "battery_frames_total";
  sample.labels = {{"actor_group", "system.battery"}};
  sample.kind = telemetry::MetricKind::Counter;
  sample.value = 7;
  out.push_back(std::move(sample));
}

}  // namespace

TEST_CASE("a battery's scrape collector adds its series to every scrape, while telemetry is on", "[core][telemetry]") {
  std::atomic<int> calls{0};
  auto collector = [&calls](std::vector<telemetry::MetricSample>& out) { add_battery_series(calls, out); };

  SECTION("with system.telemeters") {
    journal().clear();
    auto system = System::start(measured(true), quick_options());
    REQUIRE(system.ok());
    detail::on_scrape(system->core_group("driver")->system(), collector);
    CHECK(journal().wait_for_line("driver done: 1"));
    auto samples = system->scrape_metrics();
    const auto* battery = find(samples, "battery_frames_total", {{"actor_group", "system.battery"}});
    REQUIRE(battery != nullptr);
    CHECK(battery->kind == telemetry::MetricKind::Counter);
    CHECK(battery->value == 7);
    CHECK(find(samples, "elfin_active_actors", {{"actor_group", "driver"}}) != nullptr);  // the runtime's own too
    std::ignore = system->scrape_metrics();
    CHECK(calls == 2);  // once per scrape
    system->terminate("test over");
    system->join();
  }

  SECTION("without: the collector is not even called") {
    journal().clear();
    auto system = System::start(measured(false), quick_options());
    REQUIRE(system.ok());
    detail::on_scrape(system->core_group("driver")->system(), collector);
    CHECK(journal().wait_for_line("driver done: 1"));
    CHECK(system->scrape_metrics().empty());
    CHECK(calls == 0);
    system->terminate("test over");
    system->join();
  }
}

TEST_CASE("without system.telemeters nothing is measured", "[core][telemetry]") {
  journal().clear();
  auto system = System::start(measured(false), quick_options());
  REQUIRE(system.ok());
  CHECK(journal().wait_for_line("driver done: 1"));
  CHECK(system->scrape_metrics().empty());
  system->terminate("test over");
  system->join();
}

TEST_CASE("sent messages are counted per group and message, summed over threads", "[core][telemetry]") {
  // 2000 sends from an actor that hops between two workers land in several shards.
  auto samples = run_and_scrape("[driver]\nincrements = 2000\n", "driver done: 2000");
  const auto* sent = find(samples, "elfin_sent_messages_total",
                          {{"actor_group", "driver"}, {"message", "Increment"}, {"protocol", "test"}});
  REQUIRE(sent != nullptr);
  CHECK(sent->kind == telemetry::MetricKind::Counter);
  CHECK(sent->value == 2000);
  const auto* work = find(samples, "elfin_sent_messages_total", {{"actor_group", "driver"}, {"message", "Work"}});
  REQUIRE(work != nullptr);
  CHECK(work->value == 3);
  const auto* requests =
      find(samples, "elfin_sent_messages_total", {{"actor_group", "driver"}, {"message", "GetValue"}});
  REQUIRE(requests != nullptr);
  CHECK(requests->value == 1);
}

TEST_CASE("handling, waiting and busy times are histograms per group", "[core][telemetry]") {
  auto samples = run_and_scrape("[driver]\nincrements = 50\n", "driver done: 50");
  const auto* handling =
      find(samples, "elfin_message_handling_time_seconds", {{"actor_group", "server"}, {"message", "Increment"}});
  REQUIRE(handling != nullptr);
  CHECK(handling->kind == telemetry::MetricKind::Histogram);
  // Each Increment's handling ends at the next recv; the last one may still be open.
  CHECK(handling->histogram.count >= 49);
  const auto* waiting = find(samples, "elfin_message_waiting_time_seconds", {{"actor_group", "server"}});
  REQUIRE(waiting != nullptr);
  // A sample (envelope_block.hpp): of the 50 Increments the driver sent in its runs, at least
  // the first and every eighth after it carry a send stamp.
  CHECK(waiting->histogram.count >= 7);
  std::uint64_t in_buckets = 0;
  for (auto c : waiting->histogram.counts) in_buckets += c;
  CHECK(in_buckets == waiting->histogram.count);
  const auto* busy = find(samples, "elfin_busy_time_seconds", {{"actor_group", "server"}});
  REQUIRE(busy != nullptr);
  CHECK(busy->histogram.count >= 1);
  CHECK(busy->histogram.sum > 0);
}

TEST_CASE("handling times count every message exactly, also where readings are shared", "[core][telemetry]") {
  // 2000 Increments in a row are the calm stream whose handlings share clock readings
  // (actor_telemetry.hpp); GetValue, another type, closes the last window before the answer.
  auto samples = run_and_scrape("[driver]\nincrements = 2000\n", "driver done: 2000");
  const auto* handling =
      find(samples, "elfin_message_handling_time_seconds", {{"actor_group", "server"}, {"message", "Increment"}});
  REQUIRE(handling != nullptr);
  CHECK(handling->histogram.count == 2000);
  CHECK(handling->histogram.sum > 0);
}

TEST_CASE("actor statuses are counted as changes and as active actors", "[core][telemetry]") {
  auto samples = run_and_scrape("", "driver done: 1");
  const auto* normal = find(samples, "elfin_active_actors", {{"actor_group", "workers"}, {"status", "Normal"}});
  REQUIRE(normal != nullptr);
  CHECK(normal->value == 2);  // keys 1 and 2
  const auto* changes =
      find(samples, "elfin_actor_status_changes_total", {{"actor_group", "workers"}, {"status", "Normal"}});
  REQUIRE(changes != nullptr);
  CHECK(changes->value == 2);
}

TEST_CASE("actors record their own counters, gauges and histograms under their group", "[core][telemetry]") {
  auto samples = run_and_scrape("", "driver done: 1");
  const auto* rounds = find(samples, "driver_rounds_total", {{"actor_group", "driver"}});
  REQUIRE(rounds != nullptr);
  CHECK(rounds->value == 2);
  const auto* depth = find(samples, "driver_queue_depth", {{"actor_group", "driver"}});
  REQUIRE(depth != nullptr);
  CHECK(depth->kind == telemetry::MetricKind::Gauge);
  CHECK(depth->value == 7.5);
  const auto* step = find(samples, "driver_step_seconds", {{"actor_group", "driver"}});
  REQUIRE(step != nullptr);
  CHECK(step->histogram.count == 1);
  CHECK(step->histogram.sum == Approx(0.003));
  const auto* work = find(samples, "work_done_total", {{"actor_group", "workers"}});
  REQUIRE(work != nullptr);
  CHECK(work->value == 3);
  CHECK(work->labels == Labels{{"actor_group", "workers"}});  // no actor_key unless asked for
}

TEST_CASE("system.telemetry.per_actor_key adds the actor_key label", "[core][telemetry]") {
  auto samples = run_and_scrape("[workers.system.telemetry]\nper_actor_key = true\n", "driver done: 1");
  const auto* one = find(samples, "work_done_total", {{"actor_group", "workers"}, {"actor_key", "1"}});
  const auto* two = find(samples, "work_done_total", {{"actor_group", "workers"}, {"actor_key", "2"}});
  REQUIRE(one != nullptr);
  REQUIRE(two != nullptr);
  CHECK(one->value == 1);
  CHECK(two->value == 2);
  const auto* driver = find(samples, "driver_rounds_total", {{"actor_group", "driver"}});
  REQUIRE(driver != nullptr);
  CHECK(driver->labels == Labels{{"actor_group", "driver"}});  // other groups unchanged
}

TEST_CASE("histogram buckets hold values up to their bound", "[core][telemetry]") {
  telemetry::Histogram h;
  h.record(1e-6);   // exactly the first bound
  h.record(2e-6);   // second bucket
  h.record(100.0);  // beyond the last bound: +Inf
  CHECK(h.counts[0] == 1);
  CHECK(h.counts[1] == 1);
  CHECK(h.counts.back() == 1);
  CHECK(h.count == 3);
  CHECK(h.sum == Approx(100.000003));
}

TEST_CASE("series histograms use the same buckets as telemetry::Histogram", "[core][telemetry]") {
  using namespace std::chrono;
  for (std::size_t i = 0; i < telemetry::kBuckets.size(); ++i) {
    const auto bound = nanoseconds(detail::SeriesHistogram::kBoundsNs[i]);
    for (auto value : {bound - nanoseconds(1), bound, bound + nanoseconds(1)}) {
      telemetry::Histogram expected;
      expected.record(duration<double>(value).count());
      detail::SeriesHistogram h;
      h.record_ns(static_cast<std::uint64_t>(value.count()));
      INFO("bucket " << i << ", " << value.count() << " ns");
      CHECK(h.load().counts == expected.counts);
    }
  }
  detail::SeriesHistogram h;
  h.record_ns(detail::telemetry_elapsed_ns(10, 5));  // a step backwards counts as no time
  h.record_ns(20'000'000'000);                       // 20 s, beyond the last bound: +Inf
  auto loaded = h.load();
  CHECK(loaded.counts.front() == 1);
  CHECK(loaded.counts.back() == 1);
  CHECK(loaded.count == 2);
  CHECK(loaded.sum == Approx(20.0));
}

TEST_CASE("a handling window within the first bucket puts all its messages there", "[core][telemetry]") {
  detail::SeriesHistogram h;
  h.record_window(8, 900);  // eight messages in 900 ns: each took at most 1 µs
  auto loaded = h.load();
  CHECK(loaded.counts.front() == 8);
  CHECK(loaded.count == 8);
  CHECK(loaded.sum == Approx(900e-9));
}

TEST_CASE("a handling window that took longer gives its time to one message", "[core][telemetry]") {
  detail::SeriesHistogram h;
  h.record_window(8, 5'000'000);  // 5 ms: one slow message among quick ones
  auto loaded = h.load();
  CHECK(loaded.counts.front() == 7);
  const auto five_ms = static_cast<std::size_t>(
      std::find(telemetry::kBuckets.begin(), telemetry::kBuckets.end(), 5e-3) - telemetry::kBuckets.begin());
  CHECK(loaded.counts[five_ms] == 1);  // in its own bucket, not spread as 8 × 0.6 ms
  CHECK(loaded.count == 8);
  CHECK(loaded.sum == Approx(0.005));
}

TEST_CASE("only an unstamped message of the handled type joins a calm actor's window", "[core][telemetry]") {
  using detail::ActorTelemetry;
  MessageVTable a;
  MessageVTable b;
  ActorTelemetry t;
  t.handling = &a;
  t.pending = 1;
  CHECK_FALSE(t.joins_window(&a, 0));  // not calm yet: every message is read alone
  t.calm = ActorTelemetry::kCalmRun;
  CHECK(t.joins_window(&a, 0));
  CHECK_FALSE(t.joins_window(&b, 0));       // another type: its own histogram
  CHECK_FALSE(t.joins_window(&a, 12345));   // a send stamp: its waiting time needs a reading
  CHECK_FALSE(t.joins_window(nullptr, 0));  // nothing taken: the handling ends now
  t.pending = ActorTelemetry::kWindow;
  CHECK_FALSE(t.joins_window(&a, 0));  // the window is full
}

TEST_CASE("an actor's first send in a run carries a send stamp, then one send in eight", "[core][telemetry]") {
  detail::calibrate_telemetry_clock();
  const bool was_on = detail::g_stamp_sends.exchange(true);
  detail::restart_send_sampling();
  std::vector<bool> stamped;
  for (std::uint32_t i = 0; i < 3 * detail::kStampOneSendIn; ++i) stamped.push_back(detail::send_stamp() != 0);
  detail::restart_send_sampling();  // the next run
  const bool first_of_next_run = detail::send_stamp() != 0;
  detail::g_stamp_sends.store(false);
  const bool when_off = detail::send_stamp() != 0;
  detail::g_stamp_sends.store(was_on);

  for (std::size_t i = 0; i < stamped.size(); ++i) {
    INFO("send " << i);
    CHECK(stamped[i] == (i % detail::kStampOneSendIn == 0));
  }
  CHECK(first_of_next_run);
  CHECK_FALSE(when_off);  // without a telemeter no send reads the clock
}

TEST_CASE("a group's series keeps one slot per message type, however many types", "[core][telemetry]") {
  std::vector<MessageVTable> types(11);  // more than one chunk of slots
  for (std::size_t i = 0; i < types.size(); ++i) types[i].name = "m";
  detail::GroupSeries series(nullptr, nullptr);
  for (std::size_t round = 0; round < 3; ++round) {
    for (std::size_t i = 0; i < types.size(); ++i) series.of(types[i]).sent.add(i + 1);
  }
  std::vector<std::pair<const MessageVTable*, std::uint64_t>> seen;
  series.for_each_message([&](const detail::MessageSeries& m) {
    seen.emplace_back(m.message.load(std::memory_order_acquire), m.sent.load());
  });
  REQUIRE(seen.size() == types.size());
  for (std::size_t i = 0; i < types.size(); ++i) {
    CHECK(seen[i].first == &types[i]);
    CHECK(seen[i].second == 3 * (i + 1));
  }
}

TEST_CASE("metrics of actors that finished are not lost at scrape", "[core][telemetry]") {
  journal().clear();
  StartOptions options = quick_options();
  options.config_toml = "[driver]\ndistinct_work = true\n";
  auto system = System::start(measured(true, true), std::move(options));
  REQUIRE(system.ok());
  // Wait (with a deadline) until the three workers (keys 1, 2, 3) have sent and ended.
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  std::vector<telemetry::MetricSample> samples;
  auto terminated = [&] {
    const auto* t =
        find(samples, "elfin_actor_status_changes_total", {{"actor_group", "workers"}, {"status", "Terminated"}});
    return t != nullptr && t->value == 3;
  };
  do {
    samples = system->scrape_metrics();
  } while (!terminated() && std::chrono::steady_clock::now() < deadline);
  system->terminate("test over");
  system->join();
  REQUIRE(terminated());

  const auto* sent = find(samples, "elfin_sent_messages_total", {{"actor_group", "workers"}, {"message", "Increment"}});
  REQUIRE(sent != nullptr);
  CHECK(sent->value == 3);
  // Their last message's handling ended when exec returned, not at a recv that never came.
  const auto* handling =
      find(samples, "elfin_message_handling_time_seconds", {{"actor_group", "workers"}, {"message", "Work"}});
  REQUIRE(handling != nullptr);
  CHECK(handling->histogram.count == 3);
  const auto* busy = find(samples, "elfin_busy_time_seconds", {{"actor_group", "workers"}});
  REQUIRE(busy != nullptr);
  CHECK(busy->histogram.count >= 3);
  const auto* normal = find(samples, "elfin_active_actors", {{"actor_group", "workers"}, {"status", "Normal"}});
  REQUIRE(normal != nullptr);
  CHECK(normal->value == 0);
}

TEST_CASE("scraping while actors record sees counts only grow and histograms whole", "[core][telemetry]") {
  // Under ThreadSanitizer this is the race test of the lock-free series (group_series.hpp).
  journal().clear();
  g_stop_streaming = false;
  auto system = System::start(measured(true, false, streaming_driver), quick_options());
  REQUIRE(system.ok());
  double last_sent = 0;
  std::size_t scrapes = 0, grew = 0, shrank = 0, torn = 0;
  auto scrape_once = [&] {
    auto samples = system->scrape_metrics();
    ++scrapes;
    if (const auto* sent =
            find(samples, "elfin_sent_messages_total", {{"actor_group", "driver"}, {"message", "Increment"}})) {
      if (sent->value < last_sent) ++shrank;
      if (sent->value > last_sent) ++grew;
      last_sent = sent->value;
    }
    for (const auto& s : samples) {
      if (s.kind != telemetry::MetricKind::Histogram) continue;
      std::uint64_t in_buckets = 0;
      for (auto c : s.histogram.counts) in_buckets += c;
      if (in_buckets != s.histogram.count) ++torn;
    }
  };
  // The driver streams until told to stop: scrape until its count has grown between scrapes
  // several times, so the scrapes provably ran while it recorded.
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while ((grew < 20 || scrapes < 200) && std::chrono::steady_clock::now() < deadline) scrape_once();
  g_stop_streaming = true;
  CHECK(grew >= 20);
  REQUIRE(journal().wait([](const auto& lines) {
    return std::any_of(lines.begin(), lines.end(), [](const auto& l) { return l.starts_with("streamed: "); });
  }));
  scrape_once();
  system->terminate("test over");
  system->join();
  const auto streamed = journal().with_prefix("streamed: ").front();
  const auto expected = fmt::format("streamed: {0} {0}", static_cast<std::uint64_t>(last_sent));
  CHECK(streamed == expected);  // every sent Increment was counted, and reached the server
  CHECK(shrank == 0);
  CHECK(torn == 0);
}

TEST_CASE("the telemetry clock measures durations as steady_clock does", "[core][telemetry]") {
  detail::calibrate_telemetry_clock();
  using namespace std::chrono;
  const auto t0 = detail::telemetry_stamp();
  const auto s0 = steady_clock::now();
  std::this_thread::sleep_for(milliseconds(50));  // the interval measured, not a wait for an event
  const auto t1 = detail::telemetry_stamp();
  const auto s1 = steady_clock::now();
  const auto by_telemetry = static_cast<std::int64_t>(detail::telemetry_elapsed_ns(t0, t1) / 1000);
  const auto by_steady = duration_cast<microseconds>(s1 - s0).count();
  INFO("telemetry clock: " << by_telemetry << " us, steady_clock: " << by_steady << " us, TSC "
                           << (detail::g_tsc_calibration.load() != nullptr ? "in use" : "not trusted"));
  CHECK(by_telemetry >= 50'000);
  CHECK(std::abs(by_telemetry - by_steady) <= 1'000 + by_steady / 100);  // the pairs' reads are not simultaneous
  CHECK(detail::telemetry_stamp() >= t1);
  CHECK(detail::telemetry_elapsed_ns(t1, t0) == 0);  // backwards is no time, not a huge one
}

namespace {

std::atomic<int> g_phoenix_starts{0};

// Fails at once on its first three starts, then stays.
Task<> phoenix(Context<> ctx) {
  if (g_phoenix_starts.fetch_add(1) < 3) throw std::runtime_error("not yet");
  while (auto envelope = co_await ctx.recv()) {
  }
}

}  // namespace

TEST_CASE("restarts are counted per group", "[core][telemetry]") {
  g_phoenix_starts = 0;
  Topology topology;
  topology.local("phoenix")
      .mount(ActorGroup().restart_policy(RestartPolicy::on_failure(RestartParams{1ms, 1ms})).exec(phoenix))
      .entrypoint();
  topology.local("system.telemeters").mount(ActorGroup().exec(idle));
  auto system = System::start(std::move(topology), quick_options());
  REQUIRE(system.ok());
  CHECK(eventually([&] {
    const auto samples = system->scrape_metrics();
    const auto* restarts = find(samples, "elfin_restarts_total", {{"actor_group", "phoenix"}});
    return restarts != nullptr && restarts->value == 3 && restarts->kind == telemetry::MetricKind::Counter;
  }));
  system->terminate("test over");
  system->join();
}

namespace {

// Makes three requests: one answered, one dropped by its recipient, one whose recipient fails.
Task<> asking(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<ConfigUpdated>()) continue;
    GetValue get;
    std::ignore = co_await ctx.request(std::move(get));
    Echo echo{"dropped"};
    std::ignore = co_await ctx.request(std::move(echo));
    Gate gate{"fails"};
    std::ignore = co_await ctx.request(std::move(gate));
    journal().add("asked");
  }
}

Task<> crashing(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Gate>()) throw std::runtime_error("cannot open");
  }
}

}  // namespace

TEST_CASE("requests are counted by outcome, with their answer time, on the requester's side", "[core][telemetry]") {
  journal().clear();
  Topology topology;
  auto a = topology.local("asking");
  auto s = topology.local("server");
  auto i = topology.local("ignorer");
  auto c = topology.local("crasher");
  a.route_to(s, filters::messages<GetValue>());
  a.route_to(i, filters::messages<Echo>());
  a.route_to(c, filters::messages<Gate>());
  a.mount(ActorGroup().exec(asking)).entrypoint();
  s.mount(ActorGroup().exec(server));
  i.mount(ActorGroup().exec(idle));
  c.mount(ActorGroup().exec(crashing));
  topology.local("system.telemeters").mount(ActorGroup().exec(idle));
  auto system = System::start(std::move(topology), quick_options());
  REQUIRE(system.ok());
  REQUIRE(journal().wait_for_line("asked"));
  const auto samples = system->scrape_metrics();
  auto requests = [&](const char* message, const char* outcome) {
    const auto* s =
        find(samples, "elfin_requests_total", {{"actor_group", "asking"}, {"message", message}, {"outcome", outcome}});
    return s == nullptr ? -1.0 : s->value;
  };
  CHECK(requests("GetValue", "Ok") == 1);
  CHECK(requests("Echo", "Ignored") == 1);
  CHECK(requests("Gate", "Failed") == 1);
  CHECK(requests("GetValue", "Failed") == -1);  // no series for what did not happen
  const auto* took = find(samples, "elfin_request_time_seconds", {{"actor_group", "asking"}, {"message", "GetValue"}});
  REQUIRE(took != nullptr);
  CHECK(took->kind == telemetry::MetricKind::Histogram);
  CHECK(took->histogram.count == 1);
  // The recipients measured nothing of it as requesters.
  CHECK(find(samples, "elfin_requests_total", {{"actor_group", "server"}}) == nullptr);
  system->terminate("test over");
  system->join();
}

TEST_CASE("a test proxy's sends and requests are counted like an actor's", "[core][telemetry]") {
  // The proxy's sends pass the same observation point as an actor's: counted as sent by its group,
  // and its request's answer counted by outcome on its side.
  Topology topology;
  topology.local("server").mount(ActorGroup().exec(server));
  topology.local("system.telemeters").mount(ActorGroup().exec(idle));
  auto proxy = testing::proxy(std::move(topology), "server", quick_options());
  proxy.send(Increment{2});
  CHECK(proxy.request(GetValue{}) == 2);
  const auto samples = proxy.system().scrape_metrics();
  for (const char* message : {"Increment", "GetValue"}) {
    INFO(message);
    const auto* sent =
        find(samples, "elfin_sent_messages_total", {{"actor_group", "system.testers"}, {"message", message}});
    REQUIRE(sent != nullptr);
    CHECK(sent->value == 1);
  }
  const auto* ok = find(samples, "elfin_requests_total",
                        {{"actor_group", "system.testers"}, {"message", "GetValue"}, {"outcome", "Ok"}});
  REQUIRE(ok != nullptr);
  CHECK(ok->value == 1);
}
