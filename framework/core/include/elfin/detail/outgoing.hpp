// The one point where a message leaves an actor — an actor's send or request, or a test proxy's —
// and so the one point where dumping and telemetry see it go (they see it arrive in
// ActorCell::take_next).
//
// Thread safety: called by the thread running `cell` (or by its proxy's thread).
#pragma once

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_dumping.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/group_telemetry.hpp>
#include <elfin/detail/request_state.hpp>
#include <elfin/dumping.hpp>
#include <elfin/envelope.hpp>

namespace elfin::detail {

/// Records `envelope` as sent by `cell`. A request must carry its answer state already: a dumped
/// request gets the correlation id its responses' dumps will share.
inline void observe_outgoing(ActorCell& cell, const Envelope& envelope) {
  if (auto& dumps = cell.group().dumping(); dumps.active()) {
    if (RequestStateBase* request = EnvelopeAccess::block(envelope)->request.get()) {
      request->mark_dumped(next_correlation_id(), &envelope.vtable());
    }
    dumps.record(cell, dumping::Direction::Out, envelope);
  }
  if (auto& telemetry = cell.group().telemetry(); telemetry.active()) telemetry.count_sent(cell, envelope.vtable());
}

}  // namespace elfin::detail
