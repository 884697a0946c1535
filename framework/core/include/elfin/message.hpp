// Messages: plain structs declared with ELFIN_MESSAGE / ELFIN_REQUEST.
//
//   struct Increment {
//     std::uint32_t delta = 1;
//     ELFIN_MESSAGE(counter, Increment, delta);      // protocol, name, fields (msgpack map keys)
//   };
//   struct GetValue {
//     ELFIN_REQUEST(counter, GetValue, std::uint32_t); // a request: its response type comes third
//   };
//   struct Withdraw {                                  // a response type with a comma in parentheses
//     std::int64_t amount = 0;
//     ELFIN_REQUEST(bank, Withdraw, (elfin::Result<std::int64_t, std::string>), amount);
//   };
//
// The declaration gives the type its identity on the wire, `(protocol, name)`, a msgpack encoding
// with named fields (so protocols can evolve, see the guide's "Protocol evolution"), and a
// registration in the process-wide message registry. The registry lets the network, the dumper
// and the config system decode and encode any message knowing only its protocol and name.
// Two different types with the same `(protocol, name)` are rejected when the system starts.
//
// Thread safety: the registry is filled before `main` and read-only afterwards; reading is safe
// from any thread.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <msgpack.hpp>

#include <elfin/evolution.hpp>

namespace elfin {

namespace detail {
struct EnvelopeBlock;
struct RequestOps;
}  // namespace detail

/// The largest message (in bytes, alignment at most 8) a dump copies; see `copy_for_dump`.
inline constexpr std::size_t kDumpCopyMaxSize = 32;

/// Everything the runtime needs to handle a message whose type it does not know.
struct MessageVTable {
  std::string_view protocol;
  std::string_view name;
  bool is_request = false;
  bool is_system = false;       ///< elfin's own control messages (protocol `elfin`), see Outcome::Default
  bool dumping_allowed = true;  ///< false for types declared with ELFIN_NO_DUMPING
  /// Copies a message into a dump's buffer (kDumpCopyMaxSize bytes, 8-aligned), for trivially
  /// copyable types that fit: copying a few bytes beats sharing the envelope, whose memory then
  /// waits for the dumper's thread to free it. Null: dumps share the envelope.
  void (*copy_for_dump)(const void* msg, void* out) noexcept = nullptr;

  // Type-erased operations on a heap object of the message type (AnyMessage, network, dumper).
  void* (*clone)(const void* msg) = nullptr;
  void (*destroy)(void* msg) noexcept = nullptr;
  /// Appends the msgpack encoding to `out` (the network packs straight into its output buffer).
  void (*pack)(const void* msg, std::string& out) = nullptr;
  /// Decodes into a new heap object; throws msgpack::type_error on a shape mismatch.
  void* (*unpack)(const msgpack::object& obj) = nullptr;

  // Envelope storage: one allocation holds the header and the message.
  detail::EnvelopeBlock* (*make_block)(void* moved_from_msg) = nullptr;
  /// Decodes into a new block (header fields left to the caller); throws like `unpack`.
  detail::EnvelopeBlock* (*unpack_block)(const msgpack::object& obj) = nullptr;
  void (*destroy_block)(detail::EnvelopeBlock* block) noexcept = nullptr;
  const void* (*data)(const detail::EnvelopeBlock* block) noexcept = nullptr;

  /// Requests only: answering and applying answers across nodes (elfin/detail/request_ops.hpp).
  const detail::RequestOps* request_ops = nullptr;
};

template <class M>
concept Message = requires {
  { M::elfin_protocol } -> std::convertible_to<std::string_view>;
  { M::elfin_name } -> std::convertible_to<std::string_view>;
} && std::is_default_constructible_v<M> && std::is_copy_constructible_v<M>;

template <class R>
concept Request = Message<R> && requires { typename R::Response; };

/// The vtable of a message type; its address is the type's identity at run time.
template <Message M>
const MessageVTable& vtable_of() noexcept;

/// The process-wide table of message types by `(protocol, name)`.
///
/// This is one of the few singletons elfin has: message types register themselves during static
/// initialization, before any system exists, and every part of the process must agree on them.
class MessageRegistry {
 public:
  [[nodiscard]] static MessageRegistry& instance();

  void add(const MessageVTable& vtable);
  /// The vtable registered for `(protocol, name)`, or nullptr.
  [[nodiscard]] const MessageVTable* find(std::string_view protocol, std::string_view name) const;
  /// One line per `(protocol, name)` claimed by more than one type; empty when all is well.
  [[nodiscard]] std::vector<std::string> conflicts() const;
  [[nodiscard]] std::vector<const MessageVTable*> all() const;

 private:
  MessageRegistry() = default;
  std::vector<const MessageVTable*> entries_;
};

namespace detail {
template <class M>
struct MessageRegistrar {
  MessageRegistrar() noexcept { MessageRegistry::instance().add(vtable_of<M>()); }
};
template <class M>
inline constexpr bool kIsSystemMessage = M::elfin_protocol == std::string_view{"elfin"};
}  // namespace detail

}  // namespace elfin

// msgpack-c's MSGPACK_DEFINE_MAP cannot take zero fields; an empty field list selects a map
// without keys instead.
#define ELFIN_DETAIL_CAT_(a, b) a##b
#define ELFIN_DETAIL_CAT(a, b) ELFIN_DETAIL_CAT_(a, b)
#define ELFIN_DETAIL_HAS_ARGS(...) __VA_OPT__(1)
#define ELFIN_DETAIL_MAP_1(...) MSGPACK_DEFINE_MAP(__VA_ARGS__)
#define ELFIN_DETAIL_MAP_(...)                                              \
  template <typename Packer>                                                \
  void msgpack_pack(Packer& packer) const {                                 \
    packer.pack_map(0);                                                     \
  }                                                                         \
  void msgpack_unpack(const ::msgpack::object& object) {                    \
    if (object.type != ::msgpack::type::MAP) throw ::msgpack::type_error(); \
  }                                                                         \
  template <typename Object>                                                \
  void msgpack_object(Object* object, ::msgpack::zone&) const {             \
    object->type = ::msgpack::type::MAP;                                    \
    object->via.map.size = 0;                                               \
    object->via.map.ptr = nullptr;                                          \
  }
/// The msgpack map of a config struct's keys (possibly none), msgpack-c's lenient rules (messages
/// use ELFIN_DETAIL_FIELD_MAP, see evolution.hpp).
#define ELFIN_DETAIL_MAP(...) ELFIN_DETAIL_CAT(ELFIN_DETAIL_MAP_, ELFIN_DETAIL_HAS_ARGS(__VA_ARGS__))(__VA_ARGS__)

/// Declares a message inside its struct: `ELFIN_MESSAGE(protocol, Name, field1, field2, ...);`
/// A field may be written with options: `ELFIN_DEFAULT(f)`, `ELFIN_ALIAS(f, "old")`,
/// `ELFIN_FIELD(f, elfin::alias("old"), elfin::defaulted)` (see evolution.hpp).
#define ELFIN_MESSAGE(protocol_, Name_, ...)                       \
  static constexpr ::std::string_view elfin_protocol = #protocol_; \
  static constexpr ::std::string_view elfin_name = #Name_;         \
  ELFIN_DETAIL_FIELD_MAP(__VA_ARGS__);                             \
  static inline const ::elfin::detail::MessageRegistrar<Name_> elfin_registrar_ {}

/// Inside a message struct, after ELFIN_MESSAGE: this type is never dumped (bulk data, chatter;
/// see elfin/dumping.hpp).
#define ELFIN_NO_DUMPING using elfin_no_dumping = void

/// For message types declared in a header that many files include. Every file that sees a
/// message type compiles its vtable (msgpack encoding and decoding, cloning, the request ops):
/// ELFIN_EXTERN_MESSAGE, at global scope after the struct, tells them it is compiled elsewhere,
/// and ELFIN_INSTANTIATE_MESSAGE, in exactly one .cpp of the library owning the header, compiles
/// it there. Behaviour is the same either way; only build time changes.
///
///   ELFIN_EXTERN_MESSAGE(counter::Increment);       // counter/protocol.hpp
///   ELFIN_INSTANTIATE_MESSAGE(counter::Increment);  // counter/protocol.cpp
#define ELFIN_EXTERN_MESSAGE(Type_) extern template const ::elfin::MessageVTable& ::elfin::vtable_of<Type_>() noexcept
#define ELFIN_INSTANTIATE_MESSAGE(Type_) template const ::elfin::MessageVTable& ::elfin::vtable_of<Type_>() noexcept

// ELFIN_DETAIL_UNPAREN((A, B)) is `A, B`; ELFIN_DETAIL_UNPAREN(A) is `A`: the probe swallows the
// parentheses when there are some, and the paste removes the probe's name either way.
#define ELFIN_DETAIL_PAREN_PROBE(...) ELFIN_DETAIL_PAREN_PROBE __VA_ARGS__
#define ELFIN_DETAIL_UNPAREN_PASTE(...) ELFIN_DETAIL_UNPAREN_PASTE_(__VA_ARGS__)
#define ELFIN_DETAIL_UNPAREN_PASTE_(...) ELFIN_DETAIL_NO_##__VA_ARGS__
#define ELFIN_DETAIL_NO_ELFIN_DETAIL_PAREN_PROBE
#define ELFIN_DETAIL_UNPAREN(x) ELFIN_DETAIL_UNPAREN_PASTE(ELFIN_DETAIL_PAREN_PROBE x)

/// Declares a request: `ELFIN_REQUEST(protocol, Name, ResponseType, field1, ...);`
/// A response type with a comma goes in parentheses:
/// `ELFIN_REQUEST(bank, Withdraw, (elfin::Result<std::int64_t, Refusal>), account, amount);`
#define ELFIN_REQUEST(protocol_, Name_, Response_, ...) \
  using Response = ELFIN_DETAIL_UNPAREN(Response_);     \
  ELFIN_MESSAGE(protocol_, Name_ __VA_OPT__(, ) __VA_ARGS__)

#include <elfin/impl/message.hpp>
