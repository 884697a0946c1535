// The WAL group's router: partition p goes to the WAL actor `p % wal_count`, with wal_count read
// from the group's config. UpdateConfig goes to every WAL id, which starts them all (and their
// recovery) when the system starts; ValidateConfig to WAL 0, which answers for the group.
//
// Thread safety: called by senders on any thread; the state is swapped atomically on config
// changes (MapRouter::with_state).
#pragma once

#include <cstdint>

#include <elfin/map_router.hpp>

namespace elfin::actors::wal::internal {

[[nodiscard]] MapRouter<std::uint32_t> router();

}  // namespace elfin::actors::wal::internal
