// libFuzzer target: bytes from a peer, as the network reads them.
//
// Input: one control byte, then the stream. The control byte picks how the stream is cut into reads
// (bits 0-5: chunk size 1..64), the maximum frame size (bit 6: 256 bytes, so oversized frames are
// easy to reach; else the default) and whether this node has a secret (bit 7). Every frame goes to
// a Handshake while it is in progress; Message payloads are decoded with AnyMessage::decode (the
// types in fuzz_messages.hpp are registered); every decoded frame is re-encoded and must decode to
// the same frame (the codec's round-trip property).
//
// Run: tests/fuzz/run.sh [seconds]
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include <elfin/any_message.hpp>
#include <elfin/network/frame.hpp>
#include <elfin/network/handshake.hpp>

#include "fuzz_messages.hpp"

namespace {

using namespace elfin::network;

void check_round_trip(const Frame& frame) {
  std::string bytes;
  encode(frame, bytes);
  auto again = decode_body(std::string_view(bytes).substr(kLengthPrefixSize));
  if (!again.ok() || !(again.value() == frame)) std::abort();  // the codec disagrees with itself
}

void use(const Frame& frame, std::optional<Handshake>& handshake) {
  check_round_trip(frame);
  if (handshake) {
    Handshake::Step step = handshake->on_frame(frame);
    if (!std::holds_alternative<Handshake::InProgress>(step.state)) handshake.reset();
  }
  if (const auto* m = std::get_if<MessageFrame>(&frame)) {
    auto message = elfin::AnyMessage::decode(m->protocol, m->name, m->payload);
    if (message.ok() && message->encode().empty()) std::abort();  // a decoded message always encodes
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  const std::size_t chunk = (control & 0x3Fu) + 1;
  const std::uint32_t max_frame = (control & 0x40u) != 0 ? 256 : kDefaultMaxFrameSize;
  std::optional<std::string> secret;
  if ((control & 0x80u) != 0) secret = "fuzz-secret";

  std::optional<Handshake> handshake(std::in_place, NodeIdentity{1, 42, "fuzz", max_frame}, std::move(secret));
  std::ignore = handshake->start();

  FrameReader reader(max_frame);
  const auto* stream = reinterpret_cast<const char*>(data + 1);
  std::size_t left = size - 1;
  while (left > 0) {
    const std::size_t n = left < chunk ? left : chunk;
    std::span<char> room = reader.prepare(n);
    std::memcpy(room.data(), stream, n);
    reader.commit(n);
    stream += n;
    left -= n;
    for (;;) {
      auto r = reader.next();
      if (!r.ok()) {
        if (handshake) {
          std::ignore = handshake->on_error(r.error());
          handshake.reset();
        }
        if (r.error().fatal()) return 0;  // the connection would be closed here
        continue;
      }
      if (!r.value()) break;
      use(*r.value(), handshake);
    }
  }
  return 0;
}
