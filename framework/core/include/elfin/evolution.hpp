// Protocol evolution: how a message's fields are encoded and decoded, so that a sender built with
// one version of a protocol and a receiver built with another still understand each other (the
// guide's "Protocol evolution" chapter has the table of changes and update orderings).
//
// Messages (ELFIN_MESSAGE) and the structs inside them (ELFIN_PART) are msgpack maps keyed by field
// name. Decoding follows serde's rules, as elfo's nodes do:
//   - a plain field is required: a missing key is an error naming the field;
//   - `std::optional<T>` fields and fields marked ELFIN_DEFAULT(f) are optional: a missing key
//     leaves the member as the struct's default member initializer set it;
//   - unknown keys are skipped;
//   - ELFIN_ALIAS(f, "old") also accepts the key "old" (renaming);
//   - integers of any width and sign are accepted when the value fits the field, else an error;
//   - ELFIN_NEWTYPE(member) makes a struct encode as its single member (serde's newtype);
//   - enums declared with ELFIN_ENUM are encoded by variant name; an unknown name is an error
//     unless a variant is marked ELFIN_OTHER;
//   - `std::variant<A, B>` is untagged: the first alternative that decodes wins.
// A failure throws DecodeError, whose text names the field path and what was wrong.
//
// Thread safety: everything here is stateless; decode and encode from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include <msgpack.hpp>

namespace elfin {

/// Why bytes did not decode as a message: a field missing, a value of the wrong type, a number
/// that does not fit, an unknown enum variant. The text names the field path (`legs[1].quantity`).
class DecodeError : public msgpack::type_error {
 public:
  enum class Kind : std::uint8_t { Invalid, Missing, Duplicate };

  /// A value that does not fit, `reason` says how ("300 does not fit in uint8").
  [[nodiscard]] static DecodeError invalid(std::string reason);
  [[nodiscard]] static DecodeError missing(std::string_view field);
  [[nodiscard]] static DecodeError duplicate(std::string_view field);

  /// Called while unwinding out of a field or an element, so the path grows outwards.
  void prepend_field(std::string_view name);
  void prepend_index(std::size_t index);

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] const char* what() const noexcept override { return what_.c_str(); }

 private:
  DecodeError(Kind kind, std::string path, std::string reason);
  void compose();
  Kind kind_;
  std::string path_;
  std::string reason_;
  std::string what_;
};

/// Field options, written inside ELFIN_FIELD (or through the shorthands ELFIN_ALIAS, ELFIN_DEFAULT,
/// ELFIN_OTHER).
struct FieldAlias {
  static constexpr std::size_t kMax = 4;
  std::array<std::string_view, kMax> names{};
  std::size_t count = 0;
};
/// Other keys this field (or enum variant) is accepted under: its former names.
template <class... Names>
[[nodiscard]] constexpr FieldAlias alias(const Names&... names) {
  static_assert(sizeof...(Names) >= 1 && sizeof...(Names) <= FieldAlias::kMax, "1 to 4 aliases per field");
  return FieldAlias{{std::string_view{names}...}, sizeof...(Names)};
}
struct DefaultedTag {};
/// The field may be missing; it then keeps its default member initializer (serde's `default`).
inline constexpr DefaultedTag defaulted{};
struct OtherTag {};
/// The enum variant unknown names decode to (serde's `other`).
inline constexpr OtherTag other_variant{};

namespace detail {

struct FieldOptions {
  FieldAlias aliases;
  bool defaulted = false;
  bool other = false;

  [[nodiscard]] constexpr bool accepts(std::string_view name, std::string_view key) const noexcept {
    if (name == key) return true;
    for (std::size_t i = 0; i < aliases.count; ++i) {
      if (aliases.names[i] == key) return true;
    }
    return false;
  }
};
constexpr void apply_option(FieldOptions& options, const FieldAlias& alias) {
  for (std::size_t i = 0; i < alias.count && options.aliases.count < FieldAlias::kMax; ++i) {
    options.aliases.names[options.aliases.count++] = alias.names[i];
  }
}
constexpr void apply_option(FieldOptions& options, DefaultedTag) { options.defaulted = true; }
constexpr void apply_option(FieldOptions& options, OtherTag) { options.other = true; }
template <class... Options>
[[nodiscard]] constexpr FieldOptions make_options(const Options&... options) {
  FieldOptions result;
  (apply_option(result, options), ...);
  return result;
}

/// One field of a struct: its name on the wire, the member, and its options.
template <class T>
struct Field {
  std::string_view name;
  T* value;
  FieldOptions options;
};
template <class T, class... Options>
[[nodiscard]] constexpr Field<T> field(std::string_view name, T& value, const Options&... options) {
  return Field<T>{name, &value, make_options(options...)};
}

struct FieldsBegin {};
template <class... Fields>
[[nodiscard]] constexpr std::tuple<Fields...> make_fields(FieldsBegin, const Fields&... fields) {
  return std::tuple<Fields...>{fields...};
}

/// One variant of an ELFIN_ENUM.
template <class E>
struct EnumVariant {
  E value;
  std::string_view name;
  FieldOptions options;
};
template <class E, class... Options>
[[nodiscard]] constexpr EnumVariant<E> enum_variant(E value, std::string_view name, const Options&... options) {
  return EnumVariant<E>{value, name, make_options(options...)};
}
template <class E, std::size_t N>
struct EnumTable {
  std::string_view name;
  std::array<EnumVariant<E>, N> variants;
};
template <class E, class... Variants>
[[nodiscard]] constexpr EnumTable<E, sizeof...(Variants)> make_enum_table(std::string_view name,
                                                                          const Variants&... variants) {
  return EnumTable<E, sizeof...(Variants)>{name, {variants...}};
}
/// The argument ELFIN_ENUM's table function is found by (ADL through the enum's namespace).
template <class E>
struct EnumTag {};

// Out-of-line error builders: decoding only pays for them when it fails.
[[noreturn]] void throw_expected(std::string_view expected, const msgpack::object& got);
[[noreturn]] void throw_does_not_fit(std::uint64_t value, std::string_view type);
[[noreturn]] void throw_does_not_fit(std::int64_t value, std::string_view type);
[[noreturn]] void throw_unknown_variant(std::string_view enum_name, std::string_view variant);
/// "integer", "string", "map", ... for the value found.
[[nodiscard]] std::string_view describe_msgpack(const msgpack::object& o) noexcept;

}  // namespace detail
}  // namespace elfin

// ---- the field list of ELFIN_MESSAGE / ELFIN_PART ----
//
// Each element is a member name (`delta`) or a parenthesised `(member, options...)` that
// ELFIN_FIELD / ELFIN_ALIAS / ELFIN_DEFAULT expand to.

/// A field with options: `ELFIN_FIELD(b, elfin::alias("a"), elfin::defaulted)`.
#define ELFIN_FIELD(member, ...) (member, __VA_ARGS__)
/// A renamed field, also accepted under its former name(s): `ELFIN_ALIAS(b, "a")`.
#define ELFIN_ALIAS(member, ...) (member, ::elfin::alias(__VA_ARGS__))
/// An optional field: when missing it keeps its default member initializer.
#define ELFIN_DEFAULT(member) (member, ::elfin::defaulted)
/// The catch-all variant of an ELFIN_ENUM: unknown variant names decode to it.
#define ELFIN_OTHER(variant) (variant, ::elfin::other_variant)

// Each element becomes `, ::elfin::detail::field("name", elfin_self.name, options...)`.
#define ELFIN_DETAIL_FIELD_PLAIN(elem) , ::elfin::detail::field(#elem, elfin_self.elem)
#define ELFIN_DETAIL_FIELD_OPTIONS_(member, ...) ::elfin::detail::field(#member, elfin_self.member, __VA_ARGS__)
#define ELFIN_DETAIL_FIELD_OPTIONS(elem) , ELFIN_DETAIL_FIELD_OPTIONS_ elem
#define ELFIN_DETAIL_FIELD_EACH(r, data, elem) \
  MSGPACK_PP_IF(MSGPACK_PP_IS_BEGIN_PARENS(elem), ELFIN_DETAIL_FIELD_OPTIONS, ELFIN_DETAIL_FIELD_PLAIN)(elem)

/// The msgpack map of a struct's fields (possibly none), decoded by the rules above.
#define ELFIN_DETAIL_FIELD_MAP(...)                                                                     \
  template <class ElfinSelf>                                                                            \
  static auto elfin_fields_of([[maybe_unused]] ElfinSelf& elfin_self) {                                 \
    return ::elfin::detail::make_fields(::elfin::detail::FieldsBegin() __VA_OPT__(                      \
        MSGPACK_PP_SEQ_FOR_EACH(ELFIN_DETAIL_FIELD_EACH, 0, MSGPACK_PP_VARIADIC_TO_SEQ(__VA_ARGS__)))); \
  }                                                                                                     \
  template <typename ElfinPacker>                                                                       \
  void msgpack_pack(ElfinPacker& elfin_packer) const {                                                  \
    ::elfin::detail::pack_fields(elfin_packer, elfin_fields_of(*this));                                 \
  }                                                                                                     \
  void msgpack_unpack(const ::msgpack::object& elfin_object) {                                          \
    ::elfin::detail::unpack_fields(elfin_object, elfin_fields_of(*this));                               \
  }                                                                                                     \
  using elfin_field_map = void

/// Inside a struct used as a field of messages (elfo's `#[message(part)]`): its fields, with the
/// same rules as a message's. `ELFIN_PART(instrument, quantity);`
#define ELFIN_PART(...) ELFIN_DETAIL_FIELD_MAP(__VA_ARGS__)

/// Inside a struct with one member: encode the struct as that member alone, so `a: U32` and
/// `a: std::uint32_t` share their bytes (serde's newtype). `ELFIN_NEWTYPE(value);`
#define ELFIN_NEWTYPE(member)                                                                                         \
  template <typename ElfinPacker>                                                                                     \
  void msgpack_pack(ElfinPacker& elfin_packer) const {                                                                \
    ::elfin::detail::pack_value(elfin_packer, member);                                                                \
  }                                                                                                                   \
  void msgpack_unpack(const ::msgpack::object& elfin_object) { ::elfin::detail::decode_value(elfin_object, member); } \
  using elfin_newtype = void

// Each variant becomes `, ::elfin::detail::enum_variant(Enum::name, "name", options...)`.
#define ELFIN_DETAIL_CALL(macro, args) macro args
#define ELFIN_DETAIL_VARIANT_PLAIN(Enum, elem) , ::elfin::detail::enum_variant(Enum::elem, #elem)
#define ELFIN_DETAIL_VARIANT_OPTIONS_(Enum, variant, ...) \
  , ::elfin::detail::enum_variant(Enum::variant, #variant, __VA_ARGS__)
#define ELFIN_DETAIL_VARIANT_OPTIONS(Enum, elem) \
  ELFIN_DETAIL_CALL(ELFIN_DETAIL_VARIANT_OPTIONS_, (Enum, MSGPACK_PP_REM elem))
#define ELFIN_DETAIL_VARIANT_EACH(r, Enum, elem) \
  MSGPACK_PP_IF(MSGPACK_PP_IS_BEGIN_PARENS(elem), ELFIN_DETAIL_VARIANT_OPTIONS, ELFIN_DETAIL_VARIANT_PLAIN)(Enum, elem)

/// At namespace scope, after an `enum class`: encode it by variant name (a string), so adding,
/// renaming (ELFIN_ALIAS) and removing variants evolve as in the guide. Every variant must be listed.
///   ELFIN_ENUM(Side, Buy, ELFIN_ALIAS(Sell, "Offer"), ELFIN_OTHER(Unknown));
#define ELFIN_ENUM(Enum, ...)                                                                                     \
  [[maybe_unused]] constexpr auto elfin_enum_table(::elfin::detail::EnumTag<Enum>) {                              \
    return ::elfin::detail::make_enum_table<Enum>(                                                                \
        #Enum MSGPACK_PP_SEQ_FOR_EACH(ELFIN_DETAIL_VARIANT_EACH, Enum, MSGPACK_PP_VARIADIC_TO_SEQ(__VA_ARGS__))); \
  }                                                                                                               \
  static_assert(true)

#include <elfin/impl/evolution.hpp>
