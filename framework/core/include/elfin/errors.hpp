// The named errors of messaging. Each is a value returned in a `Result`, with a human message.
//
//   SendError     — a send reached no mailbox: no route, discarded by a router, closed, full
//                   (`try_send` only), unknown address.
//   RequestError  — a request got no answer: Failed (reached no one, or the recipient finished
//                   before handling it) or Ignored (handled, but the token was dropped).
//   TryRecvError  — Empty or Closed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace elfin {

enum class SendError : std::uint8_t {
  NoRoute,      ///< no inter-group route matched, or routers chose no actor (Outcome::Discard)
  Closed,       ///< every chosen recipient's mailbox is closed
  Full,         ///< every chosen recipient's mailbox is full (try_send only)
  UnknownAddr,  ///< `*_to(addr)`: no actor or group lives at that address
};

enum class RequestError : std::uint8_t {
  Failed,   ///< the request reached no one, or the recipient finished before handling it
  Ignored,  ///< the recipient handled the request but dropped its token without answering
};

enum class TryRecvError : std::uint8_t { Empty, Closed };

[[nodiscard]] std::string_view to_string(SendError e);
[[nodiscard]] std::string_view to_string(RequestError e);
[[nodiscard]] std::string_view to_string(TryRecvError e);

}  // namespace elfin

template <class E>
requires std::is_same_v<E, elfin::SendError> || std::is_same_v<E, elfin::RequestError> ||
    std::is_same_v<E, elfin::TryRecvError>
struct fmt::formatter<E> : fmt::formatter<std::string_view> {
  auto format(E e, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::to_string(e), ctx);
  }
};
