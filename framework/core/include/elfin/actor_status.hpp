// ActorStatus: where an actor is in its life, plus optional details for humans.
//
//   Initializing ──first recv──▶ Normal ──mailbox closed & drained──▶ Terminating ──▶ Terminated
//                                   │                                                  or Failed
//                                   └── Alarming (set by the actor itself, e.g. a lost connection)
//
// Failed means the actor threw or returned an error; the reason is in `details`.
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace elfin {

enum class ActorStatusKind : std::uint8_t { Initializing, Normal, Terminating, Terminated, Alarming, Failed };

[[nodiscard]] std::string_view to_string(ActorStatusKind kind);

class ActorStatus {
 public:
  static const ActorStatus INITIALIZING;
  static const ActorStatus NORMAL;
  static const ActorStatus TERMINATING;
  static const ActorStatus TERMINATED;
  static const ActorStatus ALARMING;
  static const ActorStatus FAILED;

  constexpr explicit ActorStatus(ActorStatusKind kind = ActorStatusKind::Initializing) noexcept : kind_(kind) {}

  /// The same status with details, e.g. `ActorStatus::ALARMING.with_details("db is down")`.
  [[nodiscard]] ActorStatus with_details(std::string details) const {
    ActorStatus s{kind_};
    s.details_ = std::move(details);
    return s;
  }

  [[nodiscard]] ActorStatusKind kind() const { return kind_; }
  [[nodiscard]] const std::string& details() const { return details_; }
  [[nodiscard]] bool is_finished() const {
    return kind_ == ActorStatusKind::Terminated || kind_ == ActorStatusKind::Failed;
  }

  friend bool operator==(const ActorStatus&, const ActorStatus&) = default;

 private:
  ActorStatusKind kind_;
  std::string details_;
};

/// Who an actor is: its group's name and its key, printed (`_` for a singleton).
struct ActorMeta {
  std::string group;
  std::string key;
  friend bool operator==(const ActorMeta&, const ActorMeta&) = default;
};

}  // namespace elfin
