// The counter entity the sharding benchmarks send to: Add counts one for an entity id, Count
// answers its total. Both carry the id the entity group routes by (counter_id).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <elfin/elfin.hpp>

namespace elfin_bench {

struct Add {
  std::string id;
  ELFIN_MESSAGE(bench_sharding, Add, id);
};
struct Count {
  std::string id;
  ELFIN_REQUEST(bench_sharding, Count, std::uint64_t, id);
};

inline std::optional<std::string> counter_id(const elfin::Envelope& e) {
  if (const auto* add = e.get<Add>()) return add->id;
  if (const auto* count = e.get<Count>()) return count->id;
  return std::nullopt;
}

inline elfin::Task<> counter_exec(elfin::Context<elfin::NoConfig, std::string> ctx) {
  std::uint64_t count = 0;
  while (auto envelope = co_await ctx.recv()) {
    co_await elfin::handle(
        *envelope, [&](const Add&) { ++count; },
        [&](const Count&, elfin::ResponseToken<Count> token) { ctx.respond(std::move(token), count); });
  }
}

}  // namespace elfin_bench
