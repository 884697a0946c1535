// A pod reports the pods its senders cannot reach to the manager, at most once per
// unhealthy_report_interval per target (the sharding study's §4.3, item 15): a sender that fails
// on every message must not flood the manager with health checks.
#include <chrono>
#include <cstdint>
#include <string_view>
#include <thread>

#include <catch2/catch.hpp>

#include <elfin/protocols/sharding/pod_ref.hpp>

#include "pod_cluster.hpp"

using namespace std::chrono_literals;
using elfin::test::eventually;
using elfin::test::PodCluster;

namespace {

double manager_counter(PodCluster& cluster, std::string_view name) {
  double value = 0;
  for (const auto& sample : cluster.proxy().system().scrape_metrics()) {
    if (sample.name != name) continue;
    for (const auto& [label, text] : sample.labels) {
      if (label == "actor_group" && text == "sharding.manager") value += sample.value;
    }
  }
  return value;
}

}  // namespace

TEST_CASE("sharding pods: reports of unreachable pods reach the manager at most once per interval per target",
          "[sharding]") {
  constexpr auto interval = 300ms;
  PodCluster cluster(2, "1h", true, false, "unhealthy_report_interval = \"300ms\"");
  REQUIRE(eventually([&] { return cluster.assignments().pods.size() == 2; }));
  constexpr std::string_view kReports = "elfin_shard_manager_unhealthy_reports_total";
  REQUIRE(manager_counter(cluster, kReports) == 0);

  // Pod 1's senders find two pods unreachable on every send, about a thousand times each. The
  // pod's report tick runs every 100 ms, so without the limit each target would be reported ~12
  // times.
  const elfin::protocols::sharding::PodRef gone{"pod-9", 9};  // a pod nobody runs
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t notes = 0;
  while (std::chrono::steady_clock::now() - start < 1200ms) {
    cluster.cache(1).note_unreachable(PodCluster::ref(2));
    cluster.cache(1).note_unreachable(gone);
    ++notes;
    std::this_thread::sleep_for(1ms);  // pacing the notes over 1.2 s, not a wait for a condition
  }
  REQUIRE(eventually([&] { return manager_counter(cluster, kReports) >= 2; }));
  const double reports = manager_counter(cluster, kReports);
  // Every report counted was sent between `start` and now: per target, one at once and then at
  // most one per interval.
  const auto window = std::chrono::steady_clock::now() - start;
  const auto limit = 2 * (window / interval + 1);
  INFO(notes << " notes per target, " << reports << " reports in "
             << std::chrono::duration_cast<std::chrono::milliseconds>(window).count() << " ms; limit " << limit);
  CHECK(notes >= 100);
  CHECK(reports <= static_cast<double>(limit));
}
