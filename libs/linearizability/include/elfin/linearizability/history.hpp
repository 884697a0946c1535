// A history: what a set of clients asked of a shared object and what they were told, each
// operation with the time it was invoked and the time its answer came back. This is all a
// linearizability checker sees. An operation without an answer (the client crashed, the request
// timed out, the connection broke) is *pending*: it may have taken effect at any moment after its
// invocation, or never. Operations that certainly did not take effect (a refusal before anything
// was attempted) do not belong in a history at all.
//
// Times are ticks of any clock that all clients share (nanoseconds of the steady clock, virtual
// time, or an event counter in a single-threaded simulation); only their order matters. Intervals
// are closed: an operation completed at t and one invoked at t are concurrent.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace elfin::linearizability {

using Time = std::int64_t;

template <class Input, class Output>
struct Operation {
  std::uint64_t client = 0;  ///< who asked (for reports; the checker does not need it)
  Time invoke = 0;
  std::optional<Time> complete;  ///< unset: pending (no answer)
  Input input{};
  std::optional<Output> output;  ///< set exactly when `complete` is

  [[nodiscard]] bool pending() const { return !complete.has_value(); }
};

template <class Input, class Output>
struct History {
  using Op = Operation<Input, Output>;
  std::vector<Op> operations;

  /// Adds a completed operation.
  void add(std::uint64_t client, Time invoke, Time complete, Input input, Output output) {
    operations.push_back(Op{client, invoke, complete, std::move(input), std::move(output)});
  }
  /// Adds an operation that got no answer.
  void add_pending(std::uint64_t client, Time invoke, Input input) {
    operations.push_back(Op{client, invoke, std::nullopt, std::move(input), std::nullopt});
  }
  [[nodiscard]] std::size_t size() const { return operations.size(); }
};

}  // namespace elfin::linearizability
