// What a request the network could not carry is answered: the same error, whichever thread gave
// up on it (a forwarder, or a Caller's thread in the direct sink).
#pragma once

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include <elfin/detail/envelope_block.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>

namespace elfin::network::detail {

/// Fails the request in `envelope` if someone waits for its answer (Failed, "node N: why").
inline void fail_undelivered(Envelope& envelope, std::uint16_t node, std::string_view why) {
  using elfin::detail::EnvelopeAccess;
  if (envelope.kind() == MessageKind::Request && EnvelopeAccess::obligated(envelope) &&
      EnvelopeAccess::block(envelope)->request) {
    EnvelopeAccess::discharge(envelope);
    EnvelopeAccess::block(envelope)->request->fail(
        RequestError{RequestError::Failed, fmt::format("node {}: {}", node, why)});
  }
}

}  // namespace elfin::network::detail
