// Protocol evolution: every row of the guide's table (after the elfo book's), with a sender's and
// a receiver's version of a message as two C++ structs. Each version has a protocol of its own
// (the registry allows one type per (protocol, name)); a message travels by encoding it with the
// sender's type and decoding the bytes by the receiver's (protocol, name), as the network does.
// Each case checks the orderings the table gives: what must work delivers the values, what must
// fail fails with an error naming the message, the field and the problem.
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>

#include <elfin/any_message.hpp>
#include <elfin/message.hpp>

using namespace elfin;

namespace {

/// Encodes `message` as its sender would and decodes the bytes as the receiver `To`.
template <Message To, Message From>
Result<To, MessageDecodeError> deliver(const From& message) {
  static_assert(From::elfin_name == To::elfin_name, "the two versions of one message");
  auto decoded = AnyMessage::decode(To::elfin_protocol, To::elfin_name, AnyMessage(message).encode());
  if (!decoded) return Err{decoded.error()};
  REQUIRE(decoded->template get<To>() != nullptr);
  return *decoded->template get<To>();
}

/// Decodes hand-made bytes as `To`.
template <Message To>
Result<To, MessageDecodeError> decode_bytes(const std::function<void(msgpack::packer<msgpack::sbuffer>&)>& fill) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  fill(packer);
  auto decoded = AnyMessage::decode(To::elfin_protocol, To::elfin_name, std::string(buffer.data(), buffer.size()));
  if (!decoded) return Err{decoded.error()};
  return *decoded->template get<To>();
}

}  // namespace

// ---- adding a required field: update senders, then receivers ----
namespace add_required::v1 {
struct Sample {
  std::uint32_t a = 0;
  ELFIN_MESSAGE(evo_add_required_v1, Sample, a);
};
}  // namespace add_required::v1
namespace add_required::v2 {
struct Sample {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  ELFIN_MESSAGE(evo_add_required_v2, Sample, a, b);
};
}  // namespace add_required::v2

TEST_CASE("adding a required field: a new sender reaches an old receiver, not the other way", "[core][evolution]") {
  auto new_to_old = deliver<add_required::v1::Sample>(add_required::v2::Sample{1, 2});
  REQUIRE(new_to_old.ok());
  CHECK(new_to_old->a == 1);

  auto old_to_new = deliver<add_required::v2::Sample>(add_required::v1::Sample{1});
  REQUIRE_FALSE(old_to_new.ok());
  CHECK(old_to_new.error().message() == "cannot decode evo_add_required_v2.Sample: missing field `b`");
}

// ---- adding an optional field: any order ----
namespace add_optional::v1 {
struct Sample {
  std::uint32_t a = 0;
  ELFIN_MESSAGE(evo_add_optional_v1, Sample, a);
};
}  // namespace add_optional::v1
namespace add_optional::v2 {
struct Sample {
  std::uint32_t a = 0;
  std::uint32_t b = 5;             // #[serde(default)]: keeps this when missing
  std::optional<std::uint32_t> c;  // Option<u32>
  ELFIN_MESSAGE(evo_add_optional_v2, Sample, a, ELFIN_DEFAULT(b), c);
};
}  // namespace add_optional::v2

TEST_CASE("adding an optional field works in any update order", "[core][evolution]") {
  auto old_to_new = deliver<add_optional::v2::Sample>(add_optional::v1::Sample{7});
  REQUIRE(old_to_new.ok());
  CHECK(old_to_new->a == 7);
  CHECK(old_to_new->b == 5);
  CHECK_FALSE(old_to_new->c.has_value());

  auto new_to_old = deliver<add_optional::v1::Sample>(add_optional::v2::Sample{7, 8, 9});
  REQUIRE(new_to_old.ok());
  CHECK(new_to_old->a == 7);

  auto new_to_new = deliver<add_optional::v2::Sample>(add_optional::v2::Sample{7, 8, 9});
  REQUIRE(new_to_new.ok());
  CHECK(new_to_new->b == 8);
  CHECK(new_to_new->c == std::optional<std::uint32_t>{9});

  auto none = deliver<add_optional::v2::Sample>(add_optional::v2::Sample{7, 8, std::nullopt});  // nil on the wire
  REQUIRE(none.ok());
  CHECK_FALSE(none->c.has_value());
}

TEST_CASE("an optional field present with a value of the wrong type still fails", "[core][evolution]") {
  auto wrong = decode_bytes<add_optional::v2::Sample>([](auto& p) {
    p.pack_map(2);
    p.pack(std::string("a"));
    p.pack(1);
    p.pack(std::string("c"));
    p.pack(std::string("nine"));
  });
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().message() == "cannot decode evo_add_optional_v2.Sample: field `c`: expected uint32, got string");
}

// ---- renaming a field with an alias: update receivers, then senders ----
namespace rename_field::v1 {
struct Sample {
  std::uint32_t a = 0;
  ELFIN_MESSAGE(evo_rename_field_v1, Sample, a);
};
}  // namespace rename_field::v1
namespace rename_field::v2 {
struct Sample {
  std::uint32_t b = 0;
  ELFIN_MESSAGE(evo_rename_field_v2, Sample, ELFIN_ALIAS(b, "a"));
};
}  // namespace rename_field::v2
namespace rename_field::v3 {
struct Sample {  // renamed twice, and optional as well: ELFIN_FIELD combines options
  std::uint32_t c = 3;
  ELFIN_MESSAGE(evo_rename_field_v3, Sample, ELFIN_FIELD(c, elfin::alias("a", "b"), elfin::defaulted));
};
}  // namespace rename_field::v3

TEST_CASE("renaming a field with an alias: a new receiver accepts the old name, an old one fails",
          "[core][evolution]") {
  auto old_to_new = deliver<rename_field::v2::Sample>(rename_field::v1::Sample{42});
  REQUIRE(old_to_new.ok());
  CHECK(old_to_new->b == 42);

  auto new_to_new = deliver<rename_field::v2::Sample>(rename_field::v2::Sample{43});
  REQUIRE(new_to_new.ok());
  CHECK(new_to_new->b == 43);

  auto new_to_old = deliver<rename_field::v1::Sample>(rename_field::v2::Sample{42});
  REQUIRE_FALSE(new_to_old.ok());
  CHECK(new_to_old.error().message() == "cannot decode evo_rename_field_v1.Sample: missing field `a`");

  auto from_v1 = deliver<rename_field::v3::Sample>(rename_field::v1::Sample{1});
  auto from_v2 = deliver<rename_field::v3::Sample>(rename_field::v2::Sample{2});
  REQUIRE(from_v1.ok());
  REQUIRE(from_v2.ok());
  CHECK(from_v1->c == 1);
  CHECK(from_v2->c == 2);
  auto from_nothing = decode_bytes<rename_field::v3::Sample>([](auto& p) { p.pack_map(0); });
  REQUIRE(from_nothing.ok());
  CHECK(from_nothing->c == 3);
}

TEST_CASE("a field sent under both its name and its alias is an error, not a silent choice", "[core][evolution]") {
  auto both = decode_bytes<rename_field::v2::Sample>([](auto& p) {
    p.pack_map(2);
    p.pack(std::string("a"));
    p.pack(1);
    p.pack(std::string("b"));
    p.pack(2);
  });
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().message() == "cannot decode evo_rename_field_v2.Sample: duplicate field `b`");
}

// ---- removing a required field: update receivers, then senders ----
namespace remove_field::v1 {
struct Sample {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  ELFIN_MESSAGE(evo_remove_field_v1, Sample, a, b);
};
}  // namespace remove_field::v1
namespace remove_field::v2 {
struct Sample {
  std::uint32_t a = 0;
  ELFIN_MESSAGE(evo_remove_field_v2, Sample, a);
};
}  // namespace remove_field::v2

TEST_CASE("removing a required field: a new receiver skips it, an old receiver misses it", "[core][evolution]") {
  auto old_to_new = deliver<remove_field::v2::Sample>(remove_field::v1::Sample{1, 2});
  REQUIRE(old_to_new.ok());
  CHECK(old_to_new->a == 1);

  auto new_to_old = deliver<remove_field::v1::Sample>(remove_field::v2::Sample{1});
  REQUIRE_FALSE(new_to_old.ok());
  CHECK(new_to_old.error().message() == "cannot decode evo_remove_field_v1.Sample: missing field `b`");
}

// ---- promotion of numbers: any order, as long as the value fits ----
namespace promotion::u32 {
struct Sample {
  std::uint32_t a = 0;
  ELFIN_MESSAGE(evo_promotion_u32, Sample, a);
};
}  // namespace promotion::u32
namespace promotion::u64 {
struct Sample {
  std::uint64_t a = 0;
  ELFIN_MESSAGE(evo_promotion_u64, Sample, a);
};
}  // namespace promotion::u64
namespace promotion::u8 {
struct Sample {
  std::uint8_t a = 0;
  ELFIN_MESSAGE(evo_promotion_u8, Sample, a);
};
}  // namespace promotion::u8
namespace promotion::i16 {
struct Sample {
  std::int16_t a = 0;
  ELFIN_MESSAGE(evo_promotion_i16, Sample, a);
};
}  // namespace promotion::i16
namespace promotion::i64 {
struct Sample {
  std::int64_t a = 0;
  ELFIN_MESSAGE(evo_promotion_i64, Sample, a);
};
}  // namespace promotion::i64
namespace promotion::f64 {
struct Sample {
  double a = 0;
  ELFIN_MESSAGE(evo_promotion_f64, Sample, a);
};
}  // namespace promotion::f64

TEST_CASE("promotion of numbers: any integer width and sign is accepted when the value fits", "[core][evolution]") {
  auto u32_to_u64 = deliver<promotion::u64::Sample>(promotion::u32::Sample{4'000'000'000u});
  REQUIRE(u32_to_u64.ok());
  CHECK(u32_to_u64->a == 4'000'000'000u);

  auto u8_to_i64 = deliver<promotion::i64::Sample>(promotion::u8::Sample{255});
  REQUIRE(u8_to_i64.ok());
  CHECK(u8_to_i64->a == 255);

  auto u32_to_i16 = deliver<promotion::i16::Sample>(promotion::u32::Sample{300});
  REQUIRE(u32_to_i16.ok());
  CHECK(u32_to_i16->a == 300);

  auto u64_to_u32 = deliver<promotion::u32::Sample>(promotion::u64::Sample{12});  // narrowing, value fits
  REQUIRE(u64_to_u32.ok());
  CHECK(u64_to_u32->a == 12);

  auto negative_to_i16 = deliver<promotion::i16::Sample>(promotion::i64::Sample{-32768});
  REQUIRE(negative_to_i16.ok());
  CHECK(negative_to_i16->a == -32768);

  auto int_to_float = deliver<promotion::f64::Sample>(promotion::i64::Sample{-3});
  REQUIRE(int_to_float.ok());
  CHECK(int_to_float->a == -3.0);
}

TEST_CASE("promotion of numbers: a value that does not fit is an error naming the field and value",
          "[core][evolution]") {
  auto to_u8 = deliver<promotion::u8::Sample>(promotion::u32::Sample{300});
  REQUIRE_FALSE(to_u8.ok());
  CHECK(to_u8.error().message() == "cannot decode evo_promotion_u8.Sample: field `a`: 300 does not fit in uint8");

  auto to_u32 = deliver<promotion::u32::Sample>(promotion::u64::Sample{1ull << 40});
  REQUIRE_FALSE(to_u32.ok());
  CHECK(to_u32.error().message() ==
        "cannot decode evo_promotion_u32.Sample: field `a`: 1099511627776 does not fit in uint32");

  auto negative_to_unsigned = deliver<promotion::u64::Sample>(promotion::i64::Sample{-1});
  REQUIRE_FALSE(negative_to_unsigned.ok());
  CHECK(negative_to_unsigned.error().message() ==
        "cannot decode evo_promotion_u64.Sample: field `a`: -1 does not fit in uint64");

  auto below_i16 = deliver<promotion::i16::Sample>(promotion::i64::Sample{-40'000});
  REQUIRE_FALSE(below_i16.ok());
  CHECK(below_i16.error().message() ==
        "cannot decode evo_promotion_i16.Sample: field `a`: -40000 does not fit in int16");

  auto above_i64 = deliver<promotion::i64::Sample>(promotion::u64::Sample{std::numeric_limits<std::uint64_t>::max()});
  REQUIRE_FALSE(above_i64.ok());
  CHECK_THAT(above_i64.error().message(), Catch::Contains("18446744073709551615 does not fit in int64"));

  auto float_to_int = deliver<promotion::u32::Sample>(promotion::f64::Sample{1.5});
  REQUIRE_FALSE(float_to_int.ok());
  CHECK(float_to_int.error().message() ==
        "cannot decode evo_promotion_u32.Sample: field `a`: expected uint32, got float");
}

// ---- (un)wrapping into a newtype: any order ----
namespace newtype::v1 {
struct Sample {
  std::uint32_t a = 0;
  ELFIN_MESSAGE(evo_newtype_v1, Sample, a);
};
}  // namespace newtype::v1
namespace newtype::v2 {
struct U32 {
  std::uint32_t value = 0;
  ELFIN_NEWTYPE(value);
};
struct Sample {
  U32 a;
  ELFIN_MESSAGE(evo_newtype_v2, Sample, a);
};
}  // namespace newtype::v2

TEST_CASE("wrapping a field into a newtype and unwrapping it work in any order", "[core][evolution]") {
  auto wrap = deliver<newtype::v2::Sample>(newtype::v1::Sample{17});
  REQUIRE(wrap.ok());
  CHECK(wrap->a.value == 17);

  auto unwrap = deliver<newtype::v1::Sample>(newtype::v2::Sample{{18}});
  REQUIRE(unwrap.ok());
  CHECK(unwrap->a == 18);

  auto wrong = decode_bytes<newtype::v2::Sample>([](auto& p) {
    p.pack_map(1);
    p.pack(std::string("a"));
    p.pack(std::string("x"));
  });
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.error().message() == "cannot decode evo_newtype_v2.Sample: field `a`: expected uint32, got string");
}

// ---- enums, packed by variant name ----
namespace add_variant::v1 {
enum class Kind { A };
ELFIN_ENUM(Kind, A);
struct Sample {
  Kind kind = Kind::A;
  ELFIN_MESSAGE(evo_add_variant_v1, Sample, kind);
};
}  // namespace add_variant::v1
namespace add_variant::v2 {
enum class Kind { A, B };
ELFIN_ENUM(Kind, A, B);
struct Sample {
  Kind kind = Kind::A;
  ELFIN_MESSAGE(evo_add_variant_v2, Sample, kind);
};
}  // namespace add_variant::v2

TEST_CASE("an enum travels as the name of its variant", "[core][evolution]") {
  const std::string bytes = AnyMessage(add_variant::v2::Sample{add_variant::v2::Kind::B}).encode();
  auto handle = msgpack::unpack(bytes.data(), bytes.size());
  const msgpack::object& root = handle.get();
  REQUIRE(root.type == msgpack::type::MAP);
  REQUIRE(root.via.map.size == 1);
  CHECK(root.via.map.ptr[0].val.as<std::string>() == "B");
}

TEST_CASE("adding a variant: a new receiver first; an old receiver rejects the new variant", "[core][evolution]") {
  using add_variant::v1::Kind;
  auto old_to_new = deliver<add_variant::v2::Sample>(add_variant::v1::Sample{Kind::A});
  REQUIRE(old_to_new.ok());
  CHECK(old_to_new->kind == add_variant::v2::Kind::A);

  auto known_to_old = deliver<add_variant::v1::Sample>(add_variant::v2::Sample{add_variant::v2::Kind::A});
  REQUIRE(known_to_old.ok());
  CHECK(known_to_old->kind == Kind::A);

  auto unknown_to_old = deliver<add_variant::v1::Sample>(add_variant::v2::Sample{add_variant::v2::Kind::B});
  REQUIRE_FALSE(unknown_to_old.ok());
  CHECK(unknown_to_old.error().message() ==
        "cannot decode evo_add_variant_v1.Sample: field `kind`: unknown variant `B` of Kind");
}

TEST_CASE("removing a variant: senders first; a new receiver rejects the removed variant", "[core][evolution]") {
  // v2 -> v1 is the removal of B: the new (v1) sender reaches the old (v2) receiver, not the reverse.
  auto new_to_old = deliver<add_variant::v2::Sample>(add_variant::v1::Sample{add_variant::v1::Kind::A});
  REQUIRE(new_to_old.ok());
  auto old_to_new = deliver<add_variant::v1::Sample>(add_variant::v2::Sample{add_variant::v2::Kind::B});
  REQUIRE_FALSE(old_to_new.ok());
  CHECK_THAT(old_to_new.error().message(), Catch::Contains("unknown variant `B` of Kind"));
}

namespace rename_variant::v2 {
enum class Kind { B };
ELFIN_ENUM(Kind, ELFIN_ALIAS(B, "A"));
struct Sample {
  Kind kind = Kind::B;
  ELFIN_MESSAGE(evo_rename_variant_v2, Sample, kind);
};
}  // namespace rename_variant::v2

TEST_CASE("renaming a variant with an alias: a new receiver accepts the old name, an old one fails",
          "[core][evolution]") {
  auto old_to_new = deliver<rename_variant::v2::Sample>(add_variant::v1::Sample{add_variant::v1::Kind::A});
  REQUIRE(old_to_new.ok());
  CHECK(old_to_new->kind == rename_variant::v2::Kind::B);

  auto new_to_old = deliver<add_variant::v1::Sample>(rename_variant::v2::Sample{rename_variant::v2::Kind::B});
  REQUIRE_FALSE(new_to_old.ok());
  CHECK_THAT(new_to_old.error().message(), Catch::Contains("unknown variant `B` of Kind"));
}

namespace catch_all::v2 {
enum class Kind { A, O };
ELFIN_ENUM(Kind, A, ELFIN_OTHER(O));
struct Sample {
  Kind kind = Kind::A;
  ELFIN_MESSAGE(evo_catch_all_v2, Sample, kind);
};
}  // namespace catch_all::v2

TEST_CASE("a catch-all variant takes the names a receiver does not know", "[core][evolution]") {
  auto unknown = deliver<catch_all::v2::Sample>(add_variant::v2::Sample{add_variant::v2::Kind::B});
  REQUIRE(unknown.ok());
  CHECK(unknown->kind == catch_all::v2::Kind::O);
  auto known = deliver<catch_all::v2::Sample>(add_variant::v2::Sample{add_variant::v2::Kind::A});
  REQUIRE(known.ok());
  CHECK(known->kind == catch_all::v2::Kind::A);

  auto not_a_name = decode_bytes<catch_all::v2::Sample>([](auto& p) {
    p.pack_map(1);
    p.pack(std::string("kind"));
    p.pack(1);
  });
  REQUIRE_FALSE(not_a_name.ok());
  CHECK(not_a_name.error().message() ==
        "cannot decode evo_catch_all_v2.Sample: field `kind`: expected string, got integer");
}

// ---- replacing a field with an untagged union: any order ----
namespace union_field::v2 {
struct Sample {
  std::variant<std::uint32_t, std::string> a;
  ELFIN_MESSAGE(evo_union_field_v2, Sample, a);
};
}  // namespace union_field::v2

TEST_CASE("replacing a field with an untagged union (std::variant) works in any order", "[core][evolution]") {
  auto old_to_new = deliver<union_field::v2::Sample>(promotion::u32::Sample{5});
  REQUIRE(old_to_new.ok());
  REQUIRE(std::holds_alternative<std::uint32_t>(old_to_new->a));
  CHECK(std::get<std::uint32_t>(old_to_new->a) == 5);

  auto text = deliver<union_field::v2::Sample>(union_field::v2::Sample{std::string("five")});
  REQUIRE(text.ok());
  CHECK(std::get<std::string>(text->a) == "five");

  auto number_to_old = deliver<promotion::u32::Sample>(union_field::v2::Sample{std::uint32_t{6}});
  REQUIRE(number_to_old.ok());
  CHECK(number_to_old->a == 6);

  // An old receiver gets what it can read; a value only the union allows fails there.
  auto text_to_old = deliver<promotion::u32::Sample>(union_field::v2::Sample{std::string("six")});
  REQUIRE_FALSE(text_to_old.ok());
  CHECK(text_to_old.error().message() ==
        "cannot decode evo_promotion_u32.Sample: field `a`: expected uint32, got string");

  auto neither = decode_bytes<union_field::v2::Sample>([](auto& p) {
    p.pack_map(1);
    p.pack(std::string("a"));
    p.pack(true);
  });
  REQUIRE_FALSE(neither.ok());
  CHECK(neither.error().message() ==
        "cannot decode evo_union_field_v2.Sample: field `a`: expected uint32 or string, got boolean");
}

// ---- errors name the path inside parts and arrays ----
namespace parts {
struct Leg {
  std::string instrument;
  std::int64_t quantity = 0;
  ELFIN_PART(instrument, quantity);
};
struct Order {
  std::vector<Leg> legs;
  std::string name;
  ELFIN_MESSAGE(evo_parts, Order, legs, name);
};
}  // namespace parts

TEST_CASE("decoding errors name the field path through parts and arrays", "[core][evolution]") {
  auto fine = deliver<parts::Order>(parts::Order{{{"x", 1}, {"y", -2}}, "o"});
  REQUIRE(fine.ok());
  REQUIRE(fine->legs.size() == 2);
  CHECK(fine->legs[1].instrument == "y");
  CHECK(fine->legs[1].quantity == -2);

  auto wrong_name = decode_bytes<parts::Order>([](auto& p) {
    p.pack_map(2);
    p.pack(std::string("legs"));
    p.pack_array(0);
    p.pack(std::string("name"));
    p.pack(12);
  });
  REQUIRE_FALSE(wrong_name.ok());
  CHECK(wrong_name.error().message() == "cannot decode evo_parts.Order: field `name`: expected string, got integer");

  auto missing_inside = decode_bytes<parts::Order>([](auto& p) {
    p.pack_map(2);
    p.pack(std::string("name"));
    p.pack(std::string("o"));
    p.pack(std::string("legs"));
    p.pack_array(2);
    p.pack_map(2);
    p.pack(std::string("instrument"));
    p.pack(std::string("x"));
    p.pack(std::string("quantity"));
    p.pack(1);
    p.pack_map(1);
    p.pack(std::string("instrument"));
    p.pack(std::string("y"));
  });
  REQUIRE_FALSE(missing_inside.ok());
  CHECK(missing_inside.error().message() == "cannot decode evo_parts.Order: missing field `legs[1].quantity`");

  auto wrong_inside = decode_bytes<parts::Order>([](auto& p) {
    p.pack_map(2);
    p.pack(std::string("name"));
    p.pack(std::string("o"));
    p.pack(std::string("legs"));
    p.pack_array(1);
    p.pack_map(2);
    p.pack(std::string("instrument"));
    p.pack(std::string("x"));
    p.pack(std::string("quantity"));
    p.pack(1.5);
  });
  REQUIRE_FALSE(wrong_inside.ok());
  CHECK(wrong_inside.error().message() ==
        "cannot decode evo_parts.Order: field `legs[0].quantity`: expected int64, got float");

  auto not_a_map = decode_bytes<parts::Order>([](auto& p) { p.pack_array(0); });
  REQUIRE_FALSE(not_a_map.ok());
  CHECK(not_a_map.error().message() == "cannot decode evo_parts.Order: expected map, got array");
}

TEST_CASE("unknown keys are skipped, whatever their value or key type", "[core][evolution]") {
  auto extra = decode_bytes<promotion::u32::Sample>([](auto& p) {
    p.pack_map(4);
    p.pack(std::string("later"));
    p.pack_map(1);
    p.pack(1);
    p.pack(std::string("nested"));
    p.pack(7);  // a non-string key
    p.pack(std::string("x"));
    p.pack(std::string("a"));
    p.pack(9);
    p.pack(std::string("list"));
    p.pack_array(1);
    p.pack_nil();
  });
  REQUIRE(extra.ok());
  CHECK(extra->a == 9);
}
