// Runs every SObjectizer peer workload once with small sizes and prints one line per case, to
// check the SObjectizer side in isolation (it compiles no SObjectizer header, like elfin's
// benchmark binaries that link the same library).
#include "elfin_bench/so_peer.hpp"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>

namespace {

namespace peer = elfin_bench::so_peer;

constexpr unsigned kThreads = 2;

void report(const char* name, const peer::Figure& figure) {
  const double ops = static_cast<double>(figure.ops);
  const double ops_per_sec = figure.seconds > 0 ? ops / figure.seconds : 0.0;
  const double ns_per_op = figure.ops > 0 ? figure.seconds * 1e9 / ops : 0.0;
  std::printf("so.%s ops/s=%.0f ns/op=%.1f\n", name, ops_per_sec, ns_per_op);
  std::fflush(stdout);
}

}  // namespace

int main() {
  std::printf("SObjectizer %s\n", peer::version());
  struct Case {
    const char* name;
    std::function<peer::Figure()> run;
  };
  const Case cases[] = {
      {"ping_pong", [] { return peer::ping_pong(10'000, kThreads); }},
      {"request_response", [] { return peer::request_response(10'000, kThreads); }},
      {"throughput", [] { return peer::throughput(4, 100'000, kThreads); }},
      {"spawn", [] { return peer::spawn(100'000, kThreads); }},
      {"skynet", [] { return peer::skynet(kThreads); }},
      {"fan_out", [] { return peer::fan_out(1'000, 100, kThreads); }},
  };
  int failures = 0;
  for (const auto& c : cases) {
    try {
      report(c.name, c.run());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "so.%s FAILED: %s\n", c.name, e.what());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
