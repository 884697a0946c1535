// Template bodies for evolution.hpp: encoding and decoding field values by the evolution rules.
//
// Decoding is on the network's hot path: it walks the msgpack map once, matches keys against the
// field names by comparing string views, and allocates nothing of its own (unlike msgpack-c's
// MSGPACK_DEFINE_MAP, which builds a std::map of std::strings per message). Errors are built only
// when decoding fails, as a DecodeError whose path grows while the exception unwinds.
#pragma once

#include <array>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <elfin/evolution.hpp>
#include <elfin/result.hpp>

namespace elfin::detail {

template <class T>
struct IsStdOptional : std::false_type {};
template <class T>
struct IsStdOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsStdVariant : std::false_type {};
template <class... Ts>
struct IsStdVariant<std::variant<Ts...>> : std::true_type {};
template <class T>
struct IsResult : std::false_type {};
template <class T, class E>
struct IsResult<Result<T, E>> : std::true_type {};
template <class T>
struct IsStdVector : std::false_type {};
template <class T, class A>
struct IsStdVector<std::vector<T, A>> : std::true_type {};

/// An enum declared with ELFIN_ENUM.
template <class E>
concept NamedEnum = std::is_enum_v<E> && requires { elfin_enum_table(EnumTag<E>{}); };
template <NamedEnum E>
inline constexpr auto kEnumTable = elfin_enum_table(EnumTag<E>{});

/// A struct declared with ELFIN_PART / ELFIN_MESSAGE or ELFIN_NEWTYPE.
template <class T>
concept FieldMap = requires { typename T::elfin_field_map; };
template <class T>
concept Newtype = requires { typename T::elfin_newtype; };

// msgpack-c encodes std::vector<char> and std::vector<unsigned char> as binary, and
// std::vector<bool> has no element references: those are left to msgpack-c.
template <class T>
concept ElementwiseVector =
    IsStdVector<T>::value && !std::is_same_v<typename T::value_type, bool> &&
    !std::is_same_v<typename T::value_type, char> && !std::is_same_v<typename T::value_type, unsigned char> &&
    !std::is_same_v<typename T::value_type, std::byte>;

template <class T>
concept HasMsgpackMember =
    requires(const T& value, msgpack::packer<msgpack::sbuffer>& packer) { value.msgpack_pack(packer); };
template <class T>
struct IsChronoDuration : std::false_type {};
template <class Rep, class Period>
struct IsChronoDuration<std::chrono::duration<Rep, Period>> : std::true_type {};

/// Whether values of T travel as messages' fields and responses do (locally, in dumps and across
/// nodes): numbers, booleans, strings, ELFIN_ENUM enums, ELFIN_PART / ELFIN_MESSAGE / ELFIN_NEWTYPE
/// structs and types with msgpack-c members, durations, and std::optional, std::variant,
/// std::vector, elfin::Result, maps, sets, pairs, tuples and arrays of those.
template <class T>
consteval bool is_encodable() {
  if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string> || NamedEnum<T> || FieldMap<T> ||
                Newtype<T> || HasMsgpackMember<T> || IsChronoDuration<T>::value) {
    return true;
  } else if constexpr (IsStdOptional<T>::value || IsStdVector<T>::value) {
    return is_encodable<typename T::value_type>();
  } else if constexpr (IsStdVariant<T>::value) {
    return []<class... Ts>(std::type_identity<std::variant<Ts...>>) {
      return (is_encodable<Ts>() && ...);
    }(std::type_identity<T>{});
  } else if constexpr (IsResult<T>::value) {
    return (std::is_void_v<typename T::value_type> || is_encodable<typename T::value_type>()) &&
           is_encodable<typename T::error_type>();
  } else if constexpr (requires {
                         typename T::key_type;
                         typename T::mapped_type;
                       }) {
    return is_encodable<typename T::key_type>() && is_encodable<typename T::mapped_type>();
  } else if constexpr (requires { typename T::key_type; }) {
    return is_encodable<typename T::key_type>();
  } else if constexpr (requires { std::tuple_size<T>::value; }) {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (is_encodable<std::tuple_element_t<I, T>>() && ...);
    }(std::make_index_sequence<std::tuple_size_v<T>>{});
  } else {
    return false;
  }
}

template <std::integral T>
[[nodiscard]] constexpr std::string_view integer_name() {
  if constexpr (std::is_signed_v<T>) {
    if constexpr (sizeof(T) == 1) return "int8";
    if constexpr (sizeof(T) == 2) return "int16";
    if constexpr (sizeof(T) == 4) return "int32";
    if constexpr (sizeof(T) == 8) return "int64";
  } else {
    if constexpr (sizeof(T) == 1) return "uint8";
    if constexpr (sizeof(T) == 2) return "uint16";
    if constexpr (sizeof(T) == 4) return "uint32";
    if constexpr (sizeof(T) == 8) return "uint64";
  }
  return "integer";
}

/// What a value of type T looks like on the wire, in words, for "expected X, got Y".
template <class T>
[[nodiscard]] std::string expected_name() {
  if constexpr (std::is_same_v<T, bool>) {
    return "boolean";
  } else if constexpr (std::is_integral_v<T>) {
    return std::string(integer_name<T>());
  } else if constexpr (std::is_floating_point_v<T>) {
    return "float";
  } else if constexpr (std::is_same_v<T, std::string> || NamedEnum<T>) {
    return "string";
  } else if constexpr (IsStdOptional<T>::value) {
    return expected_name<typename T::value_type>() + " or nil";
  } else if constexpr (IsStdVariant<T>::value) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      std::string names;
      ((names += (I == 0 ? "" : " or ") + expected_name<std::variant_alternative_t<I, T>>()), ...);
      return names;
    }(std::make_index_sequence<std::variant_size_v<T>>{});
  } else if constexpr (IsStdVector<T>::value) {
    return "array";
  } else if constexpr (IsResult<T>::value) {
    return "map with one key, Ok or Err";
  } else if constexpr (FieldMap<T>) {
    return "map";
  } else {
    return "a value of the field's type";
  }
}

template <class T>
void decode_value(const msgpack::object& o, T& out);

template <class Packer, class T>
void pack_value(Packer& packer, const T& value) {
  if constexpr (IsStdOptional<T>::value) {
    if (value) {
      pack_value(packer, *value);
    } else {
      packer.pack_nil();
    }
  } else if constexpr (IsStdVariant<T>::value) {
    std::visit([&](const auto& alternative) { pack_value(packer, alternative); }, value);
  } else if constexpr (IsResult<T>::value) {
    // serde's externally tagged form, as elfo encodes a Result: {"Ok": value} or {"Err": error}.
    packer.pack_map(1);
    if (value.ok()) {
      packer.pack_str(2);
      packer.pack_str_body("Ok", 2);
      if constexpr (std::is_void_v<typename T::value_type>) {
        packer.pack_nil();
      } else {
        pack_value(packer, value.value());
      }
    } else {
      packer.pack_str(3);
      packer.pack_str_body("Err", 3);
      pack_value(packer, value.error());
    }
  } else if constexpr (ElementwiseVector<T>) {
    packer.pack_array(static_cast<std::uint32_t>(value.size()));
    for (const auto& element : value) pack_value(packer, element);
  } else if constexpr (NamedEnum<T>) {
    for (const auto& variant : kEnumTable<T>.variants) {
      if (variant.value == value) {
        packer.pack_str(static_cast<std::uint32_t>(variant.name.size()));
        packer.pack_str_body(variant.name.data(), static_cast<std::uint32_t>(variant.name.size()));
        return;
      }
    }
    // A value outside the declared variants (a cast) travels as its number; receivers reject it.
    packer.pack(static_cast<std::underlying_type_t<T>>(value));
  } else {
    packer.pack(value);
  }
}

template <std::integral T>
void decode_integer(const msgpack::object& o, T& out) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) {
    if (o.via.u64 > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
      throw_does_not_fit(o.via.u64, integer_name<T>());
    }
    out = static_cast<T>(o.via.u64);
  } else if (o.type == msgpack::type::NEGATIVE_INTEGER) {
    if constexpr (std::is_unsigned_v<T>) {
      throw_does_not_fit(o.via.i64, integer_name<T>());
    } else {
      if (o.via.i64 < static_cast<std::int64_t>(std::numeric_limits<T>::min())) {
        throw_does_not_fit(o.via.i64, integer_name<T>());
      }
      out = static_cast<T>(o.via.i64);
    }
  } else {
    throw_expected(integer_name<T>(), o);
  }
}

template <NamedEnum E>
void decode_enum(const msgpack::object& o, E& out) {
  if (o.type != msgpack::type::STR) throw_expected("string", o);
  const std::string_view name{o.via.str.ptr, o.via.str.size};
  const EnumVariant<E>* fallback = nullptr;
  for (const auto& variant : kEnumTable<E>.variants) {
    if (variant.options.accepts(variant.name, name)) {
      out = variant.value;
      return;
    }
    if (variant.options.other) fallback = &variant;
  }
  if (fallback == nullptr) throw_unknown_variant(kEnumTable<E>.name, name);
  out = fallback->value;
}

template <class... Ts>
void decode_variant(const msgpack::object& o, std::variant<Ts...>& out) {
  // Untagged, as serde's `untagged`: the first alternative the value decodes as wins.
  const bool decoded = [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto try_alternative = [&]<std::size_t J>(std::integral_constant<std::size_t, J>) {
      std::variant_alternative_t<J, std::variant<Ts...>> value{};
      try {
        decode_value(o, value);
      } catch (const DecodeError&) {
        return false;
      }
      out.template emplace<J>(std::move(value));
      return true;
    };
    return (try_alternative(std::integral_constant<std::size_t, I>{}) || ...);
  }(std::index_sequence_for<Ts...>{});
  if (!decoded) throw_expected(expected_name<std::variant<Ts...>>(), o);
}

template <class T, class E>
void decode_result(const msgpack::object& o, Result<T, E>& out) {
  if (o.type != msgpack::type::MAP || o.via.map.size != 1 || o.via.map.ptr[0].key.type != msgpack::type::STR) {
    throw_expected(expected_name<Result<T, E>>(), o);
  }
  const auto& key = o.via.map.ptr[0].key.via.str;
  const msgpack::object& inner = o.via.map.ptr[0].val;
  const std::string_view tag{key.ptr, key.size};
  if (tag == "Ok") {
    if constexpr (std::is_void_v<T>) {
      out = Result<void, E>{};
    } else {
      T value{};
      decode_value(inner, value);
      out = Result<T, E>{std::move(value)};
    }
  } else if (tag == "Err") {
    E error{};
    decode_value(inner, error);
    out = Result<T, E>{Err{std::move(error)}};
  } else {
    throw_expected(expected_name<Result<T, E>>(), o);
  }
}

template <class T>
void decode_value(const msgpack::object& o, T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (o.type != msgpack::type::BOOLEAN) throw_expected("boolean", o);
    out = o.via.boolean;
  } else if constexpr (std::is_integral_v<T>) {
    decode_integer(o, out);
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (o.type) {
      case msgpack::type::FLOAT32:
      case msgpack::type::FLOAT64:
        out = static_cast<T>(o.via.f64);
        break;
      case msgpack::type::POSITIVE_INTEGER:
        out = static_cast<T>(o.via.u64);
        break;
      case msgpack::type::NEGATIVE_INTEGER:
        out = static_cast<T>(o.via.i64);
        break;
      default:
        throw_expected("float", o);
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (o.type == msgpack::type::STR) {
      out.assign(o.via.str.ptr, o.via.str.size);
    } else if (o.type == msgpack::type::BIN) {
      out.assign(o.via.bin.ptr, o.via.bin.size);
    } else {
      throw_expected("string", o);
    }
  } else if constexpr (NamedEnum<T>) {
    decode_enum(o, out);
  } else if constexpr (IsStdOptional<T>::value) {
    if (o.type == msgpack::type::NIL) {
      out.reset();
    } else {
      decode_value(o, out.emplace());
    }
  } else if constexpr (IsStdVariant<T>::value) {
    decode_variant(o, out);
  } else if constexpr (IsResult<T>::value) {
    decode_result(o, out);
  } else if constexpr (ElementwiseVector<T>) {
    if (o.type != msgpack::type::ARRAY) throw_expected("array", o);
    out.resize(o.via.array.size);
    for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
      try {
        decode_value(o.via.array.ptr[i], out[i]);
      } catch (DecodeError& e) {
        e.prepend_index(i);
        throw;
      }
    }
  } else if constexpr (FieldMap<T> || Newtype<T>) {
    out.msgpack_unpack(o);
  } else {
    // Maps, sets, tuples, user adaptors: msgpack-c's own rules; a part inside still throws
    // DecodeError with its path.
    try {
      o.convert(out);
    } catch (const DecodeError&) {
      throw;
    } catch (const msgpack::type_error&) {
      throw_expected(expected_name<T>(), o);
    }
  }
}

template <class T>
[[nodiscard]] constexpr bool is_optional_field(const Field<T>& field) {
  return field.options.defaulted || IsStdOptional<std::remove_const_t<T>>::value;
}

template <class Packer, class... Ts>
void pack_fields(Packer& packer, const std::tuple<Field<Ts>...>& fields) {
  packer.pack_map(static_cast<std::uint32_t>(sizeof...(Ts)));
  std::apply(
      [&](const auto&... field) {
        ((packer.pack_str(static_cast<std::uint32_t>(field.name.size())),
          packer.pack_str_body(field.name.data(), static_cast<std::uint32_t>(field.name.size())),
          pack_value(packer, *field.value)),
         ...);
      },
      fields);
}

template <class... Ts>
void unpack_fields(const msgpack::object& o, const std::tuple<Field<Ts>...>& fields) {
  if (o.type != msgpack::type::MAP) throw_expected("map", o);
  constexpr std::size_t kCount = sizeof...(Ts);
  if constexpr (kCount > 0) {
    std::array<bool, kCount> seen{};
    for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
      const msgpack::object_kv& entry = o.via.map.ptr[i];
      if (entry.key.type != msgpack::type::STR) continue;  // not a field name: unknown, skipped
      const std::string_view key{entry.key.via.str.ptr, entry.key.via.str.size};
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        auto take = [&](std::size_t index, const auto& field) {
          if (!field.options.accepts(field.name, key)) return false;
          if (seen[index]) throw DecodeError::duplicate(field.name);
          seen[index] = true;
          try {
            decode_value(entry.val, *field.value);
          } catch (DecodeError& e) {
            e.prepend_field(field.name);
            throw;
          }
          return true;
        };
        // Unknown keys match no field and are skipped.
        static_cast<void>((take(I, std::get<I>(fields)) || ...));
      }(std::index_sequence_for<Ts...>{});
    }
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((seen[I] || is_optional_field(std::get<I>(fields)) ? void()
                                                          : throw DecodeError::missing(std::get<I>(fields).name)),
       ...);
    }(std::index_sequence_for<Ts...>{});
  }
}

}  // namespace elfin::detail

// ELFIN_ENUM types are strings wherever msgpack-c meets them too (inside std::map, in configs).
namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {
  template <::elfin::detail::NamedEnum E>
  struct convert<E, void> {
    const msgpack::object& operator()(const msgpack::object& o, E& value) const {
      ::elfin::detail::decode_enum(o, value);
      return o;  // NOLINT(bugprone-return-const-ref-from-parameter): msgpack-c's adaptor contract
    }
  };
  template <::elfin::detail::NamedEnum E>
  struct pack<E, void> {
    template <typename Stream>
    msgpack::packer<Stream>& operator()(msgpack::packer<Stream>& packer, const E& value) const {
      ::elfin::detail::pack_value(packer, value);
      return packer;
    }
  };
  }  // namespace adaptor
}
}  // namespace msgpack
