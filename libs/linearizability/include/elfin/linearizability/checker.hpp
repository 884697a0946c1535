// The linearizability checker: is there one order of the history's operations, each placed at an
// instant between its invocation and its completion, in which the model's sequential rules give
// every completed operation the answer it got? Pending operations (no answer) may be placed
// anywhere after their invocation, or nowhere (they never took effect).
//
//   auto result = elfin::linearizability::check(KvModel{}, recorder.history(), {.threads = 2});
//   REQUIRE(result.ok());  // or print result.summary(): the violating keys, explained
//
// The search is Wing & Gong's: walk the operations in order of invocation and completion; take as
// next any operation invoked before every not-yet-placed operation completed, step the model, and
// backtrack when an operation's completion is reached before it could be placed. Lowe's
// improvement makes it practical: a memo of (set of placed operations, model state) pairs already
// explored, so a configuration reached along two orders is searched once. The history is split by
// the model's partition (per key) and each key is searched alone, possibly on several threads.
// Pending operations get a second search beside that one, taking turns with it: one that may
// place none of them, then a few more each round (most operations a crash left unanswered never
// took effect, and trying each of them everywhere is what makes a search explode).
//
// The problem is NP-complete; the cost grows with how many operations overlap on one key (and with
// pending operations, which overlap everything after them), not with the history's length. A key
// whose search exceeds its budget (steps, or the overall timeout) is reported `Unknown`, never
// guessed at.
//
// Throws std::invalid_argument on a malformed history (a completion before its invocation, an
// answer without a completion time or the reverse).
//
// Thread safety: `check` is reentrant; the model's const members must be safe to call
// concurrently when `threads > 1`.
#pragma once

#include <elfin/linearizability/check_result.hpp>
#include <elfin/linearizability/history.hpp>
#include <elfin/linearizability/model.hpp>

namespace elfin::linearizability {

/// Checks `history` against `model`, key by key.
template <Model M>
[[nodiscard]] CheckResult check(const M& model, const History<typename M::Input, typename M::Output>& history,
                                const CheckOptions& options = {});

}  // namespace elfin::linearizability

#include <elfin/linearizability/impl/checker.hpp>
