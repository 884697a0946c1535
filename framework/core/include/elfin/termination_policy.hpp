// TerminationPolicy: what an actor's group does with a polite `Terminate`.
//
//   closing()  (default) the runtime closes the mailbox; `recv` returns what is already queued,
//              then ends.
//   manually() the actor receives `Terminate` itself and calls `ctx.close()` when it is ready.
//
// Either way, `Terminate::closing()` (the second stage of system termination) closes the mailbox.
#pragma once

namespace elfin {

class TerminationPolicy {
 public:
  [[nodiscard]] static constexpr TerminationPolicy closing() { return TerminationPolicy{false}; }
  [[nodiscard]] static constexpr TerminationPolicy manually() { return TerminationPolicy{true}; }
  [[nodiscard]] constexpr bool is_manual() const { return manual_; }
  friend constexpr bool operator==(TerminationPolicy, TerminationPolicy) = default;

 private:
  constexpr explicit TerminationPolicy(bool manual) : manual_(manual) {}
  bool manual_;
};

}  // namespace elfin
