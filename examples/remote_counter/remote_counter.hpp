// The remote-counter example's two groups: counters on one node, clients on another, joined by
// the network battery (server.toml, client.toml). Nothing in either group knows that the other is
// remote: the client sends `counter.Add` requests as it would to a local group.
//
//   clients ──counter.*──▶ (system.network) ══ TCP ══ (system.network) ──▶ counters
//
// "remote_counter.server": one actor per counter name (a MapRouter keyed by `name`); answers
//   Add with the new value and Get with the value, adds Increment silently.
// "remote_counter.client": every 1/rate s sends `Add{name, 1}` and logs the answer
//   ("counter hits = 7"), or the error ("request failed: Failed") — and carries on, since the
//   counters' node may be down for a while.
//
//   [clients]
//   rate = 10        # requests per second (0: none)
//   name = "hits"    # the counter to add to
#pragma once

#include <elfin/blueprint.hpp>
#include <elfin/blueprint_registry.hpp>

namespace remote_counter {

[[nodiscard]] elfin::Blueprint server();
[[nodiscard]] elfin::Blueprint client();

/// Registers "remote_counter.server" and "remote_counter.client".
void register_blueprints(elfin::BlueprintRegistry& registry);

}  // namespace remote_counter
