// Outcome: what an inner-group router decides for one message.
//
//   Unicast(key)          the actor with that key; started if there is none
//   GentleUnicast(key)    the same, but never starts one (the message is discarded instead)
//   Multicast(keys)       several actors, started if needed
//   GentleMulticast(keys) several actors, only those already running
//   Broadcast             every running actor of the group
//   Discard               nobody (the sender gets SendErrorKind::NoRoute if nobody else got it)
//   Default               depends on the message: ValidateConfig → Discard, other elfin system
//                         messages (UpdateConfig, Terminate, Ping, ...) → Broadcast, user
//                         messages → Discard
//
// Thread safety: a value type.
#pragma once

#include <utility>
#include <variant>
#include <vector>

namespace elfin {

template <class Key>
class Outcome {
 public:
  enum class Kind : unsigned char { Unicast, GentleUnicast, Multicast, GentleMulticast, Broadcast, Discard, Default };

  static Outcome Unicast(Key key) { return Outcome{Kind::Unicast, std::move(key)}; }
  static Outcome GentleUnicast(Key key) { return Outcome{Kind::GentleUnicast, std::move(key)}; }
  static Outcome Multicast(std::vector<Key> keys) { return Outcome{Kind::Multicast, std::move(keys)}; }
  static Outcome GentleMulticast(std::vector<Key> keys) { return Outcome{Kind::GentleMulticast, std::move(keys)}; }
  static Outcome Broadcast() { return Outcome{Kind::Broadcast, std::monostate{}}; }
  static Outcome Discard() { return Outcome{Kind::Discard, std::monostate{}}; }
  static Outcome Default() { return Outcome{Kind::Default, std::monostate{}}; }

  [[nodiscard]] Kind kind() const { return kind_; }
  [[nodiscard]] const Key& key() const { return std::get<Key>(payload_); }
  [[nodiscard]] const std::vector<Key>& keys() const { return std::get<std::vector<Key>>(payload_); }

 private:
  template <class P>
  Outcome(Kind kind, P payload) : kind_(kind), payload_(std::move(payload)) {}
  Kind kind_;
  std::variant<std::monostate, Key, std::vector<Key>> payload_;
};

}  // namespace elfin
