// bench_sharding: what routing by shard and rebalancing cost, on one thread, without actors.
//
//   shard_jump_xxh64   ShardFunction jump-xxh64/1:1024 `shard_of` over 4096 distinct keys
//                      ("user:<n>", 6-9 bytes) cycled; ops = keys routed
//   shard_shardcake    the same with shardcake/1:300 (UTF-8 decoding + Java hash + modulo)
//   rebalance_10_pods_from_empty   plan_rebalance + apply: 1024 unassigned shards placed on 10
//                      pods in one immediate round (the first registration); ops = rounds
//   rebalance_100_pods_from_empty  the same over 100 pods
//   rebalance_10_pods_one_added    10 pods holding 1024 shards evenly, an 11th joins: one
//                      regular round (21 shards move, the cap); ops = rounds
//   rebalance_100_pods_one_added   the same with 100 pods and a 101st (10 shards move)
//
// There is no peer: the lines say caf_ops_per_s=n/a. Each run is verified (every key in range, the
// expected number of moves), so a broken build cannot report a figure.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <elfin/assignment/rebalance.hpp>
#include <elfin/hashing/shard_function.hpp>

#include "bench_common.hpp"

namespace {

using elfin_bench::Figure;
using elfin_bench::Options;
using Clock = std::chrono::steady_clock;
namespace assignment = elfin::assignment;
namespace hashing = elfin::hashing;

constexpr std::string_view kBench = "sharding";

std::vector<std::string> make_keys(std::size_t n) {
  std::vector<std::string> keys;
  keys.reserve(n);
  for (std::size_t i = 0; i < n; ++i) keys.push_back(fmt::format("user:{}", i));
  return keys;
}

Figure route(const hashing::ShardFunction& function, std::uint64_t ops) {
  static const std::vector<std::string> keys = make_keys(4096);
  std::uint64_t sum = 0;
  std::uint64_t failed = 0;
  const auto start = Clock::now();
  for (std::uint64_t i = 0; i < ops; ++i) {
    const auto shard = function.shard_of(keys[i & 4095]);
    if (shard) {
      sum += *shard;
    } else {
      ++failed;
    }
  }
  const auto end = Clock::now();
  // Each key routed ops/4096 times: the sum is within the shard range times ops.
  if (failed != 0 || sum < ops * function.first_shard() || sum > ops * function.last_shard()) {
    throw std::runtime_error(fmt::format("{}: {} keys without a shard, sum {}", function, failed, sum));
  }
  return {elfin_bench::seconds_between(start, end), ops};
}

std::vector<assignment::Pod> make_pods(int n) {
  std::vector<assignment::Pod> pods;
  pods.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) pods.push_back({{fmt::format("10.0.{}.{}:54321", i / 256, i % 256), 1}, {1, 0, 0}});
  return pods;
}

// `rounds` times: plan one round over `pods` from `map`, apply it; checks the number of moves.
Figure rebalance(const std::vector<assignment::Pod>& pods, const assignment::AssignmentMap& map,
                 assignment::RoundKind kind, std::size_t expected_moves, std::uint64_t rounds) {
  std::size_t moves = 0;
  std::uint64_t epochs = 0;
  const auto start = Clock::now();
  for (std::uint64_t i = 0; i < rounds; ++i) {
    const auto plan = assignment::plan_rebalance(pods, map, kind);
    auto next = map.apply(plan);
    if (!next) throw std::runtime_error(fmt::format("{}", next.error()));
    moves = plan.moves.size();
    epochs += next->epoch();
  }
  const auto end = Clock::now();
  if (moves != expected_moves || epochs != rounds * (map.epoch() + 1)) {
    throw std::runtime_error(fmt::format("{} moves, expected {}", moves, expected_moves));
  }
  return {elfin_bench::seconds_between(start, end), rounds};
}

// `pods` pods holding 1024 shards (0..1023) as evenly as a regular round leaves them.
assignment::AssignmentMap balanced(const std::vector<assignment::Pod>& pods) {
  std::map<assignment::ShardId, std::optional<assignment::PodId>> owners;
  for (assignment::ShardId s = 0; s < 1024; ++s) owners.emplace(s, pods[s % pods.size()].id);
  return assignment::AssignmentMap::from_owners(std::move(owners), 7);
}

elfin_bench::Case from_empty(int pod_count) {
  const std::string name = fmt::format("rebalance_{}_pods_from_empty", pod_count);
  return {name, "rebalance", [name, pod_count](const Options& o) {
            const auto pods = make_pods(pod_count);
            const auto map = assignment::AssignmentMap::unassigned(0, 1024);
            const std::uint64_t rounds = o.quick ? 100 : (pod_count >= 100 ? 1000 : 3000);
            return elfin_bench::run_case(
                kBench, name, o, [&] { return rebalance(pods, map, assignment::RoundKind::Immediate, 1024, rounds); },
                {}, fmt::format(" shards=1024 pods={}", pod_count));
          }};
}

elfin_bench::Case one_added(int pod_count, std::size_t expected_moves) {
  const std::string name = fmt::format("rebalance_{}_pods_one_added", pod_count);
  return {name, "rebalance", [name, pod_count, expected_moves](const Options& o) {
            auto pods = make_pods(pod_count + 1);
            const auto map = balanced({pods.begin(), pods.end() - 1});
            const std::uint64_t rounds = o.quick ? 100 : (pod_count >= 100 ? 1000 : 3000);
            return elfin_bench::run_case(
                kBench, name, o,
                [&] { return rebalance(pods, map, assignment::RoundKind::Regular, expected_moves, rounds); }, {},
                fmt::format(" shards=1024 pods={} moves={}", pod_count + 1, expected_moves));
          }};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<elfin_bench::Case> cases;
  cases.push_back({"shard_jump_xxh64", "shard", [](const Options& o) {
                     const std::uint64_t ops = o.quick ? 1'000'000 : 20'000'000;
                     const auto function = hashing::ShardFunction::jump_xxh64_default();
                     return elfin_bench::run_case(
                         kBench, "shard_jump_xxh64", o, [&] { return route(function, ops); }, {},
                         " function=jump-xxh64/1:1024 keys=4096");
                   }});
  cases.push_back({"shard_shardcake", "shard", [](const Options& o) {
                     const std::uint64_t ops = o.quick ? 1'000'000 : 20'000'000;
                     const auto function = hashing::ShardFunction::shardcake_default();
                     return elfin_bench::run_case(
                         kBench, "shard_shardcake", o, [&] { return route(function, ops); }, {},
                         " function=shardcake/1:300 keys=4096");
                   }});
  cases.push_back(from_empty(10));
  cases.push_back(from_empty(100));
  cases.push_back(one_added(10, 21));   // 1024 x 0.02 -> at most 21 to the newcomer
  cases.push_back(one_added(100, 10));  // the newcomer reaches the average, 10, before the cap
  return elfin_bench::run_main(kBench, std::move(cases), argc, argv);
}
