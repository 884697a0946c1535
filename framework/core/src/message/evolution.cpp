#include <elfin/evolution.hpp>

#include <fmt/format.h>

namespace elfin {

DecodeError::DecodeError(Kind kind, std::string path, std::string reason)
    : kind_(kind), path_(std::move(path)), reason_(std::move(reason)) {
  compose();
}

DecodeError DecodeError::invalid(std::string reason) { return DecodeError(Kind::Invalid, {}, std::move(reason)); }
DecodeError DecodeError::missing(std::string_view field) { return DecodeError(Kind::Missing, std::string(field), {}); }
DecodeError DecodeError::duplicate(std::string_view field) {
  return DecodeError(Kind::Duplicate, std::string(field), {});
}

void DecodeError::prepend_field(std::string_view name) {
  if (path_.empty() || path_.front() == '[') {
    path_.insert(0, name);
  } else {
    path_.insert(0, fmt::format("{}.", name));
  }
  compose();
}

void DecodeError::prepend_index(std::size_t index) {
  const bool name_follows = !path_.empty() && path_.front() != '[';
  path_.insert(0, name_follows ? fmt::format("[{}].", index) : fmt::format("[{}]", index));
  compose();
}

void DecodeError::compose() {
  switch (kind_) {
    case Kind::Missing:
      what_ = fmt::format("missing field `{}`", path_);
      break;
    case Kind::Duplicate:
      what_ = fmt::format("duplicate field `{}`", path_);
      break;
    case Kind::Invalid:
      what_ = path_.empty() ? reason_ : fmt::format("field `{}`: {}", path_, reason_);
      break;
  }
}

namespace detail {

std::string_view describe_msgpack(const msgpack::object& o) noexcept {
  switch (o.type) {
    case msgpack::type::NIL:
      return "nil";
    case msgpack::type::BOOLEAN:
      return "boolean";
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER:
      return "integer";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return "float";
    case msgpack::type::STR:
      return "string";
    case msgpack::type::BIN:
      return "binary";
    case msgpack::type::ARRAY:
      return "array";
    case msgpack::type::MAP:
      return "map";
    case msgpack::type::EXT:
      return "extension";
  }
  return "unknown value";
}

void throw_expected(std::string_view expected, const msgpack::object& got) {
  throw DecodeError::invalid(fmt::format("expected {}, got {}", expected, describe_msgpack(got)));
}

void throw_does_not_fit(std::uint64_t value, std::string_view type) {
  throw DecodeError::invalid(fmt::format("{} does not fit in {}", value, type));
}

void throw_does_not_fit(std::int64_t value, std::string_view type) {
  throw DecodeError::invalid(fmt::format("{} does not fit in {}", value, type));
}

void throw_unknown_variant(std::string_view enum_name, std::string_view variant) {
  throw DecodeError::invalid(fmt::format("unknown variant `{}` of {}", variant, enum_name));
}

}  // namespace detail
}  // namespace elfin
