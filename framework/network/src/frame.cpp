#include <elfin/network/frame.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

namespace elfin::network {

namespace {

// Message flags (the first field of a Message body).
constexpr std::uint8_t kFlagRequest = 1U << 0;
constexpr std::uint8_t kFlagRequestAll = 1U << 1;
constexpr std::uint8_t kFlagDirect = 1U << 2;
constexpr std::uint8_t kKnownFlags = kFlagRequest | kFlagRequestAll | kFlagDirect;

// The reader starts with this much room and shrinks back to it after a large frame.
constexpr std::size_t kInitialCapacity = std::size_t{64} * 1024;

// ---- encoding ------------------------------------------------------------------------------------

// Integers are written byte by byte (little-endian whatever the host); compilers turn these loops into
// single stores.
template <class T>
void put(std::string& out, T value) {
  static_assert(std::is_unsigned_v<T>);
  char bytes[sizeof(T)];
  for (std::size_t i = 0; i < sizeof(T); ++i) bytes[i] = static_cast<char>(static_cast<std::uint8_t>(value >> (8 * i)));
  out.append(bytes, sizeof(T));
}

void put_str8(std::string& out, std::string_view s, const char* what) {
  if (s.size() > std::numeric_limits<std::uint8_t>::max()) {
    throw std::length_error(fmt::format("{} is {} bytes long; the wire format allows at most 255", what, s.size()));
  }
  put(out, static_cast<std::uint8_t>(s.size()));
  out.append(s);
}

// Free text (reasons) is cut rather than refused: a long reason must not stop a refusal from being sent.
void put_text16(std::string& out, std::string_view s) {
  s = s.substr(0, std::numeric_limits<std::uint16_t>::max());
  put(out, static_cast<std::uint16_t>(s.size()));
  out.append(s);
}

std::uint16_t count16(std::size_t n, const char* what) {
  if (n > std::numeric_limits<std::uint16_t>::max()) {
    throw std::length_error(fmt::format("{} has {} entries; the wire format allows at most 65535", what, n));
  }
  return static_cast<std::uint16_t>(n);
}

std::size_t begin_frame(std::string& out, FrameKind kind) {
  const std::size_t start = out.size();
  put(out, std::uint32_t{0});  // patched by finish_frame
  put(out, static_cast<std::uint8_t>(kind));
  return start;
}

void encode_body(const Hello& f, std::string& out) {
  put(out, kMagic);
  put(out, f.version);
  put(out, f.node_no);
  put(out, f.launch_id);
  put(out, f.capabilities);
  put(out, f.max_frame_size);
  out.append(reinterpret_cast<const char*>(f.nonce.data()), f.nonce.size());
  put_str8(out, f.node_name, "the node name");
}

void encode_body(const Auth& f, std::string& out) {
  if (!f.mac.empty() && f.mac.size() != kMacSize) {
    throw std::length_error(fmt::format("an Auth mac is {} bytes; it must be 0 or {}", f.mac.size(), kMacSize));
  }
  put(out, static_cast<std::uint8_t>(f.mac.size()));
  out.append(reinterpret_cast<const char*>(f.mac.data()), f.mac.size());
}

void encode_body(const Refuse& f, std::string& out) { put_text16(out, f.reason); }
void encode_body(const Bye& f, std::string& out) { put_text16(out, f.reason); }

void encode_body(const Welcome& f, std::string& out) {
  put(out, count16(f.groups.size(), "Welcome"));
  for (const GroupEntry& g : f.groups) {
    put(out, g.group_no);
    put_str8(out, g.name, "a group name");
  }
}

void encode_message_header(const MessageFrame& f, std::string& out) {
  const auto flags =
      static_cast<std::uint8_t>((f.request ? kFlagRequest : 0) | (f.request && f.request_all ? kFlagRequestAll : 0) |
                                (f.direct ? kFlagDirect : 0));
  put(out, flags);
  put(out, f.flow_id);
  put(out, f.sender);
  put(out, f.recipient);
  put(out, f.group_no);
  put(out, f.trace_id);
  if (f.request) put(out, f.request_id);
  put_str8(out, f.protocol, "a message's protocol");
  put_str8(out, f.name, "a message's name");
}

void encode_body(const MessageFrame& f, std::string& out) {
  encode_message_header(f, out);
  out.append(f.payload);
}

void encode_body(const ResponseFrame& f, std::string& out) {
  put(out, f.request_id);
  put(out, f.trace_id);
  put(out, count16(f.items.size(), "a Response"));
  for (const ResponseItem& item : f.items) {
    put(out, static_cast<std::uint8_t>(item.status));
    if (item.status != ResponseStatus::Ignored) {
      if (item.payload.size() > std::numeric_limits<std::uint32_t>::max()) {
        throw std::length_error("a response payload exceeds 4 GiB");
      }
      put(out, static_cast<std::uint32_t>(item.payload.size()));
      out.append(item.payload);
    }
  }
}

void encode_body(const Credit& f, std::string& out) {
  put(out, f.flow_id);
  put(out, f.delta);
}
void encode_body(const Ping& f, std::string& out) { put(out, f.token); }
void encode_body(const Pong& f, std::string& out) { put(out, f.token); }

// ---- decoding ------------------------------------------------------------------------------------

// Reads fields off a body. The first failure sticks (later reads fail too) and remembers which field
// it was, so the decoders read straight through and check once; the message is only built on failure,
// keeping the good path free of allocations.
class Cursor {
 public:
  explicit Cursor(std::string_view body) : p_(body.data()), end_(body.data() + body.size()) {}

  template <class T>
  bool get(T& value, const char* field) {
    static_assert(std::is_unsigned_v<T>);
    if (!need(sizeof(T), field)) return false;
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      v |= static_cast<T>(static_cast<T>(static_cast<std::uint8_t>(p_[i])) << (8 * i));
    value = v;
    p_ += sizeof(T);
    return true;
  }
  bool bytes(std::size_t n, std::string_view& out, const char* field) {
    if (!need(n, field)) return false;
    out = std::string_view(p_, n);
    p_ += n;
    return true;
  }
  bool str8(std::string_view& out, const char* field) {
    std::uint8_t n = 0;
    return get(n, field) && bytes(n, out, field);
  }
  bool str16(std::string_view& out, const char* field) {
    std::uint16_t n = 0;
    return get(n, field) && bytes(n, out, field);
  }
  std::string_view rest() {
    std::string_view r(p_, static_cast<std::size_t>(end_ - p_));
    p_ = end_;
    return r;
  }

  [[nodiscard]] bool failed() const { return failed_field_ != nullptr; }
  [[nodiscard]] std::size_t left() const { return static_cast<std::size_t>(end_ - p_); }
  [[nodiscard]] const char* failed_field() const { return failed_field_; }
  [[nodiscard]] std::size_t failed_need() const { return failed_need_; }
  [[nodiscard]] std::size_t failed_left() const { return failed_left_; }

 private:
  bool need(std::size_t n, const char* field) {
    if (failed_field_ != nullptr) return false;
    if (left() >= n) return true;
    failed_field_ = field;
    failed_need_ = n;
    failed_left_ = left();
    return false;
  }

  const char* p_;
  const char* end_;
  const char* failed_field_ = nullptr;
  std::size_t failed_need_ = 0;
  std::size_t failed_left_ = 0;
};

FrameError bad(std::uint8_t kind, std::string message) {
  FrameError e;
  e.kind = FrameErrorKind::BadFrame;
  e.frame_kind = kind;
  e.message = std::move(message);
  return e;
}

// A body must end with its last field (Message's payload and Hello's extensions take the rest).
Result<Frame, FrameError> finish(FrameKind kind, Cursor& c, Frame&& frame, FrameError&& partial = {}) {
  const auto kind_byte = static_cast<std::uint8_t>(kind);
  std::string message;
  if (c.failed()) {
    message = fmt::format("{} frame truncated: field `{}` needs {} byte{}, {} left", kind_name(kind_byte),
                          c.failed_field(), c.failed_need(), c.failed_need() == 1 ? "" : "s", c.failed_left());
  } else if (c.left() != 0) {
    message = fmt::format("{} frame has {} unexpected byte{} after its last field", kind_name(kind_byte), c.left(),
                          c.left() == 1 ? "" : "s");
  } else {
    return std::move(frame);
  }
  partial.kind = FrameErrorKind::BadFrame;
  partial.frame_kind = kind_byte;
  partial.message = std::move(message);
  return Err{std::move(partial)};
}

Result<Frame, FrameError> decode_hello(Cursor& c) {
  std::uint64_t magic = 0;
  Hello h;
  std::string_view nonce;
  std::string_view name;
  if (c.get(magic, "magic") && magic != kMagic) {
    return Err{bad(static_cast<std::uint8_t>(FrameKind::Hello),
                   fmt::format("Hello frame has magic {:#018x} instead of {:#018x}: the peer is not an elfin node",
                               magic, kMagic))};
  }
  c.get(h.version, "version");
  c.get(h.node_no, "node_no");
  c.get(h.launch_id, "launch_id");
  c.get(h.capabilities, "capabilities");
  c.get(h.max_frame_size, "max_frame_size");
  c.bytes(kNonceSize, nonce, "nonce");
  c.str8(name, "node_name");
  if (!c.failed()) {
    std::memcpy(h.nonce.data(), nonce.data(), kNonceSize);
    h.node_name = std::string(name);
    c.rest();  // fields a later version appended
  }
  return finish(FrameKind::Hello, c, std::move(h));
}

Result<Frame, FrameError> decode_auth(Cursor& c) {
  std::uint8_t n = 0;
  std::string_view mac;
  if (c.get(n, "mac_len") && n != 0 && n != kMacSize) {
    return Err{bad(static_cast<std::uint8_t>(FrameKind::Auth),
                   fmt::format("Auth frame has a mac of {} bytes; it must be 0 or {}", n, kMacSize))};
  }
  c.bytes(n, mac, "mac");
  Auth a;
  if (!c.failed()) a.mac.assign(mac.begin(), mac.end());
  return finish(FrameKind::Auth, c, std::move(a));
}

template <class F>
Result<Frame, FrameError> decode_reason(Cursor& c, FrameKind kind) {
  std::string_view reason;
  c.str16(reason, "reason");
  return finish(kind, c, F{std::string(reason)});
}

Result<Frame, FrameError> decode_welcome(Cursor& c) {
  std::uint16_t count = 0;
  Welcome w;
  if (c.get(count, "count")) {
    w.groups.reserve(std::min<std::size_t>(count, c.left() / 2));  // an entry takes at least 2 bytes
    for (std::uint16_t i = 0; i < count && !c.failed(); ++i) {
      GroupEntry g;
      std::string_view name;
      c.get(g.group_no, "group_no");
      if (c.str8(name, "group_name")) {
        g.name = std::string(name);
        w.groups.push_back(std::move(g));
      }
    }
  }
  return finish(FrameKind::Welcome, c, std::move(w));
}

Result<Frame, FrameError> decode_message(Cursor& c) {
  constexpr auto kKind = static_cast<std::uint8_t>(FrameKind::Message);
  MessageFrame m;
  FrameError partial;
  std::uint8_t flags = 0;
  if (c.get(flags, "flags")) {
    partial.request = m.request = (flags & kFlagRequest) != 0;
    partial.request_all = m.request_all = (flags & kFlagRequestAll) != 0;
    m.direct = (flags & kFlagDirect) != 0;
  }
  if (c.get(m.flow_id, "flow_id")) partial.flow_id = m.flow_id;
  c.get(m.sender, "sender");
  c.get(m.recipient, "recipient");
  c.get(m.group_no, "group_no");
  c.get(m.trace_id, "trace_id");
  if (m.request && c.get(m.request_id, "request_id")) partial.request_id = m.request_id;
  if (!c.failed() && (flags & ~kKnownFlags) != 0) {
    partial.kind = FrameErrorKind::BadFrame;
    partial.frame_kind = kKind;
    partial.message = fmt::format("Message frame has unknown flags {:#04x}", flags & ~kKnownFlags);
    return Err{std::move(partial)};
  }
  if (!c.failed() && m.request_all && !m.request) {
    partial.kind = FrameErrorKind::BadFrame;
    partial.frame_kind = kKind;
    partial.message = "Message frame has the request_all flag without the request flag";
    return Err{std::move(partial)};
  }
  c.str8(m.protocol, "protocol");
  c.str8(m.name, "name");
  if (!c.failed()) m.payload = c.rest();
  return finish(FrameKind::Message, c, m, std::move(partial));
}

Result<Frame, FrameError> decode_response(Cursor& c) {
  constexpr auto kKind = static_cast<std::uint8_t>(FrameKind::Response);
  ResponseFrame r;
  FrameError partial;
  std::uint16_t count = 0;
  if (c.get(r.request_id, "request_id")) partial.request_id = r.request_id;
  c.get(r.trace_id, "trace_id");
  if (c.get(count, "count")) {
    r.items.reserve(std::min<std::size_t>(count, c.left()));  // an item takes at least 1 byte
    for (std::uint16_t i = 0; i < count && !c.failed(); ++i) {
      std::uint8_t status = 0;
      if (!c.get(status, "status")) break;
      ResponseItem item;
      if (status > static_cast<std::uint8_t>(ResponseStatus::Ignored)) {
        partial.kind = FrameErrorKind::BadFrame;
        partial.frame_kind = kKind;
        partial.message = fmt::format("Response frame has an item with unknown status {}", status);
        return Err{std::move(partial)};
      }
      item.status = static_cast<ResponseStatus>(status);
      std::uint32_t len = 0;
      if (item.status != ResponseStatus::Ignored && c.get(len, "payload_len")) c.bytes(len, item.payload, "payload");
      r.items.push_back(item);
    }
  }
  return finish(FrameKind::Response, c, std::move(r), std::move(partial));
}

Result<Frame, FrameError> decode_credit(Cursor& c) {
  Credit f;
  c.get(f.flow_id, "flow_id");
  c.get(f.delta, "delta");
  return finish(FrameKind::Credit, c, f);
}

template <class F>
Result<Frame, FrameError> decode_token(Cursor& c, FrameKind kind) {
  F f;
  c.get(f.token, "token");
  return finish(kind, c, f);
}

}  // namespace

std::string_view kind_name(std::uint8_t kind) {
  switch (static_cast<FrameKind>(kind)) {
    case FrameKind::Hello:
      return "Hello";
    case FrameKind::Auth:
      return "Auth";
    case FrameKind::Refuse:
      return "Refuse";
    case FrameKind::Welcome:
      return "Welcome";
    case FrameKind::Message:
      return "Message";
    case FrameKind::Response:
      return "Response";
    case FrameKind::Credit:
      return "Credit";
    case FrameKind::Ping:
      return "Ping";
    case FrameKind::Pong:
      return "Pong";
    case FrameKind::Bye:
      return "Bye";
  }
  return "unknown";
}

FrameKind kind_of(const Frame& frame) {
  static constexpr FrameKind kKinds[] = {FrameKind::Hello,   FrameKind::Auth,     FrameKind::Refuse, FrameKind::Welcome,
                                         FrameKind::Message, FrameKind::Response, FrameKind::Credit, FrameKind::Ping,
                                         FrameKind::Pong,    FrameKind::Bye};
  static_assert(std::size(kKinds) == std::variant_size_v<Frame>);
  return kKinds[frame.index()];
}

void encode(const Frame& frame, std::string& out) {
  const std::size_t start = out.size();
  try {
    std::ignore = begin_frame(out, kind_of(frame));
    std::visit([&](const auto& f) { encode_body(f, out); }, frame);
  } catch (...) {
    out.resize(start);
    throw;
  }
  detail::finish_frame(out, start);
}

namespace detail {

std::size_t begin_message(const MessageFrame& header, std::string& out) {
  const std::size_t start = begin_frame(out, FrameKind::Message);
  try {
    encode_message_header(header, out);
  } catch (...) {
    out.resize(start);
    throw;
  }
  return start;
}

void finish_frame(std::string& out, std::size_t frame_start) {
  const std::size_t body = out.size() - frame_start - kLengthPrefixSize;
  if (body > std::numeric_limits<std::uint32_t>::max()) {
    out.resize(frame_start);
    throw std::length_error(fmt::format("a frame body of {} bytes exceeds 4 GiB", body));
  }
  for (std::size_t i = 0; i < kLengthPrefixSize; ++i) {
    out[frame_start + i] = static_cast<char>(static_cast<std::uint8_t>(body >> (8 * i)));
  }
}

}  // namespace detail

Result<Frame, FrameError> decode_body(std::string_view body) {
  Cursor c(body);
  std::uint8_t kind = 0;
  if (!c.get(kind, "kind")) return Err{bad(0, "empty frame body")};
  switch (static_cast<FrameKind>(kind)) {
    case FrameKind::Hello:
      return decode_hello(c);
    case FrameKind::Auth:
      return decode_auth(c);
    case FrameKind::Refuse:
      return decode_reason<Refuse>(c, FrameKind::Refuse);
    case FrameKind::Welcome:
      return decode_welcome(c);
    case FrameKind::Message:
      return decode_message(c);
    case FrameKind::Response:
      return decode_response(c);
    case FrameKind::Credit:
      return decode_credit(c);
    case FrameKind::Ping:
      return decode_token<Ping>(c, FrameKind::Ping);
    case FrameKind::Pong:
      return decode_token<Pong>(c, FrameKind::Pong);
    case FrameKind::Bye:
      return decode_reason<Bye>(c, FrameKind::Bye);
  }
  return Err{bad(kind, fmt::format("unknown frame kind {}", kind))};
}

// ---- FrameReader ---------------------------------------------------------------------------------

FrameReader::FrameReader(std::uint32_t max_frame_size)
    : buffer_(std::make_unique_for_overwrite<char[]>(kInitialCapacity)),
      capacity_(kInitialCapacity),
      max_frame_size_(max_frame_size) {}

void FrameReader::reserve_tail(std::size_t at_least) {
  if (begin_ == end_) begin_ = end_ = 0;  // everything taken: start over at the front, no copy
  const std::size_t pending = end_ - begin_;
  // Shrink back after a large frame: keeps an idle connection from pinning megabytes.
  if (capacity_ > kInitialCapacity && pending + at_least <= kInitialCapacity) {
    auto smaller = std::make_unique_for_overwrite<char[]>(kInitialCapacity);
    std::memcpy(smaller.get(), buffer_.get() + begin_, pending);
    buffer_ = std::move(smaller);
    capacity_ = kInitialCapacity;
    begin_ = 0;
    end_ = pending;
    return;
  }
  if (capacity_ - end_ >= at_least) return;
  if (capacity_ - pending >= at_least) {  // compacting is enough
    std::memmove(buffer_.get(), buffer_.get() + begin_, pending);
    begin_ = 0;
    end_ = pending;
    return;
  }
  const std::size_t grown = std::max(capacity_ * 2, pending + at_least);
  auto bigger = std::make_unique_for_overwrite<char[]>(grown);
  std::memcpy(bigger.get(), buffer_.get() + begin_, pending);
  buffer_ = std::move(bigger);
  capacity_ = grown;
  begin_ = 0;
  end_ = pending;
}

std::span<char> FrameReader::prepare(std::size_t at_least) {
  reserve_tail(std::max<std::size_t>(at_least, 1));
  return {buffer_.get() + end_, capacity_ - end_};
}

void FrameReader::commit(std::size_t n) {
  if (n > capacity_ - end_) throw std::out_of_range("FrameReader::commit: more bytes than prepare() offered");
  end_ += n;
}

void FrameReader::feed(std::string_view bytes) {
  std::span<char> room = prepare(bytes.size());
  if (!bytes.empty()) std::memcpy(room.data(), bytes.data(), bytes.size());
  commit(bytes.size());
}

std::size_t FrameReader::missing() const {
  const std::size_t pending = end_ - begin_;
  if (broken_ || pending < kLengthPrefixSize) return 0;
  std::uint32_t length = 0;
  for (std::size_t i = 0; i < kLengthPrefixSize; ++i) {
    length |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(buffer_[begin_ + i])) << (8 * i);
  }
  const std::size_t whole = kLengthPrefixSize + std::size_t{length};
  return pending >= whole ? 0 : whole - pending;
}

FrameReader::ReadResult FrameReader::next() {
  if (broken_) return Err{*broken_};
  const std::size_t pending = end_ - begin_;
  if (pending < kLengthPrefixSize) return std::optional<Frame>{};
  const char* head = buffer_.get() + begin_;
  std::uint32_t length = 0;
  for (std::size_t i = 0; i < kLengthPrefixSize; ++i) {
    length |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(head[i])) << (8 * i);
  }
  if (length == 0 || length > max_frame_size_) {
    FrameError e;
    e.kind = FrameErrorKind::Framing;
    e.frame_no = frames_read_ + 1;
    e.message = length == 0 ? std::string("frame length 0 (a body holds at least its kind byte)")
                            : fmt::format("frame length {} exceeds the maximum {}", length, max_frame_size_);
    broken_ = e;
    return Err{std::move(e)};
  }
  if (pending - kLengthPrefixSize < length) return std::optional<Frame>{};
  begin_ += kLengthPrefixSize + length;
  ++frames_read_;
  auto decoded = decode_body(std::string_view(head + kLengthPrefixSize, length));
  if (!decoded) {
    FrameError e = std::move(decoded).error();
    e.frame_no = frames_read_;
    return Err{std::move(e)};
  }
  return std::optional<Frame>{std::move(decoded).value()};
}

}  // namespace elfin::network
