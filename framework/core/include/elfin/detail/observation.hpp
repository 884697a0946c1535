// The two observation points of a message's path, where dumping and telemetry attach and nowhere
// else:
//   - sent: an envelope leaves an actor — its send or request, a test proxy's or a caller's
//     (`observe_sent`) — or a response leaves the actor answering a request (`observe_response_sent`,
//     also for the error an actor's failure answers with);
//   - delivered: an envelope is handed to the actor (`observe_delivered`, from
//     ActorCell::take_next), or the answer to a request — a response or a RequestError — reaches the
//     requester (`observe_answer_delivered`).
// Everything else the observers count (statuses, handling times, restarts) is about actors, not
// messages.
//
// Thread safety: called by the thread running the actor (or by its proxy's thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <msgpack.hpp>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_dumping.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/group_telemetry.hpp>
#include <elfin/detail/request_state.hpp>
#include <elfin/detail/telemetry_clock.hpp>
#include <elfin/dumping.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/message.hpp>
#include <elfin/result.hpp>
#include <elfin/trace_id.hpp>

namespace elfin::detail {

// --- helpers of the points --------------------------------------------------------------------

/// Set once any system in the process has a `system.dumpers` group; never cleared.
inline std::atomic<bool> g_any_dumping{false};

/// Out of line: does the actor running on this thread dump?
[[nodiscard]] bool current_actor_dumps();

/// The cheap check done on every answer: one relaxed load while no system in the process dumps,
/// else whether the actor running on this thread belongs to a group that dumps.
[[nodiscard]] inline bool response_dumping_active() {
  return g_any_dumping.load(std::memory_order_relaxed) && current_actor_dumps();
}

/// What a requester got instead of a response, as a dump's message:
/// `{"RequestError": {"kind": "Failed", "reason": "..."}}`.
[[nodiscard]] std::string encode_error_for_dump(const RequestError& error);

/// Records, for the actor running on this thread, a response it sent (already encoded: responses
/// travel without an envelope).
void record_response_sent(const MessageVTable& request, std::string encoded, TraceId trace_id,
                          std::uint64_t correlation_id);

template <class T>
[[nodiscard]] std::string encode_for_dump(const T& value) {
  dumping::DumpEncodingScope for_dump;
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  pack_value(packer, value);
  return std::string(buffer.data(), buffer.size());
}

// --- sent ---------------------------------------------------------------------------------------

// Both per-message points (sent, delivered) are forced inline: with dumping and telemetry off they
// are a load and a branch each, which a call would cost more than.

/// `envelope` leaves `cell`. A request must carry its answer state already: a dumped request gets
/// the correlation id its responses' dumps will share, a measured one the time its answer is
/// measured from.
[[gnu::always_inline]] inline void observe_sent(ActorCell& cell, const Envelope& envelope) {
  RequestStateBase* request = EnvelopeAccess::block(envelope)->request.get();
  if (auto& dumps = cell.group().dumping(); dumps.active()) {
    if (request != nullptr) request->mark_dumped(next_correlation_id(), &envelope.vtable());
    dumps.record(cell, dumping::Direction::Out, envelope);
  }
  if (auto& telemetry = cell.group().telemetry(); telemetry.active()) {
    telemetry.count_sent(cell, envelope.vtable());
    if (request != nullptr) request->mark_measured(&envelope.vtable(), telemetry_stamp());
  }
}

/// The actor running on this thread answers `request` with `value` (ResponseToken::respond).
template <class T>
void observe_response_sent(const MessageVTable& request, const T& value, TraceId trace_id,
                           std::uint64_t correlation_id) {
  if (response_dumping_active()) record_response_sent(request, encode_for_dump(value), trace_id, correlation_id);
}

/// `cell`, running on this thread, answers the request `state` tracks with `error` by failing
/// (or by dropping its token while unwinding): dumped like a response, so a trace shows the whole
/// story of a crashed request.
inline void observe_error_sent(const RequestStateBase& state, const RequestError& error, TraceId trace_id) {
  if (state.request_vtable() == nullptr || !response_dumping_active()) return;
  record_response_sent(*state.request_vtable(), encode_error_for_dump(error), trace_id, state.correlation_id());
}

// --- delivered ----------------------------------------------------------------------------------

/// `envelope`, from the mailbox or a source, is handed to `cell`.
[[gnu::always_inline]] inline void observe_delivered(ActorCell& cell, const Envelope& envelope) {
  if (auto& telemetry = cell.group().telemetry(); telemetry.active()) {
    telemetry.on_receive(cell, &envelope.vtable(), EnvelopeAccess::block(envelope)->sent_at);
  }
  if (auto& dumps = cell.group().dumping(); dumps.active()) dumps.record(cell, dumping::Direction::In, envelope);
}

/// `answer` to the request `state` tracks reaches `requester` (its trace id already the
/// answer's).
template <class T>
void observe_answer_delivered(ActorCell& requester, const RequestStateBase& state,
                              const Result<T, RequestError>& answer) {
  if (state.request_vtable() != nullptr) {
    if (auto& dumps = requester.group().dumping(); dumps.active()) {
      dumps.record_response(requester, dumping::Direction::In, *state.request_vtable(),
                            answer ? encode_for_dump(answer.value()) : encode_error_for_dump(answer.error()),
                            requester.trace_id(), state.correlation_id());
    }
  }
  if (state.measured() != nullptr) {
    const RequestOutcome outcome = answer                                    ? RequestOutcome::Ok
                                   : answer.error() == RequestError::Ignored ? RequestOutcome::Ignored
                                                                             : RequestOutcome::Failed;
    requester.group().telemetry().count_request(requester, *state.measured(), outcome,
                                                telemetry_elapsed_ns(state.measured_since(), telemetry_stamp()));
  }
}

}  // namespace elfin::detail
