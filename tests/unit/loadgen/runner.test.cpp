// The runner (elfin/loadgen/runner.hpp) with an in-memory workload: every operation counted once,
// by kind and error; operation numbers unique; progress reported; a worker that cannot start
// stops the run; the fixed-rate mode keeps to its schedule's count.
#include <elfin/loadgen/kv_workload.hpp>
#include <elfin/loadgen/runner.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

using namespace std::chrono_literals;
namespace lg = elfin::loadgen;

TEST_CASE("the runner runs --ops operations over its workers, each number once, counted by kind and error",
          "[loadgen]") {
  std::mutex mutex;
  std::multiset<std::uint64_t> seen;
  lg::Workload workload;
  workload.kinds = {"even", "odd"};
  workload.make_worker = [&](unsigned) -> lg::Operation {
    return [&](std::uint64_t op) {
      std::lock_guard lock(mutex);
      seen.insert(op);
      lg::Outcome outcome{op % 2};
      if (op % 10 == 3) outcome.error = "Unlucky";
      return outcome;
    };
  };
  const lg::RunResult result = lg::run(workload, {.workers = 4, .ops = 1000});
  REQUIRE_FALSE(result.setup_error);
  REQUIRE(seen.size() == 1000);
  CHECK(*seen.begin() == 0);
  CHECK(*seen.rbegin() == 999);
  CHECK(std::set<std::uint64_t>(seen.begin(), seen.end()).size() == 1000);
  CHECK(result.total.ops == 900);
  CHECK(result.total.errors.at("Unlucky") == 100);
  CHECK(result.per_kind.at(0).ops == 500);
  CHECK(result.per_kind.at(1).ops == 400);
  CHECK(result.per_kind.at(1).errors.at("Unlucky") == 100);
  CHECK(result.total.latency.count() == 900);
  const std::string json = lg::to_json(result);
  CHECK_THAT(json, Catch::Contains(R"("ops": 900)") && Catch::Contains(R"("odd": {"ops": 400)") &&
                       Catch::Contains(R"("errors": {"Unlucky": 100})"));
}

TEST_CASE("the runner reports progress per interval and stops at its duration", "[loadgen]") {
  std::atomic<int> progress{0};
  std::atomic<std::uint64_t> progress_ops{0};
  lg::Workload workload;
  workload.kinds = {"nap"};
  workload.make_worker = [](unsigned) -> lg::Operation {
    return [](std::uint64_t) {
      std::this_thread::sleep_for(1ms);  // the operation under test: takes about a millisecond
      return lg::Outcome{};
    };
  };
  lg::RunOptions options{.workers = 2, .duration = 1s, .progress_interval = 100ms};
  options.on_progress = [&](std::chrono::nanoseconds, const lg::RunSummary& interval) {
    ++progress;
    progress_ops += interval.ops;
    CHECK(interval.elapsed == 100ms);
  };
  const lg::RunResult result = lg::run(workload, options);
  CHECK(progress >= 1);
  CHECK(result.total.ops > 0);
  CHECK(progress_ops <= result.total.ops);  // the last, partial interval is in the total only
  CHECK(result.total.elapsed >= 1s);        // every worker stops only once it sees the deadline passed
}

TEST_CASE("a worker that cannot start stops the run before any operation", "[loadgen]") {
  std::atomic<int> calls{0};
  lg::Workload workload;
  workload.kinds = {"op"};
  workload.make_worker = [&](unsigned w) -> lg::Operation {
    if (w == 1) return {};
    return [&](std::uint64_t) {
      ++calls;
      return lg::Outcome{};
    };
  };
  const lg::RunResult result = lg::run(workload, {.workers = 3, .ops = 100});
  CHECK(result.setup_error == "worker 1 could not start");
  CHECK(calls == 0);
}

TEST_CASE("at a fixed rate the runner starts no more operations than the schedule holds", "[loadgen]") {
  std::atomic<int> calls{0};
  lg::Workload workload;
  workload.kinds = {"op"};
  workload.make_worker = [&](unsigned) -> lg::Operation {
    return [&](std::uint64_t) {
      ++calls;
      return lg::Outcome{};
    };
  };
  // 200 ops/s for 300 ms: operations 0..59 are scheduled before the deadline.
  const lg::RunResult result = lg::run(workload, {.workers = 3, .duration = 300ms, .rate = 200.0});
  CHECK(calls == 60);
  CHECK(result.total.ops == 60);
  CHECK(result.total.target_rate == 200.0);
}

TEST_CASE("the KV mix parses GET:PUT[:CAS] percentages and picks kinds by them", "[loadgen]") {
  CHECK(lg::KvMix::parse("90:10").has_value());
  CHECK(lg::KvMix::parse("50:45:5")->cas == 5);
  CHECK_FALSE(lg::KvMix::parse("50:40"));
  CHECK_FALSE(lg::KvMix::parse("50:40:5:5"));
  CHECK_FALSE(lg::KvMix::parse("a:100"));
  CHECK_FALSE(lg::KvMix::parse("100"));
  const lg::KvMix mix{70, 20, 10};
  CHECK(mix.pick(69) == lg::KvOp::Get);
  CHECK(mix.pick(70) == lg::KvOp::Put);
  CHECK(mix.pick(90) == lg::KvOp::Cas);
  CHECK(lg::key_name("k:", 42) == "k:00000042");
  CHECK(lg::kv_value(255, 5) == "ffvvv");
}
