// Dumping responses: they travel without an envelope, so the runtime encodes them when recorded.
//
// `response_dumping_active` is the cheap check done on every answer: one relaxed load while no
// system in the process dumps, else whether the actor running on this thread belongs to a group
// that dumps.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <msgpack.hpp>

#include <elfin/dumping.hpp>
#include <elfin/errors.hpp>
#include <elfin/message.hpp>
#include <elfin/trace_id.hpp>

namespace elfin::detail {

/// Set once any system in the process has a `system.dumpers` group; never cleared.
inline std::atomic<bool> g_any_dumping{false};

/// Out of line: does the actor running on this thread dump?
[[nodiscard]] bool current_actor_dumps();

[[nodiscard]] inline bool response_dumping_active() {
  return g_any_dumping.load(std::memory_order_relaxed) && current_actor_dumps();
}

/// What a requester got instead of a response, as a dump's message:
/// `{"RequestError": {"kind": "Failed", "reason": "..."}}`.
[[nodiscard]] std::string encode_error_for_dump(const RequestError& error);

/// Records, for the actor running on this thread, a response it sent.
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

}  // namespace elfin::detail
