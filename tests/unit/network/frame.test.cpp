#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <elfin/network/frame.hpp>

#ifdef ELFIN_TEST_COUNTS_ALLOCATIONS
#include "allocation_counter.hpp"
#endif

using namespace elfin::network;

namespace {

std::string bytes_of(const Frame& frame) {
  std::string out;
  encode(frame, out);
  return out;
}

// Owned copies of frames with views, so decoded frames can be compared after the reader moved on.
struct Owned {
  Frame frame;
  std::vector<std::string> storage;
};

Hello sample_hello() {
  Hello h;
  h.node_no = 3;
  h.launch_id = 0x0123456789ABCDEF;
  h.capabilities = 0;
  h.max_frame_size = 1 << 20;
  for (std::size_t i = 0; i < h.nonce.size(); ++i) h.nonce[i] = static_cast<std::uint8_t>(i * 7 + 1);
  h.node_name = "node-a";
  return h;
}

MessageFrame sample_message(bool request) {
  MessageFrame m;
  m.request = request;
  m.request_all = request;
  m.direct = !request;
  m.flow_id = 0xAABBCCDD;
  m.sender = 0x0001020000000011;
  m.recipient = request ? 0 : 0x0002030000000022;
  m.group_no = request ? 5 : 0;
  m.trace_id = 0x1122334455667788;
  m.request_id = request ? 0x99 : 0;
  m.protocol = "counter";
  m.name = "Increment";
  m.payload = std::string_view("\x81\xa5\x64\x65\x6c\x74\x61\x01", 8);  // {"delta": 1}
  return m;
}

std::vector<Frame> every_kind() {
  std::vector<Frame> frames;
  frames.emplace_back(sample_hello());
  frames.emplace_back(Auth{});
  frames.emplace_back(Auth{std::vector<std::uint8_t>(kMacSize, 0xAB)});
  frames.emplace_back(Refuse{"authentication failed: wrong secret"});
  frames.emplace_back(Welcome{{{1, "counters"}, {2, "timers"}, {200, std::string(255, 'g')}}});
  frames.emplace_back(Welcome{});
  frames.emplace_back(sample_message(false));
  frames.emplace_back(sample_message(true));
  MessageFrame empty_payload = sample_message(false);
  empty_payload.payload = {};
  frames.emplace_back(empty_payload);
  frames.emplace_back(ResponseFrame{7,
                                    8,
                                    {{ResponseStatus::Ok, std::string_view("\x2a", 1)},
                                     {ResponseStatus::Failed, {}},
                                     {ResponseStatus::Failed, "the recipient failed while handling it: boom"},
                                     {ResponseStatus::Ignored, {}},
                                     {ResponseStatus::Ok, {}}}});
  frames.emplace_back(ResponseFrame{1, 2, {}});
  frames.emplace_back(Credit{42, 100});
  frames.emplace_back(Ping{0xFEEDFACECAFEBEEF});
  frames.emplace_back(Pong{1});
  frames.emplace_back(Bye{"node is terminating"});
  frames.emplace_back(Bye{});
  return frames;
}

std::string stream_of(const std::vector<Frame>& frames) {
  std::string out;
  for (const Frame& f : frames) encode(f, out);
  return out;
}

// Reads every complete frame, comparing each to the expected one while its views are still valid.
void expect_frames(FrameReader& reader, const std::vector<Frame>& expected, std::size_t& next_index) {
  for (;;) {
    auto r = reader.next();
    REQUIRE(r.ok());
    if (!r.value()) return;
    REQUIRE(next_index < expected.size());
    CHECK(*r.value() == expected[next_index]);
    ++next_index;
  }
}

FrameError read_error(std::string_view stream, std::uint32_t max = kDefaultMaxFrameSize) {
  FrameReader reader(max);
  reader.feed(stream);
  auto r = reader.next();
  REQUIRE_FALSE(r.ok());
  return r.error();
}

std::string with_length(std::string_view body) {
  std::string out;
  const auto n = static_cast<std::uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
  out.append(body);
  return out;
}

}  // namespace

TEST_CASE("every frame kind survives encoding and decoding", "[network]") {
  for (const Frame& frame : every_kind()) {
    FrameReader reader;
    reader.feed(bytes_of(frame));
    auto r = reader.next();
    REQUIRE(r.ok());
    REQUIRE(r.value().has_value());
    CHECK(*r.value() == frame);
    CHECK(kind_of(*r.value()) == kind_of(frame));
    auto after = reader.next();
    REQUIRE(after.ok());
    CHECK_FALSE(after.value().has_value());
    CHECK(reader.frames_read() == 1);
    CHECK(reader.buffered() == 0);
  }
}

TEST_CASE("the wire layout is little-endian with the documented fields", "[network]") {
  SECTION("Credit") {
    CHECK(bytes_of(Credit{0x01020304, 0x0A0B0C0D}) ==
          std::string("\x09\x00\x00\x00\x0c\x04\x03\x02\x01\x0d\x0c\x0b\x0a", 13));
  }
  SECTION("Hello starts with the magic ELFINNET and version 2") {
    const std::string b = bytes_of(sample_hello());
    CHECK(b.substr(4, 1) == "\x01");
    CHECK(b.substr(5, 8) == "ELFINNET");
    CHECK(b.substr(13, 2) == std::string("\x02\x00", 2));
    CHECK(b.size() == 4 + 1 + 8 + 2 + 2 + 8 + 4 + 4 + 32 + 1 + 6);
  }
  SECTION("Message: request_id only when the request flag is set") {
    MessageFrame m = sample_message(false);
    const std::string plain = bytes_of(m);
    m.request = true;
    m.request_id = 5;
    const std::string request = bytes_of(m);
    CHECK(request.size() == plain.size() + 8);
    CHECK(plain[5] == '\x04');    // direct
    CHECK(request[5] == '\x05');  // request | direct
  }
}

TEST_CASE("frames split at every byte boundary decode the same", "[network]") {
  const std::vector<Frame> frames = every_kind();
  const std::string stream = stream_of(frames);

  SECTION("one split anywhere") {
    for (std::size_t split = 0; split <= stream.size(); ++split) {
      FrameReader reader;
      std::size_t index = 0;
      reader.feed(std::string_view(stream).substr(0, split));
      expect_frames(reader, frames, index);
      reader.feed(std::string_view(stream).substr(split));
      expect_frames(reader, frames, index);
      CHECK(index == frames.size());
      CHECK(reader.buffered() == 0);
    }
  }
  SECTION("one byte at a time, through prepare and commit") {
    FrameReader reader;
    std::size_t index = 0;
    for (char byte : stream) {
      std::span<char> room = reader.prepare(1);
      REQUIRE(room.size() >= 1);
      room[0] = byte;
      reader.commit(1);
      expect_frames(reader, frames, index);
    }
    CHECK(index == frames.size());
    CHECK(reader.frames_read() == frames.size());
  }
}

TEST_CASE("several frames in one read all come out in order", "[network]") {
  const std::vector<Frame> frames = every_kind();
  FrameReader reader;
  reader.feed(stream_of(frames));
  std::size_t index = 0;
  expect_frames(reader, frames, index);
  CHECK(index == frames.size());
}

TEST_CASE("a length above the maximum is a framing error that sticks", "[network]") {
  SECTION("all ones") {
    const FrameError e = read_error(std::string("\xff\xff\xff\xff\x0d", 5));
    CHECK(e.kind == FrameErrorKind::Framing);
    CHECK(e.fatal());
    CHECK(e.frame_no == 1);
    CHECK(e.message == "frame length 4294967295 exceeds the maximum 16777216");
    CHECK(fmt::format("{}", e) == "frame 1: frame length 4294967295 exceeds the maximum 16777216");
  }
  SECTION("one above a configured maximum, after a good frame") {
    FrameReader reader(100);
    reader.feed(bytes_of(Ping{1}));
    reader.feed(with_length(std::string(101, '\x0d')));
    auto first = reader.next();
    REQUIRE(first.ok());
    REQUIRE(first.value().has_value());
    auto second = reader.next();
    REQUIRE_FALSE(second.ok());
    CHECK(second.error().frame_no == 2);
    CHECK(second.error().message == "frame length 101 exceeds the maximum 100");
    reader.feed(bytes_of(Ping{2}));  // nothing after a framing error is trusted
    auto third = reader.next();
    REQUIRE_FALSE(third.ok());
    CHECK(third.error().kind == FrameErrorKind::Framing);
  }
  SECTION("exactly the maximum is accepted") {
    FrameReader reader(13);
    reader.feed(with_length(std::string("\x0d\x01\x00\x00\x00\x00\x00\x00\x00", 9) + std::string(4, 'x')));
    auto r = reader.next();
    REQUIRE_FALSE(r.ok());  // a Ping with 4 extra bytes: bad, but not a framing error
    CHECK(r.error().kind == FrameErrorKind::BadFrame);
  }
  SECTION("the error comes as soon as the length is read, before the body arrives") {
    FrameReader reader;
    reader.feed(std::string("\x00\x00\x00\x7f", 4));
    auto r = reader.next();
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "frame length 2130706432 exceeds the maximum 16777216");
  }
}

TEST_CASE("a zero length is a framing error", "[network]") {
  const FrameError e = read_error(std::string("\x00\x00\x00\x00", 4));
  CHECK(e.kind == FrameErrorKind::Framing);
  CHECK(e.message == "frame length 0 (a body holds at least its kind byte)");
}

TEST_CASE("a body cut short inside its fields is a bad frame and the next frame still decodes", "[network]") {
  for (const Frame& frame : every_kind()) {
    const std::string whole = bytes_of(frame);
    const std::string_view body = std::string_view(whole).substr(4);
    std::size_t cut_below = body.size();
    if (const auto* m = std::get_if<MessageFrame>(&frame)) cut_below -= m->payload.size();  // payload = the rest
    if (std::holds_alternative<Hello>(frame)) cut_below = body.size();
    for (std::size_t cut = 1; cut < cut_below; ++cut) {
      FrameReader reader;
      reader.feed(with_length(body.substr(0, cut)));
      reader.feed(bytes_of(Ping{77}));
      auto bad = reader.next();
      INFO(kind_name(static_cast<std::uint8_t>(kind_of(frame))) << " cut to " << cut << " of " << body.size());
      REQUIRE_FALSE(bad.ok());
      CHECK(bad.error().kind == FrameErrorKind::BadFrame);
      CHECK(bad.error().frame_kind == static_cast<std::uint8_t>(kind_of(frame)));
      CHECK(bad.error().frame_no == 1);
      CHECK_FALSE(bad.error().fatal());
      auto good = reader.next();
      REQUIRE(good.ok());
      REQUIRE(good.value().has_value());
      CHECK(*good.value() == Frame{Ping{77}});
    }
  }
}

TEST_CASE("bad frame messages name the frame and what was wrong", "[network]") {
  SECTION("a truncated field") {
    const FrameError e = read_error(with_length(std::string("\x0c\x01\x00\x00\x00\x02", 6)));
    CHECK(e.message == "Credit frame truncated: field `delta` needs 4 bytes, 1 left");
  }
  SECTION("bytes after the last field") {
    const FrameError e = read_error(with_length(bytes_of(Pong{3}).substr(4) + "zz"));
    CHECK(e.message == "Pong frame has 2 unexpected bytes after its last field");
  }
  SECTION("an unknown kind") {
    const FrameError e = read_error(with_length("\x63payload"));
    CHECK(e.kind == FrameErrorKind::BadFrame);
    CHECK(e.frame_kind == 99);
    CHECK(e.message == "unknown frame kind 99");
  }
  SECTION("a Hello from something that is not an elfin node") {
    std::string body = bytes_of(sample_hello()).substr(4);
    body[1] = 'X';
    const FrameError e = read_error(with_length(body));
    CHECK(e.message ==
          "Hello frame has magic 0x54454e4e49464c58 instead of 0x54454e4e49464c45: "
          "the peer is not an elfin node");
  }
  SECTION("an Auth mac of the wrong size") {
    const FrameError e = read_error(with_length(std::string("\x02\x05", 2) + "abcde"));
    CHECK(e.message == "Auth frame has a mac of 5 bytes; it must be 0 or 32");
  }
  SECTION("request_all without request") {
    std::string body = bytes_of(sample_message(false)).substr(4);
    body[1] = '\x02';
    const FrameError e = read_error(with_length(body));
    CHECK(e.message == "Message frame has the request_all flag without the request flag");
  }
  SECTION("unknown Message flags") {
    std::string body = bytes_of(sample_message(false)).substr(4);
    body[1] = '\x84';
    const FrameError e = read_error(with_length(body));
    CHECK(e.message == "Message frame has unknown flags 0x80");
  }
  SECTION("an unknown response status") {
    const FrameError e = read_error(
        with_length(bytes_of(ResponseFrame{9, 1, {{ResponseStatus::Failed, {}}}}).substr(4).replace(19, 1, "\x07")));
    CHECK(e.message == "Response frame has an item with unknown status 7");
    CHECK(e.request_id == std::optional<std::uint64_t>(9));
  }
}

TEST_CASE("a bad Message frame tells how to answer its sender", "[network]") {
  const MessageFrame m = sample_message(true);
  const std::string body = bytes_of(m).substr(4);
  const std::size_t protocol_at = 1 + 1 + 4 + 8 + 8 + 1 + 8 + 8;  // the protocol's length byte

  SECTION("cut inside the protocol: request id known") {
    const FrameError e = read_error(with_length(body.substr(0, protocol_at + 3)));
    CHECK(e.request);
    CHECK(e.request_all);
    CHECK(e.request_id == std::optional<std::uint64_t>(0x99));
    CHECK(e.flow_id == std::optional<std::uint32_t>(0xAABBCCDD));
    CHECK(e.message == "Message frame truncated: field `protocol` needs 7 bytes, 2 left");
  }
  SECTION("cut before the request id: the flags say it was a request, the id is unknown") {
    const FrameError e = read_error(with_length(body.substr(0, protocol_at - 4)));
    CHECK(e.request);
    CHECK_FALSE(e.request_id.has_value());
    CHECK(e.flow_id.has_value());
  }
  SECTION("cut after the flags: no flow yet") {
    const FrameError e = read_error(with_length(body.substr(0, 3)));
    CHECK(e.request);
    CHECK_FALSE(e.flow_id.has_value());
  }
}

TEST_CASE("a Hello may carry fields of a later version after the node name", "[network]") {
  Hello h = sample_hello();
  h.version = 2;
  FrameReader reader;
  reader.feed(with_length(bytes_of(h).substr(4) + "future fields"));
  auto r = reader.next();
  REQUIRE(r.ok());
  REQUIRE(r.value().has_value());
  CHECK(std::get<Hello>(*r.value()) == h);
}

TEST_CASE("encode_message writes the payload in place, like encode", "[network]") {
  const MessageFrame m = sample_message(true);
  std::string fast = "prefix";
  encode_message(m, fast, [&](std::string& out) { out.append(m.payload); });
  CHECK(fast == "prefix" + bytes_of(m));

  SECTION("a throwing payload writer leaves the buffer as it was") {
    std::string out = "kept";
    CHECK_THROWS_AS(encode_message(m, out,
                                   [](std::string& o) {
                                     o.append("partial");
                                     throw std::runtime_error("cannot pack");
                                   }),
                    std::runtime_error);
    CHECK(out == "kept");
  }
}

TEST_CASE("encoding refuses names too long for the wire and cuts long reasons", "[network]") {
  std::string out = "kept";
  MessageFrame m = sample_message(false);
  const std::string long_name(256, 'n');
  m.name = long_name;
  CHECK_THROWS_AS(encode(m, out), std::length_error);
  CHECK(out == "kept");
  Hello h = sample_hello();
  h.node_name = long_name;
  CHECK_THROWS_AS(encode(h, out), std::length_error);
  CHECK(out == "kept");

  out.clear();
  encode(Bye{std::string(70000, 'r')}, out);
  FrameReader reader;
  reader.feed(out);
  auto r = reader.next();
  REQUIRE(r.ok());
  REQUIRE(r.value().has_value());
  CHECK(std::get<Bye>(*r.value()).reason.size() == 65535);
}

TEST_CASE("the reader compacts its buffer and shrinks back after a large frame", "[network]") {
  FrameReader reader;
  const std::size_t initial = reader.capacity();
  const std::string small = bytes_of(sample_message(false));

  SECTION("a long stream of small frames never grows the buffer") {
    std::size_t read = 0;
    for (int i = 0; i < 20000; ++i) {
      // Chunks that straddle frame boundaries, so partial frames stay behind.
      reader.feed(std::string_view(small).substr(0, 10));
      auto r = reader.next();
      REQUIRE(r.ok());
      if (r.value()) ++read;
      reader.feed(std::string_view(small).substr(10));
      for (auto more = reader.next(); more.ok() && more.value(); more = reader.next()) ++read;
    }
    CHECK(read == 20000);
    CHECK(reader.capacity() == initial);
  }
  SECTION("a frame larger than the buffer grows it, and it shrinks afterwards") {
    MessageFrame big = sample_message(false);
    const std::string payload(1 << 20, 'p');
    big.payload = payload;
    const std::string bytes = bytes_of(big);
    for (std::size_t at = 0; at < bytes.size(); at += 4096) {
      std::span<char> room = reader.prepare(4096);
      const std::size_t n = std::min<std::size_t>(4096, bytes.size() - at);
      std::memcpy(room.data(), bytes.data() + at, n);
      reader.commit(n);
    }
    CHECK(reader.capacity() > bytes.size() - 1);
    auto r = reader.next();
    REQUIRE(r.ok());
    REQUIRE(r.value().has_value());
    CHECK(std::get<MessageFrame>(*r.value()).payload == payload);
    std::ignore = reader.prepare(4096);
    CHECK(reader.capacity() == initial);
  }
  SECTION("missing() says how much of the head frame is still to come") {
    reader.feed(std::string_view(small).substr(0, 3));
    CHECK(reader.missing() == 0);  // the length is not known yet
    reader.feed(std::string_view(small).substr(3, 7));
    CHECK(reader.missing() == small.size() - 10);
  }
}

#ifdef ELFIN_TEST_COUNTS_ALLOCATIONS  // see tests/unit/CMakeLists.txt
TEST_CASE("decoding Message, Credit, Ping and Pong frames allocates nothing", "[network]") {
  std::string stream;
  for (int i = 0; i < 50; ++i) {
    encode(sample_message(i % 2 == 0), stream);
    encode(Credit{1, 2}, stream);
    encode(Ping{3}, stream);
    encode(Pong{4}, stream);
  }
  FrameReader reader;
  std::span<char> room = reader.prepare(stream.size());
  std::memcpy(room.data(), stream.data(), stream.size());

  std::size_t frames = 0;
  const std::uint64_t before = elfin::test::allocations();
  reader.commit(stream.size());
  for (auto r = reader.next(); r.ok() && r.value(); r = reader.next()) ++frames;
  const std::uint64_t allocated = elfin::test::allocations() - before;
  CHECK(frames == 200);
  CHECK(allocated == 0);

  // The counter itself works: decoding a Welcome allocates its vector and names.
  reader.feed(bytes_of(Welcome{{{1, std::string(40, 'w')}}}));
  const std::uint64_t before_welcome = elfin::test::allocations();
  auto welcome = reader.next();
  CHECK(elfin::test::allocations() > before_welcome);
  CHECK(welcome.ok());
}
#endif
