// Messages and envelopes: msgpack round trips of every message the tests use, decoding errors,
// the registry, envelopes, match, addresses and error names.
#include <concepts>
#include <functional>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;
using elfin::test::other::Note;

namespace {

/// Encodes `message` through AnyMessage, decodes it by (protocol, name), and compares.
template <Message M>
void check_round_trip(const M& message) {
  INFO(M::elfin_protocol << "." << M::elfin_name);
  const std::string bytes = AnyMessage(message).encode();
  auto decoded = AnyMessage::decode(M::elfin_protocol, M::elfin_name, bytes);
  REQUIRE(decoded.ok());
  REQUIRE(decoded->template is<M>());
  const M* back = decoded->template get<M>();
  REQUIRE(back != nullptr);
  if constexpr (std::equality_comparable<M>) CHECK(*back == message);
  CHECK(decoded->encode() == bytes);

  // The network's paths give the same results: packed onto the end of a string, decoded straight
  // into an envelope.
  std::string appended = "head";
  vtable_of<M>().pack(&message, appended);
  CHECK(appended == "head" + bytes);
  const Addr sender = Addr::make(2, 3, 4, 5);
  const TraceId trace = TraceId::compose(100, 1, 2, 3);
  auto envelope = AnyMessage::decode_envelope(M::elfin_protocol, M::elfin_name, bytes, sender, trace);
  REQUIRE(envelope.ok());
  REQUIRE(envelope->template is<M>());
  if constexpr (std::equality_comparable<M>) CHECK(*envelope->template get<M>() == message);
  CHECK(envelope->sender() == sender);
  CHECK(envelope->trace_id() == trace);
  CHECK(envelope->kind() == MessageKind::Regular);
}

std::string pack_map(const std::function<void(msgpack::packer<msgpack::sbuffer>&)>& fill) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  fill(packer);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace

TEST_CASE("every message the tests use survives a msgpack round trip by (protocol, name)", "[core][messages]") {
  check_round_trip(Increment{7});
  check_round_trip(GetValue{});
  check_round_trip(Numbered{3, 1ull << 40});
  check_round_trip(Boom{"why not"});
  check_round_trip(Echo{"héllo, wörld"});
  check_round_trip(Keyed{5, {1, 2, 3}, "multicast"});
  check_round_trip(Seen{9, "what", 0x7fff'ffff'ffff'ffffull});
  check_round_trip(Start{});
  check_round_trip(Gate{"first"});
  check_round_trip(Question{1, {2, 3}, "notify"});
  check_round_trip(Ask{"all", 1, {2}, "mode"});
  check_round_trip(Answers{{"ok:1", "err:Failed"}, 42});
  check_round_trip(Probe{123, 4, "try"});
  check_round_trip(Produce{5});
  check_round_trip(WhoAmI{2});
  check_round_trip(Tick{99});
  check_round_trip(SenderDone{4, 20'000, 3});
  check_round_trip(GetFifoReport{});
  check_round_trip(Note{"other protocol"});
}

TEST_CASE("the runtime's own messages survive a msgpack round trip", "[core][messages]") {
  check_round_trip(Ping{});
  check_round_trip(ConfigUpdated{});
  check_round_trip(Terminate::closing("shutting down"));
  auto terminate = AnyMessage::decode("elfin", "Terminate", AnyMessage(Terminate::closing("bye")).encode());
  REQUIRE(terminate.ok());
  CHECK(terminate->get<Terminate>()->force_close);
  CHECK(terminate->get<Terminate>()->reason == "bye");

  auto config = AnyConfig::from_toml("step = 3\n[nested]\nname = \"x\"");
  REQUIRE(config.ok());
  const UpdateConfig update{*config};
  auto back = AnyMessage::decode("elfin", "UpdateConfig", AnyMessage(update).encode());
  REQUIRE(back.ok());
  REQUIRE(back->get<UpdateConfig>() != nullptr);
  CHECK(back->get<UpdateConfig>()->config == *config);

  auto validate = AnyMessage::decode("elfin", "ValidateConfig", AnyMessage(ValidateConfig{*config}).encode());
  REQUIRE(validate.ok());
  CHECK(validate->get<ValidateConfig>()->config == *config);
}

TEST_CASE("a response type with a msgpack map survives a round trip", "[core][messages]") {
  const FifoReport report{10, 1, {4, 6}, {2, 1}};
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, report);
  auto handle = msgpack::unpack(buffer.data(), buffer.size());
  FifoReport back;
  handle.get().convert(back);
  CHECK(back == report);
}

TEST_CASE("a message is encoded as a msgpack map keyed by its field names", "[core][messages]") {
  const std::string bytes = AnyMessage(Numbered{3, 4}).encode();
  auto handle = msgpack::unpack(bytes.data(), bytes.size());
  const msgpack::object& root = handle.get();
  REQUIRE(root.type == msgpack::type::MAP);
  REQUIRE(root.via.map.size == 2);
  std::vector<std::string> keys;
  for (std::uint32_t i = 0; i < root.via.map.size; ++i) keys.push_back(root.via.map.ptr[i].key.as<std::string>());
  CHECK(sorted(keys) == std::vector<std::string>{"sender", "seq"});

  const std::string empty = AnyMessage(Start{}).encode();
  auto empty_handle = msgpack::unpack(empty.data(), empty.size());
  CHECK(empty_handle.get().type == msgpack::type::MAP);
  CHECK(empty_handle.get().via.map.size == 0);
}

TEST_CASE("decoding requires plain fields and skips unknown ones", "[core][messages]") {
  // The evolution rules (protocol_evolution.test.cpp has the whole table): a plain field is required.
  const std::string nothing = pack_map([](auto& p) { p.pack_map(0); });
  auto missing = AnyMessage::decode("test", "Increment", nothing);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message() == "cannot decode test.Increment: missing field `delta`");

  const std::string newer = pack_map([](auto& p) {
    p.pack_map(2);
    p.pack(std::string("delta"));
    p.pack(5);
    p.pack(std::string("added_later"));
    p.pack(std::string("ignored"));
  });
  auto evolved = AnyMessage::decode("test", "Increment", newer);
  REQUIRE(evolved.ok());
  CHECK(evolved->get<Increment>()->delta == 5);
}

TEST_CASE("decoding bytes that are not the message fails with an error naming it", "[core][messages]") {
  const std::string wrong_type = pack_map([](auto& p) {
    p.pack_map(1);
    p.pack(std::string("seq"));
    p.pack(std::string("not a number"));
  });
  const std::string not_a_map = pack_map([](auto& p) { p.pack(17); });
  const std::vector<std::string> garbage{std::string("\xc1"), std::string(), std::string("\x82\xa3seq"),
                                         wrong_type,          not_a_map,     std::string("\xde\xff\xff")};
  for (std::size_t i = 0; i < garbage.size(); ++i) {
    auto result = AnyMessage::decode("test", "Numbered", garbage[i]);
    INFO("garbage #" << i);
    REQUIRE_FALSE(result.ok());
    CHECK_THAT(result.error().message(), Catch::Contains("test.Numbered"));
    auto envelope = AnyMessage::decode_envelope("test", "Numbered", garbage[i], Addr{}, TraceId{});
    REQUIRE_FALSE(envelope.ok());
    CHECK(envelope.error().message() == result.error().message());
  }
}

TEST_CASE("decoding a container count larger than the bytes fails before allocating it", "[core][messages]") {
  // Five bytes announcing 4 billion elements (an array, a map): msgpack-c would reserve room for all of
  // them up front; the decoder refuses the count instead.
  for (const std::string& bytes : {std::string("\xdd\xff\xff\xff\xff", 5), std::string("\xdf\xff\xff\xff\xff", 5),
                                   std::string("\x81\xa3seq\xdd\x00\x10\x00\x00\x01", 10)}) {
    auto result = AnyMessage::decode("test", "Numbered", bytes);
    REQUIRE_FALSE(result.ok());
    CHECK_THAT(result.error().message(), Catch::Contains("size overflow"));
  }
}

TEST_CASE("decoding an unknown (protocol, name) fails with an error naming it", "[core][messages]") {
  auto result = AnyMessage::decode("nope", "Nothing", AnyMessage(Start{}).encode());
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(result.error().message(), Catch::Contains("nope.Nothing"));
  CHECK_FALSE(AnyMessage::decode("test", "Nothing", "").ok());
  CHECK_FALSE(AnyMessage::decode("other", "Increment", AnyMessage(Increment{}).encode()).ok());
}

TEST_CASE("the registry finds each message type by (protocol, name), with its kind", "[core][messages]") {
  auto& registry = MessageRegistry::instance();
  CHECK(registry.find("test", "Numbered") == &vtable_of<Numbered>());
  CHECK(registry.find("other", "Note") == &vtable_of<Note>());
  CHECK(registry.find("test", "Note") == nullptr);
  CHECK(registry.find("elfin", "Ping") == &vtable_of<Ping>());
  CHECK(vtable_of<Question>().is_request);
  CHECK_FALSE(vtable_of<Numbered>().is_request);
  CHECK(vtable_of<Ping>().is_system);
  CHECK_FALSE(vtable_of<Question>().is_system);
  CHECK(registry.conflicts().empty());
}

TEST_CASE("an envelope carries its message, sender, trace id and kind", "[core][messages]") {
  const Addr sender = Addr::make(1, 2, 3, 4);
  const TraceId trace = TraceId::compose(100, 1, 2, 3);
  Envelope envelope = Envelope::make(Keyed{5, {6}, "m"}, sender, trace);
  CHECK(envelope.is<Keyed>());
  CHECK_FALSE(envelope.is<Numbered>());
  CHECK(envelope.get<Numbered>() == nullptr);
  REQUIRE(envelope.get<Keyed>() != nullptr);
  CHECK(*envelope.get<Keyed>() == Keyed{5, {6}, "m"});
  CHECK(envelope.sender() == sender);
  CHECK(envelope.trace_id() == trace);
  CHECK(envelope.kind() == MessageKind::Regular);
  CHECK(envelope.protocol() == "test");
  CHECK(envelope.name() == "Keyed");

  Envelope shared = detail::EnvelopeAccess::share(envelope);  // another handle to the same immutable message
  CHECK(shared.get<Keyed>() == envelope.get<Keyed>());
  CHECK(AnyMessage::from(shared).get<Keyed>()->keys == std::vector<std::uint64_t>{6});
}

TEST_CASE("a request's token taken from an envelope without a requester is forgotten", "[core][messages]") {
  Envelope envelope = Envelope::make(Question{1, {}, ""}, Addr{}, TraceId{});
  auto token = envelope.take_token<Question>();
  CHECK(token.is_forgotten());
  std::move(token).respond("nobody listens");  // does nothing, and does not crash
}

// A synchronous handler runs inside `handle` itself: the awaitable is ready, with the answer.
template <class... H>
bool handled_now(Envelope& envelope, H&&... handlers) {
  auto awaitable = handle(envelope, std::forward<H>(handlers)...);
  REQUIRE(awaitable.await_ready());
  return awaitable.await_resume();
}

TEST_CASE("handle calls the first handler whose message type fits, or none", "[core][messages]") {
  Envelope envelope = Envelope::make(Increment{4}, Addr{}, TraceId{});
  std::string called;
  CHECK(handled_now(
      envelope, [&](const Numbered&) { called = "numbered"; },
      [&](const Increment& m) { called = fmt::format("inc{}", m.delta); }, [&](const Envelope&) { called = "any"; }));
  CHECK(called == "inc4");

  called.clear();
  CHECK(handled_now(
      envelope, [&](const Envelope& e) { called = std::string(e.name()); },
      [&](const Increment&) { called = "late"; }));
  CHECK(called == "Increment");

  called.clear();
  CHECK(handled_now(
      envelope, [&](const Numbered&) { called = "numbered"; }, [&](const auto& e) { called = std::string(e.name()); }));
  CHECK(called == "Increment");

  called.clear();
  CHECK_FALSE(handled_now(envelope, [&](const Numbered&) { called = "numbered"; }));
  CHECK(called.empty());
}

TEST_CASE("an address packs node, group, generation and slot", "[core][messages]") {
  const Addr addr = Addr::make(1, 3, 5, 17);
  CHECK(addr.node_no() == 1);
  CHECK(addr.group_no() == 3);
  CHECK(addr.generation() == 5);
  CHECK(addr.slot() == 17);
  CHECK_FALSE(addr.is_group());
  CHECK(to_string(addr) == "1/3/5/17");
  CHECK(Addr::group(1, 3).is_group());
  CHECK(Addr::group(1, 3).slot() == 0);
  CHECK(Addr{}.is_null());
  CHECK_FALSE(Addr{}.is_group());
  CHECK(to_string(Addr{}) == "null");
  CHECK(Addr{addr.raw()} == addr);
}

TEST_CASE("every messaging error has its own readable message", "[core][messages]") {
  std::vector<std::string> texts;
  for (SendErrorKind e :
       {SendErrorKind::NoRoute, SendErrorKind::Closed, SendErrorKind::Full, SendErrorKind::UnknownAddr}) {
    texts.emplace_back(to_string(e));
    CHECK(fmt::format("{}", e) == to_string(e));
    CHECK(fmt::format("{}", SendError<Increment>{e, Increment{}}) == to_string(e));
  }
  for (RequestError e : {RequestError::Failed, RequestError::Ignored}) texts.emplace_back(to_string(e));
  CHECK(to_string(RequestError{RequestError::Failed, "why"}) == "failed: why");
  for (const auto& text : texts) CHECK_FALSE(text.empty());
  auto unique = sorted(texts);
  CHECK(std::adjacent_find(unique.begin(), unique.end()) == unique.end());
}
