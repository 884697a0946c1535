// bench_linearizability: how fast the history checker (libs/linearizability) checks a KV history,
// the figure that decides how long a fault-injection run's history may be.
//
//   check_1000_keys            100k operations over 1000 keys by 16 clients (2% without answer),
//                              generated from a real sequential store with random overlaps, checked
//                              on one thread; ops = operations checked
//   check_1000_keys_2_threads  the same history, keys spread over 2 threads
//   check_10_keys              100k operations over 10 keys by 16 clients: every key's history is
//                              10k operations with up to 16 overlapping, the checker's hard case
//
// The history is generated before the clock starts (tests/unit/linearizability/random_history.hpp,
// the one the tests use); each run checks it and must answer Ok, so a broken checker cannot report a
// figure. No peer: the lines say caf_ops_per_s=n/a.
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <elfin/linearizability/checker.hpp>
#include <elfin/linearizability/kv_model.hpp>

#include "bench_common.hpp"
#include "linearizability/random_history.hpp"

namespace {

using elfin_bench::Figure;
using elfin_bench::Options;
using Clock = std::chrono::steady_clock;
namespace lin = elfin::linearizability;

constexpr std::string_view kBench = "linearizability";

Figure check_once(const lin_test::KvHistory& history, unsigned threads) {
  const auto start = Clock::now();
  const lin::CheckResult result = lin::check(lin::KvModel{}, history, {.threads = threads});
  const auto end = Clock::now();
  if (!result.ok()) throw std::runtime_error("the generated history was not found linearizable: " + result.summary());
  return {elfin_bench::seconds_between(start, end), history.size()};
}

elfin_bench::Case check_case(std::string name, std::size_t keys, unsigned threads) {
  return {name, "check", [name, keys, threads](const Options& o) {
            lin_test::GenOptions gen;
            gen.operations = o.quick ? 10'000 : 100'000;
            gen.keys = keys;
            gen.clients = 16;
            gen.pending = 0.02;
            gen.seed = 7;
            const lin_test::KvHistory history = lin_test::generate(gen);
            return elfin_bench::run_case(
                kBench, name, o, [&] { return check_once(history, threads); }, {},
                fmt::format(" operations={} keys={} clients={} pending={} check_threads={}", gen.operations, keys,
                            gen.clients, gen.pending, threads));
          }};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<elfin_bench::Case> cases;
  cases.push_back(check_case("check_1000_keys", 1000, 1));
  cases.push_back(check_case("check_1000_keys_2_threads", 1000, 2));
  cases.push_back(check_case("check_10_keys", 10, 1));
  return elfin_bench::run_main(kBench, std::move(cases), argc, argv);
}
