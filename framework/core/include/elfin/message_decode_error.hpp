// MessageDecodeError: bytes that could not be decoded as the message they were said to be
// (`AnyMessage::decode`, and what the network does with every message it receives).
//
// Not to be confused with `DecodeError` (evolution.hpp), the exception a message's decoding throws
// inside; this is the value the caller gets, naming the message and why.
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <elfin/detail/error_formatter.hpp>

namespace elfin {

class MessageDecodeError {
 public:
  using elfin_error = void;

  /// Unscoped on purpose: `error.kind() == MessageDecodeError::UnknownMessage` reads as the kind.
  enum Kind : std::uint8_t {
    UnknownMessage,  ///< no message type is registered under (protocol, name)
    Malformed,       ///< the bytes are not a msgpack value (or one too large or deep)
    Mismatch,        ///< a msgpack value that does not fit the message (a missing field, a wrong type)
  };

  MessageDecodeError(Kind kind, std::string protocol, std::string name, std::string message)
      : message_(std::move(message)), protocol_(std::move(protocol)), name_(std::move(name)), kind_(kind) {}

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  /// "cannot decode bank.Withdraw: ..." or "unknown message `bank.Withdraw`: ...".
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  [[nodiscard]] const std::string& protocol() const noexcept { return protocol_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  std::string message_;
  std::string protocol_;
  std::string name_;
  Kind kind_;
};

}  // namespace elfin
