// Model: the sequential specification a history is checked against, as pure functions of a state.
// The checker asks the model only to step a state by one operation, to compare and hash states
// (for its memo of visited (linearized set, state) pairs), to say which key an operation touches,
// and to describe operations and states in a report.
//
// `step(state, input, output)` returns every state the operation may leave behind when applied in
// `state` and answering `output`; empty means the operation cannot answer that in that state.
// `output` is unset for a pending operation: then it returns the states of every way it could have
// taken effect (a pending operation that had no effect needs no state: the checker also tries
// never linearizing it). Several states allow models whose outputs leave something open (the
// versioned register's version of a write nobody observed).
//
// Partitioning (P-compositionality): `partition(input)` names the independent part of the object
// an operation touches (a key). The object must be a product of those parts: every operation
// touches one part and the parts never constrain each other. Then the history is linearizable
// exactly when each part's sub-history is, and the checker checks each part on its own.
//
// Thread safety: the checker calls a model's const members from several threads at once.
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace elfin::linearizability {

template <class M>
concept Model = requires(const M& model, const typename M::State& state, const typename M::Input& input,
                         const std::optional<typename M::Output>& output) {
  typename M::Input;
  typename M::Output;
  typename M::State;
  { model.init() } -> std::same_as<typename M::State>;
  { model.partition(input) } -> std::convertible_to<std::string>;
  { model.step(state, input, output) } -> std::same_as<std::vector<typename M::State>>;
  { model.hash(state) } -> std::convertible_to<std::size_t>;
  { state == state } -> std::convertible_to<bool>;
  { model.describe(input, output) } -> std::convertible_to<std::string>;
  { model.describe(state) } -> std::convertible_to<std::string>;
};

}  // namespace elfin::linearizability
