#include "router.hpp"

#include <numeric>
#include <vector>

#include <elfin/actors/wal.hpp>
#include <elfin/actors/wal/config.hpp>
#include <elfin/messages.hpp>
#include <elfin/protocols/wal.hpp>

namespace elfin::actors::wal::internal {

namespace {

namespace pw = protocols::wal;
using Out = Outcome<std::uint32_t>;

struct RouterState {
  std::uint32_t wal_count = 1;
  std::vector<std::uint32_t> all{0};
};

RouterState prepare(const Config& config, const RouterState& previous) {
  // The running WAL actors keep the count they started with (a reload cannot change it).
  if (config.wal_count == 0 || previous.all.size() > 1) return previous;
  RouterState next;
  next.wal_count = config.wal_count;
  next.all.resize(config.wal_count);
  std::iota(next.all.begin(), next.all.end(), 0u);
  return next;
}

template <class M>
bool by_partition(const Envelope& e, const RouterState& s, Out& out) {
  if (const M* m = e.get<M>()) {
    out = Out::Unicast(wal_for(m->partition, s.wal_count));
    return true;
  }
  return false;
}

Out route(const Envelope& e, const RouterState& s) {
  Out out = Out::Default();
  if (by_partition<pw::Append>(e, s, out) || by_partition<pw::AppendBatch>(e, s, out) ||
      by_partition<pw::TruncateAfter>(e, s, out) || by_partition<pw::SaveHardState>(e, s, out) ||
      by_partition<pw::ReadRange>(e, s, out) || by_partition<pw::Checkpoint>(e, s, out) ||
      by_partition<pw::Flush>(e, s, out) || by_partition<pw::GetStats>(e, s, out)) {
    return out;
  }
  if (e.is<UpdateConfig>()) return Out::Multicast(s.all);
  if (e.is<ValidateConfig>()) return Out::Unicast(0);
  return out;
}

}  // namespace

MapRouter<std::uint32_t> router() { return MapRouter<std::uint32_t>::with_state<Config, RouterState>(prepare, route); }

}  // namespace elfin::actors::wal::internal
