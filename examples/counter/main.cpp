// The counter example: a `samples` actor talks to two counters through the topology. One counter
// is a functional actor, the other a structural one; both speak the protocol in protocol.hpp.
//
//   samples ──counter.*──▶ functional_counters
//       └────counter.*──▶ structural_counters
//
// The sample increments, asks every counter for its value, prints the answers and terminates
// the system, so the program exits on its own (with 0).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <elfin/elfin.hpp>

#include "counters.hpp"
#include "protocol.hpp"

namespace {

using namespace elfin;
using counter::GetValue;
using counter::Increment;

Task<> sample(Context<> ctx) {
  const std::array<std::uint32_t, 2> deltas{1, 3};
  for (const std::uint32_t delta : deltas) {
    // `send` routes the message: the topology sends `counter.*` to both counter groups.
    auto sent = co_await ctx.send(Increment{delta});
    if (!sent) {
      fmt::print("sample: Increment was not delivered: {}\n", sent.error());
      continue;
    }
    fmt::print("sample: sent Increment{{delta: {}}} to the counters\n", delta);
  }

  // Two groups receive the request, so ask for every answer, not just the first one.
  auto answers = co_await ctx.request(GetValue{}).all();
  std::vector<std::string> values;
  values.reserve(answers.size());
  for (const auto& answer : answers) {
    values.push_back(answer ? fmt::to_string(*answer) : fmt::format("error ({})", answer.error()));
  }
  fmt::print("sample: {} counters answered GetValue: {}\n", answers.size(), fmt::join(values, ", "));

  // Messages from one sender to one recipient arrive in order, so both counters had seen both
  // increments before they answered.
  fmt::print("sample: done, terminating the system\n");
  ctx.terminate_system("the sample is done");
}

}  // namespace

int main() {
  Topology topology;
  auto samples = topology.local("samples");
  auto functional_counters = topology.local("functional_counters");
  auto structural_counters = topology.local("structural_counters");

  samples.route_to(functional_counters, filters::protocol("counter"));
  samples.route_to(structural_counters, filters::protocol("counter"));

  samples.mount(ActorGroup().exec(sample)).entrypoint();
  functional_counters.mount(counter::functional());
  structural_counters.mount(counter::structural());

  return elfin::run(std::move(topology));
}
