// elfin's own control messages (protocol `elfin`). Routers see them like any other message;
// `Outcome::Default` broadcasts them (except ValidateConfig, which it discards).
//
//   UpdateConfig   a group's config changed; `recv` applies it and yields ConfigUpdated
//   ConfigUpdated  what the actor sees after `ctx.config()` changed
//   ValidateConfig may this config be applied? (groups opt in through their router)
//   Terminate      stop politely; TerminationPolicy::closing closes the mailbox, manually
//                  hands the message to the actor. `Terminate::closing()` always closes.
//   Ping           answered by `recv` itself: proves the actor is handling its mailbox
//   SubscribeToActorStatuses  sent to a group, answered by its supervisor (not its actors): an
//                  ActorStatusReport per actor now, then one per status change, to the sender
#pragma once

#include <cstdint>
#include <string>

#include <elfin/actor_status.hpp>
#include <elfin/addr.hpp>
#include <elfin/config.hpp>
#include <elfin/message.hpp>

MSGPACK_ADD_ENUM(elfin::ActorStatusKind);

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

struct SubscribeToActorStatuses {
  ELFIN_MESSAGE(elfin, SubscribeToActorStatuses);
};

/// One actor's status, current or changed, for a subscriber of its group.
struct ActorStatusReport {
  std::string group;
  std::string key;         ///< printed, `_` for a singleton
  std::uint64_t addr = 0;  ///< the actor's Addr, raw
  ActorStatusKind kind = ActorStatusKind::Initializing;
  std::string details;

  [[nodiscard]] ActorMeta meta() const { return ActorMeta{group, key}; }
  [[nodiscard]] ActorStatus status() const { return ActorStatus{kind}.with_details(details); }
  ELFIN_MESSAGE(elfin, ActorStatusReport, group, key, addr, kind, details);
};

}  // namespace elfin

// Compiled once, in src/messages.cpp.
ELFIN_EXTERN_MESSAGE(elfin::UpdateConfig);
ELFIN_EXTERN_MESSAGE(elfin::ConfigUpdated);
ELFIN_EXTERN_MESSAGE(elfin::ValidateConfig);
ELFIN_EXTERN_MESSAGE(elfin::Terminate);
ELFIN_EXTERN_MESSAGE(elfin::Ping);
ELFIN_EXTERN_MESSAGE(elfin::SubscribeToActorStatuses);
ELFIN_EXTERN_MESSAGE(elfin::ActorStatusReport);
