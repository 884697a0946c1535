// The progress line and the final report as a user reads them.
#include <catch2/catch.hpp>

#include <string>

#include <elfin/loadgen/report.hpp>

namespace lg = elfin::loadgen;
using namespace std::chrono_literals;

TEST_CASE("durations print with three significant digits and their unit", "[loadgen]") {
  CHECK(lg::format_duration(850) == "850ns");
  CHECK(lg::format_duration(12'345) == "12.3µs");
  CHECK(lg::format_duration(1'210'000) == "1.21ms");
  CHECK(lg::format_duration(250'000'000) == "250ms");
  CHECK(lg::format_duration(2'500'000'000) == "2.50s");
}

TEST_CASE("the final report gives throughput, percentiles and errors by kind", "[loadgen]") {
  lg::RunSummary run;
  run.elapsed = 5s;
  run.ops = 60'000;
  for (int i = 0; i < 1000; ++i) run.latency.record(1'000'000);
  run.latency.record(20'000'000);
  run.errors["Timeout"] = 1;
  run.errors["NotLeader"] = 2;
  run.target_rate = 12'000;
  const std::string report = lg::final_report(run);
  INFO(report);
  CHECK(report.find("ops        60000 in 5.00s: 12000 ops/s (asked 12000;") != std::string::npos);
  CHECK(report.find("p50 1.00ms") != std::string::npos);
  CHECK(report.find("max 20.0ms") != std::string::npos);
  CHECK(report.find("errors     3: NotLeader 2, Timeout 1\n") != std::string::npos);

  const std::string line = lg::progress_line(10s, run);
  INFO(line);
  CHECK(line.rfind("[  10.0s] 12000 ops/s  p50 1.00ms", 0) == 0);
  CHECK(line.find("errors 3") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
}
