// elfin's own control messages (protocol `elfin`). Routers see them like any other message;
// `Outcome::Default` broadcasts them (except ValidateConfig, which it discards).
//
//   UpdateConfig   a group's config changed; `recv` applies it and yields ConfigUpdated
//   ConfigUpdated  what the actor sees after `ctx.config()` changed
//   ValidateConfig may this config be applied? (groups opt in through their router)
//   Terminate      stop politely; TerminationPolicy::closing closes the mailbox, manually
//                  hands the message to the actor. `Terminate::closing()` always closes.
//   Ping           answered by `recv` itself: proves the actor is handling its mailbox
#pragma once

#include <string>

#include <elfin/config.hpp>
#include <elfin/message.hpp>

namespace elfin {

/// An empty response (`Ping`'s): "done", no data.
struct Unit {
  friend bool operator==(Unit, Unit) { return true; }
  ELFIN_CONFIG();  // an empty map on the wire
};

struct UpdateConfig {
  AnyConfig config;
  ELFIN_MESSAGE(elfin, UpdateConfig, config);
};

struct ConfigUpdated {
  ELFIN_MESSAGE(elfin, ConfigUpdated);
};

struct ValidateConfig {
  AnyConfig config;
  ELFIN_REQUEST(elfin, ValidateConfig, std::string, config);  // empty string = accepted
};

struct Terminate {
  bool force_close = false;  ///< close the mailbox whatever the group's TerminationPolicy
  std::string reason;
  /// The second stage of system termination: closes every mailbox.
  [[nodiscard]] static Terminate closing(std::string reason = {}) { return Terminate{true, std::move(reason)}; }
  ELFIN_MESSAGE(elfin, Terminate, force_close, reason);
};

struct Ping {
  ELFIN_REQUEST(elfin, Ping, Unit);
};

}  // namespace elfin
