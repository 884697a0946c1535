// Frames: the units of elfin's wire protocol between nodes, their encoding and an incremental reader.
//
// A connection carries frames, each `u32 body_length | body`, body = `u8 kind | fields`, all integers
// little-endian (the table is in the guide's "Wire protocol" chapter). Decoding is zero-copy for the hot
// frames: a decoded MessageFrame / ResponseFrame holds string_views into the reader's buffer, valid until
// the next `next()` or `prepare()` call, and decoding Message, Credit, Ping and Pong frames allocates
// nothing. Message payloads are msgpack bytes the codec does not look into.
//
// Thread safety: plain values and functions; a FrameReader belongs to one connection (one thread at a
// time).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <elfin/result.hpp>

namespace elfin::network {

/// "ELFINNET" read as a little-endian u64: the first field of every Hello.
inline constexpr std::uint64_t kMagic = 0x54454E4E49464C45;
inline constexpr std::uint16_t kProtocolVersion = 2;
inline constexpr std::uint32_t kDefaultMaxFrameSize = 16 * 1024 * 1024;
/// Bytes of the length prefix in front of every body.
inline constexpr std::size_t kLengthPrefixSize = 4;
inline constexpr std::size_t kNonceSize = 32;
inline constexpr std::size_t kMacSize = 32;

/// The kind byte that starts a body.
enum class FrameKind : std::uint8_t {
  Hello = 1,
  Auth = 2,
  Refuse = 3,
  Welcome = 4,
  Message = 10,
  Response = 11,
  Credit = 12,
  Ping = 13,
  Pong = 14,
  Bye = 15,
};
/// "Hello", "Message", ...; "unknown" for a byte that names no kind.
[[nodiscard]] std::string_view kind_name(std::uint8_t kind);

/// First frame each side sends. Bytes after `node_name` are ignored, so a later protocol version may
/// grow Hello and an older node still reads the version and refuses cleanly.
struct Hello {
  std::uint16_t version = kProtocolVersion;
  std::uint16_t node_no = 0;
  std::uint64_t launch_id = 0;
  std::uint32_t capabilities = 0;  ///< bit flags, none defined yet
  std::uint32_t max_frame_size = kDefaultMaxFrameSize;
  std::array<std::uint8_t, kNonceSize> nonce{};
  std::string node_name;  ///< at most 255 bytes
  friend bool operator==(const Hello&, const Hello&) = default;
};
/// Proof of the cluster secret: an HMAC of the handshake transcript, or empty without a secret.
struct Auth {
  std::vector<std::uint8_t> mac;  ///< 0 or kMacSize bytes
  friend bool operator==(const Auth&, const Auth&) = default;
};
/// The sender refuses the connection (and closes it). Reasons longer than 65535 bytes are cut.
struct Refuse {
  std::string reason;
  friend bool operator==(const Refuse&, const Refuse&) = default;
};
struct GroupEntry {
  std::uint8_t group_no = 0;
  std::string name;  ///< at most 255 bytes
  friend bool operator==(const GroupEntry&, const GroupEntry&) = default;
};
/// The sender's local groups, sent once the handshake is done.
struct Welcome {
  std::vector<GroupEntry> groups;  ///< at most 65535
  friend bool operator==(const Welcome&, const Welcome&) = default;
};
/// A message (or a request) to a remote group or actor. Views point into the reader's buffer.
struct MessageFrame {
  bool request = false;
  bool request_all = false;  ///< only with `request`
  bool direct = false;       ///< to the actor `recipient`, not routed through a group
  std::uint32_t flow_id = 0;
  std::uint64_t sender = 0;     ///< Addr raw
  std::uint64_t recipient = 0;  ///< actor Addr raw if direct, else 0
  std::uint8_t group_no = 0;    ///< receiver-side group when routed, 0 if direct
  std::uint64_t trace_id = 0;
  std::uint64_t request_id = 0;  ///< on the wire only when `request`
  std::string_view protocol;     ///< at most 255 bytes
  std::string_view name;         ///< at most 255 bytes
  std::string_view payload;      ///< msgpack bytes, the rest of the body; not validated here
  friend bool operator==(const MessageFrame&, const MessageFrame&) = default;
};
enum class ResponseStatus : std::uint8_t { Ok = 0, Failed = 1, Ignored = 2 };
struct ResponseItem {
  ResponseStatus status = ResponseStatus::Ok;
  std::string_view payload;  ///< msgpack bytes when Ok, the reason (UTF-8) when Failed, empty when Ignored
  friend bool operator==(const ResponseItem&, const ResponseItem&) = default;
};
/// The answers to one request (several for a request to all).
struct ResponseFrame {
  std::uint64_t request_id = 0;
  std::uint64_t trace_id = 0;
  std::vector<ResponseItem> items;  ///< at most 65535
  friend bool operator==(const ResponseFrame&, const ResponseFrame&) = default;
};
/// The receiver of flow `flow_id` lets the sender send `delta` more messages on it.
struct Credit {
  std::uint32_t flow_id = 0;
  std::uint32_t delta = 0;
  friend bool operator==(const Credit&, const Credit&) = default;
};
struct Ping {
  std::uint64_t token = 0;
  friend bool operator==(const Ping&, const Ping&) = default;
};
struct Pong {
  std::uint64_t token = 0;
  friend bool operator==(const Pong&, const Pong&) = default;
};
/// The sender closes the connection in an orderly way. Reasons longer than 65535 bytes are cut.
struct Bye {
  std::string reason;
  friend bool operator==(const Bye&, const Bye&) = default;
};

using Frame = std::variant<Hello, Auth, Refuse, Welcome, MessageFrame, ResponseFrame, Credit, Ping, Pong, Bye>;

[[nodiscard]] FrameKind kind_of(const Frame& frame);

/// Appends one whole frame (length prefix included) to `out`.
///
/// Throws std::length_error when a str8 identifier (node name, group name, protocol, message name) is
/// longer than 255 bytes, a count exceeds 65535, or the body exceeds 4 GiB: those are the caller's bugs
/// (names are checked when configs and messages are declared), never data from a peer. Free-text
/// reasons (Refuse, Bye) are cut to 65535 bytes instead.
void encode(const Frame& frame, std::string& out);

namespace detail {
/// Appends a length placeholder and the Message header; returns where the frame starts.
[[nodiscard]] std::size_t begin_message(const MessageFrame& header, std::string& out);
/// Writes the body length of the frame starting at `frame_start` (everything appended since).
void finish_frame(std::string& out, std::size_t frame_start);
}  // namespace detail

/// The fast path for messages: appends the Message header of `header` (its `payload` is ignored),
/// then calls `write(out)`, which appends the msgpack payload straight to `out` (no second copy), then
/// patches the length. If `write` throws, `out` is restored to its previous size.
template <class WritePayload>
void encode_message(const MessageFrame& header, std::string& out, WritePayload&& write) {
  const std::size_t start = detail::begin_message(header, out);
  try {
    static_cast<WritePayload&&>(write)(out);
  } catch (...) {
    out.resize(start);
    throw;
  }
  detail::finish_frame(out, start);
}

/// What went wrong reading a frame.
enum class FrameErrorKind : std::uint8_t {
  /// The length prefix is 0 or above the maximum: the stream cannot be resynchronized, close the
  /// connection. The reader keeps returning this error.
  Framing,
  /// The body (of a valid length) is not a valid frame: unknown kind, a field runs past the body, bytes
  /// left over, a bad value. The frame is consumed; log it and go on with the next one.
  BadFrame,
};

struct FrameError {
  FrameErrorKind kind = FrameErrorKind::BadFrame;
  /// 1-based number of the offending frame in the stream ("frame N" in log lines).
  std::uint64_t frame_no = 0;
  /// The body's kind byte (0 for Framing errors).
  std::uint8_t frame_kind = 0;
  /// What was wrong, without the frame number, e.g. "frame length 4294967295 exceeds the maximum
  /// 16777216" or "Message frame truncated: field `name` needs 200 bytes, 12 left".
  std::string message;
  /// For a bad Message frame: its flags when the flags byte was read (so `request` and `request_all`
  /// say how the sender waits), and `request_id` when the decoder got that far, so the caller can
  /// answer Failed. For a bad Response frame: `request_id` when it was read.
  bool request = false;
  bool request_all = false;
  std::optional<std::uint64_t> request_id;
  /// For a bad Message frame, the flow when it was read (so its credit can still be returned).
  std::optional<std::uint32_t> flow_id;

  [[nodiscard]] bool fatal() const { return kind == FrameErrorKind::Framing; }
  friend bool operator==(const FrameError&, const FrameError&) = default;
};

/// Decodes one body (kind byte first, no length prefix). Views in the result point into `body`.
/// Errors are always BadFrame with `frame_no` 0 (the caller knows the number).
[[nodiscard]] Result<Frame, FrameError> decode_body(std::string_view body);

/// Incremental reader over a byte stream: socket bytes go in (`prepare` + `commit`), frames come out
/// (`next`), whatever the read boundaries are.
///
/// The buffer holds at most one partial frame besides whole frames not yet taken: it is compacted when
/// `prepare` needs room, grows only as far as the largest frame needs, and shrinks back after a large
/// frame has been read.
///
/// Thread safety: distinct objects are safe; one object is used by one thread at a time.
class FrameReader {
 public:
  /// `next()` returns: a frame; `std::nullopt` when the buffer holds no whole frame yet (read more);
  /// or a FrameError (see FrameErrorKind). Views inside the frame stay valid until the next call of
  /// `next()` or `prepare()`.
  using ReadResult = Result<std::optional<Frame>, FrameError>;

  explicit FrameReader(std::uint32_t max_frame_size = kDefaultMaxFrameSize);

  /// Where to read socket bytes into: at least `at_least` bytes (more when the buffer has room).
  [[nodiscard]] std::span<char> prepare(std::size_t at_least);
  /// `n` bytes were written at the start of the span `prepare` returned.
  void commit(std::size_t n);
  /// Copies `bytes` in (prepare + commit), for callers that already hold the bytes.
  void feed(std::string_view bytes);

  [[nodiscard]] ReadResult next();

  /// Frames taken out of the stream so far, good or bad.
  [[nodiscard]] std::uint64_t frames_read() const { return frames_read_; }
  /// Bytes received but not yet taken as frames.
  [[nodiscard]] std::size_t buffered() const { return end_ - begin_; }
  /// Bytes still missing for the frame at the head of the buffer (0 if unknown or complete): a good
  /// `at_least` for the next `prepare`.
  [[nodiscard]] std::size_t missing() const;
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] std::uint32_t max_frame_size() const { return max_frame_size_; }
  /// Changes the largest body this side accepts (what its Hello announces), e.g. after a config
  /// reload; the frame at the head of the buffer is checked against the new limit.
  void set_max_frame_size(std::uint32_t max_frame_size) { max_frame_size_ = max_frame_size; }

 private:
  void reserve_tail(std::size_t at_least);

  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;  // first byte not yet taken
  std::size_t end_ = 0;    // one past the last byte received
  std::uint32_t max_frame_size_;
  std::uint64_t frames_read_ = 0;
  std::optional<FrameError> broken_;  // set after a Framing error; the stream is lost
};

}  // namespace elfin::network

/// "frame 12: frame length 4294967295 exceeds the maximum 16777216": a FrameError as a log line says it.
template <>
struct fmt::formatter<elfin::network::FrameError> : fmt::formatter<std::string_view> {
  auto format(const elfin::network::FrameError& e, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "frame {}: {}", e.frame_no, e.message);
  }
};
