// What a linearizability check found: for the whole history `Ok` (every key linearizable),
// `Violation` (at least one key is not; each such key is reported with an explanation) or
// `Unknown` (no violation found, but some keys ran out of budget before their search finished:
// they are listed, and nothing is claimed about them).
//
// A violation explains itself with the longest legal order the search found for the key: the last
// operations of that order, the model's state after them, and the completed operation that had to
// come next (its answer was already back) but cannot follow that state, with the operations that
// were free to go before it and did not help.
//
// Thread safety: plain values.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <elfin/linearizability/history.hpp>

namespace elfin::linearizability {

enum class Verdict : std::uint8_t { Ok, Violation, Unknown };

[[nodiscard]] const char* to_string(Verdict verdict) noexcept;

struct CheckOptions {
  /// Search steps (operations tried) per key before the key is given up as unknown.
  std::uint64_t max_steps_per_key = 10'000'000;
  /// Wall time for the whole check; keys not finished by then are unknown. Zero: no limit.
  std::chrono::milliseconds timeout{0};
  /// Threads checking keys in parallel (each key is searched by one thread).
  unsigned threads = 1;
  /// Stop at the first violating key (the others are then not reported).
  bool stop_at_first_violation = false;
  /// Operations of the linearized prefix shown in a violation.
  std::size_t explain_ops = 6;
};

/// One operation as a report shows it.
struct OperationView {
  std::size_t index = 0;  ///< in the history
  std::uint64_t client = 0;
  Time invoke = 0;
  std::optional<Time> complete;  ///< unset: pending
  std::string what;              ///< the model's description of input and output
};

[[nodiscard]] std::string to_string(const OperationView& op);

struct Violation {
  std::string key;
  /// The last operations of the longest legal order found, oldest first.
  std::vector<OperationView> linearized;
  std::size_t linearized_count = 0;  ///< length of that whole order
  /// The model's state after it.
  std::string state;
  /// The completed operation that had to come next and cannot.
  OperationView blocked;
  /// Operations that were also free to come next (invoked before `blocked` completed).
  std::vector<OperationView> candidates;

  /// Everything above as a few lines of text.
  [[nodiscard]] std::string explain() const;
};

struct CheckResult {
  Verdict verdict = Verdict::Ok;
  std::vector<Violation> violations;  ///< ordered by key
  std::vector<std::string> unknown_keys;
  std::size_t keys = 0;
  std::size_t operations = 0;
  std::size_t pending = 0;
  std::uint64_t steps = 0;  ///< search steps over all keys

  [[nodiscard]] bool ok() const { return verdict == Verdict::Ok; }
  /// "ok: 1000 keys, 100000 operations (12 pending)", or the violations explained.
  [[nodiscard]] std::string summary() const;
};

}  // namespace elfin::linearizability
