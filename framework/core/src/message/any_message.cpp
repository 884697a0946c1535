#include <elfin/any_message.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <elfin/envelope.hpp>

namespace elfin {

namespace {
constexpr std::size_t kMaxDecodeDepth = 256;
}

AnyMessage::AnyMessage(const AnyMessage& other)
    : vtable_(other.vtable_), object_(other.vtable_->clone(other.object_)) {}

AnyMessage& AnyMessage::operator=(const AnyMessage& other) {
  if (this != &other) *this = AnyMessage(other);
  return *this;
}

AnyMessage& AnyMessage::operator=(AnyMessage&& other) noexcept {
  if (this != &other) {
    if (object_ != nullptr) vtable_->destroy(object_);
    vtable_ = other.vtable_;
    object_ = std::exchange(other.object_, nullptr);
  }
  return *this;
}

AnyMessage::~AnyMessage() {
  if (object_ != nullptr) vtable_->destroy(object_);
}

namespace {

// Strings, binaries and extensions are converted straight from the input instead of being copied
// into the zone first: the input outlives the conversion (both happen inside one decode call).
bool reference_input(msgpack::type::object_type /*type*/, std::size_t /*size*/, void* /*user_data*/) { return true; }

// Decodes `bytes` as `(protocol, name)` and hands the msgpack object to `convert`, which builds the
// result from it. The object lives in this thread's zone, reset after every decode: a fresh zone
// per message costs an 8 KiB allocation, most of what decoding a small message costs.
template <class T, class Convert>
Result<T, MessageDecodeError> decode_with(std::string_view protocol, std::string_view name, std::string_view bytes,
                                          Convert&& convert) {
  const MessageVTable* vtable = MessageRegistry::instance().find(protocol, name);
  auto error = [&](MessageDecodeError::Kind kind, std::string text) {
    return Err{MessageDecodeError(kind, std::string(protocol), std::string(name), std::move(text))};
  };
  if (vtable == nullptr) {
    return error(MessageDecodeError::UnknownMessage,
                 fmt::format("unknown message `{}.{}`: no such type is registered", protocol, name));
  }
  thread_local msgpack::zone zone;
  struct Reset {
    msgpack::zone& zone;
    ~Reset() { zone.clear(); }
  } reset{zone};
  msgpack::object object;
  try {
    // The bytes may come from another node, so they are untrusted. msgpack-c allocates room for an
    // array's or a map's elements as soon as it reads their count, before they arrive: five bytes
    // could ask for 100 GB (found by tests/fuzz). A container cannot have more elements than there are
    // bytes, so the input's size bounds every count; nesting is bounded too (no message is that deep).
    const auto n = static_cast<std::size_t>(std::min<std::size_t>(bytes.size(), 0xFFFF'FFFFU));
    const msgpack::unpack_limit limit(n, n / 2, n, n, n, kMaxDecodeDepth);
    std::size_t offset = 0;
    object = msgpack::unpack(zone, bytes.data(), bytes.size(), offset, reference_input, nullptr, limit);
  } catch (const std::exception& e) {
    return error(MessageDecodeError::Malformed, fmt::format("cannot decode {}.{}: malformed msgpack ({} bytes): {}",
                                                            protocol, name, bytes.size(), e.what()));
  }
  try {
    return convert(*vtable, object);
  } catch (const DecodeError& e) {  // the evolution rules: a missing field, a value that does not fit
    return error(MessageDecodeError::Mismatch, fmt::format("cannot decode {}.{}: {}", protocol, name, e.what()));
  } catch (const std::exception& e) {  // a part or adaptor outside the rules (msgpack-c's own errors)
    return error(MessageDecodeError::Mismatch, fmt::format("cannot decode {}.{}: {}", protocol, name, e.what()));
  }
}

}  // namespace

Result<AnyMessage, MessageDecodeError> AnyMessage::decode(std::string_view protocol, std::string_view name,
                                                          std::string_view bytes) {
  return decode_with<AnyMessage>(protocol, name, bytes, [](const MessageVTable& vtable, const msgpack::object& object) {
    return AnyMessage{&vtable, vtable.unpack(object)};
  });
}

Result<Envelope, MessageDecodeError> AnyMessage::decode_envelope(std::string_view protocol, std::string_view name,
                                                                 std::string_view bytes, Addr sender,
                                                                 TraceId trace_id) {
  return decode_with<Envelope>(protocol, name, bytes, [&](const MessageVTable& vtable, const msgpack::object& object) {
    detail::EnvelopeBlock* block = vtable.unpack_block(object);
    block->sender = sender;
    block->trace_id = trace_id;
    block->sent_at = detail::send_stamp();
    return detail::EnvelopeAccess::adopt(block);
  });
}

AnyMessage AnyMessage::from(const Envelope& envelope) {
  return AnyMessage{&envelope.vtable(), envelope.vtable().clone(envelope.data())};
}

std::string AnyMessage::encode() const { return encode_message(*vtable_, object_); }

std::string encode_message(const MessageVTable& vtable, const void* message) {
  std::string out;
  vtable.pack(message, out);
  return out;
}

}  // namespace elfin
