// AnyMessage: a message of any registered type, owned, without knowing the type at compile time.
//
// The network, the dumper and the config system use it to encode, decode and print messages by
// `(protocol, name)`. Encoding is msgpack with named fields (a map), the same bytes whatever side
// of the wire.
//
// Thread safety: a value type (copying clones the message).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <elfin/addr.hpp>
#include <elfin/message.hpp>
#include <elfin/message_decode_error.hpp>
#include <elfin/result.hpp>
#include <elfin/trace_id.hpp>

namespace elfin {

class Envelope;

class AnyMessage {
 public:
  template <Message M>
  explicit AnyMessage(M message) : vtable_(&vtable_of<M>()), object_(new M(std::move(message))) {}
  AnyMessage(const AnyMessage& other);
  AnyMessage& operator=(const AnyMessage& other);
  AnyMessage(AnyMessage&& other) noexcept : vtable_(other.vtable_), object_(std::exchange(other.object_, nullptr)) {}
  AnyMessage& operator=(AnyMessage&& other) noexcept;
  ~AnyMessage();

  /// Decodes `bytes` (a msgpack map) as the message registered under `(protocol, name)`.
  /// Errors name the message and what did not match.
  [[nodiscard]] static Result<AnyMessage, MessageDecodeError> decode(std::string_view protocol, std::string_view name,
                                                                     std::string_view bytes);
  /// Decodes `bytes` like `decode`, straight into a new envelope from `sender` (one allocation
  /// for the header and the message: what the network does with every message it receives).
  [[nodiscard]] static Result<Envelope, MessageDecodeError> decode_envelope(std::string_view protocol,
                                                                            std::string_view name,
                                                                            std::string_view bytes, Addr sender,
                                                                            TraceId trace_id);
  /// A copy of the message an envelope carries.
  [[nodiscard]] static AnyMessage from(const Envelope& envelope);

  [[nodiscard]] std::string_view protocol() const { return vtable_->protocol; }
  [[nodiscard]] std::string_view name() const { return vtable_->name; }
  [[nodiscard]] const MessageVTable& vtable() const { return *vtable_; }

  /// The msgpack encoding (a map with the field names as keys).
  [[nodiscard]] std::string encode() const;

  template <Message M>
  [[nodiscard]] bool is() const {
    return vtable_ == &vtable_of<M>();
  }
  template <Message M>
  [[nodiscard]] const M* get() const {
    return is<M>() ? static_cast<const M*>(object_) : nullptr;
  }

 private:
  AnyMessage(const MessageVTable* vtable, void* object) : vtable_(vtable), object_(object) {}
  const MessageVTable* vtable_;
  void* object_;
};

/// Encodes a message object given its vtable (used by the dumper and the network).
[[nodiscard]] std::string encode_message(const MessageVTable& vtable, const void* message);

}  // namespace elfin
