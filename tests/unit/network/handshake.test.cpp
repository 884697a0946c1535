#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include <elfin/network/handshake.hpp>

using namespace elfin::network;

namespace {

NodeIdentity identity(std::uint16_t node_no, std::string name) {
  return NodeIdentity{node_no, std::uint64_t{1000} + node_no, std::move(name), kDefaultMaxFrameSize};
}

// One end of a connection: the handshake, the reader for what the peer sent, and what happened.
struct Side {
  Side(NodeIdentity self, std::optional<std::string> secret, std::vector<std::string> also_accepted = {})
      : handshake(std::move(self), std::move(secret), std::move(also_accepted)) {}
  Handshake handshake;
  FrameReader reader;
  Handshake::State state = Handshake::InProgress{};
  std::vector<std::string> sent_frames;  // everything this side put on the wire, for secret checks

  [[nodiscard]] bool done() const { return !std::holds_alternative<Handshake::InProgress>(state); }

  // Reads the peer's bytes and returns what to send back. A finished side reads nothing more (the
  // runtime closes the connection or hands it over to the message loop).
  std::string deliver(std::string_view bytes) {
    std::string out;
    reader.feed(bytes);
    while (!done()) {
      auto r = reader.next();
      if (!r.ok()) {
        take(handshake.on_error(r.error()), out);
        continue;
      }
      if (!r.value()) break;
      take(handshake.on_frame(*r.value()), out);
    }
    return out;
  }

  void take(Handshake::Step step, std::string& out) {
    out += step.send;
    if (auto* refused = std::get_if<Handshake::Refused>(&step.state)) out += refused->refuse_frame;
    state = std::move(step.state);
  }

  std::string start() {
    std::string hello = handshake.start();
    sent_frames.push_back(hello);
    return hello;
  }
};

// Wires two handshakes together until neither has anything more to say.
void run(Side& a, Side& b) {
  std::string to_b = a.start();
  std::string to_a = b.start();
  while (!to_a.empty() || !to_b.empty()) {
    std::string from_a = a.deliver(std::exchange(to_a, {}));
    std::string from_b = b.deliver(std::exchange(to_b, {}));
    if (!from_a.empty()) a.sent_frames.push_back(from_a);
    if (!from_b.empty()) b.sent_frames.push_back(from_b);
    to_b = std::move(from_a);
    to_a = std::move(from_b);
  }
}

std::string reason_of(const Side& s) {
  const auto* refused = std::get_if<Handshake::Refused>(&s.state);
  return refused != nullptr ? refused->reason : std::string("<not refused>");
}

std::vector<Frame> decode_all(std::string_view bytes) {
  FrameReader reader;
  reader.feed(bytes);
  std::vector<Frame> frames;
  for (auto r = reader.next(); r.ok() && r.value(); r = reader.next()) frames.push_back(*r.value());
  return frames;
}

Frame only_frame(std::string_view bytes) {
  auto frames = decode_all(bytes);
  REQUIRE(frames.size() == 1);
  return frames.front();
}

}  // namespace

TEST_CASE("two nodes without a secret establish a connection", "[network]") {
  Side a(identity(1, "alpha"), std::nullopt);
  Side b(identity(2, "beta"), std::nullopt);
  run(a, b);
  REQUIRE(std::holds_alternative<Handshake::Established>(a.state));
  REQUIRE(std::holds_alternative<Handshake::Established>(b.state));
  const Hello& a_sees = std::get<Handshake::Established>(a.state).peer;
  const Hello& b_sees = std::get<Handshake::Established>(b.state).peer;
  CHECK(a_sees.node_no == 2);
  CHECK(a_sees.node_name == "beta");
  CHECK(a_sees.launch_id == 1002);
  CHECK(b_sees.node_no == 1);
  CHECK(b_sees.node_name == "alpha");
  CHECK(a_sees == b.handshake.own_hello());
  CHECK(a.handshake.own_hello().nonce != b.handshake.own_hello().nonce);
  // Each side sent Hello, then an empty Auth.
  REQUIRE(a.sent_frames.size() == 2);
  CHECK(only_frame(a.sent_frames[1]) == Frame{Auth{}});
}

TEST_CASE("two nodes with the same secret establish a connection", "[network]") {
  Side a(identity(1, "alpha"), "correct horse battery staple");
  Side b(identity(2, "beta"), "correct horse battery staple");
  run(a, b);
  REQUIRE(std::holds_alternative<Handshake::Established>(a.state));
  REQUIRE(std::holds_alternative<Handshake::Established>(b.state));
  REQUIRE(a.sent_frames.size() == 2);
  const Auth a_auth = std::get<Auth>(only_frame(a.sent_frames[1]));
  const Auth b_auth = std::get<Auth>(only_frame(b.sent_frames[1]));
  CHECK(a_auth.mac.size() == kMacSize);
  CHECK(a_auth.mac != b_auth.mac);  // the direction is part of what is signed
}

TEST_CASE("a wrong secret is refused on both sides without revealing it", "[network]") {
  const std::string secret_a = "secret-of-alpha";
  const std::string secret_b = "secret-of-beta";
  Side a(identity(1, "alpha"), secret_a);
  Side b(identity(2, "beta"), secret_b);
  run(a, b);
  CHECK(reason_of(a) == "authentication failed: wrong secret");
  CHECK(reason_of(b) == "authentication failed: wrong secret");
  const auto& refused = std::get<Handshake::Refused>(a.state);
  CHECK(only_frame(refused.refuse_frame) == Frame{Refuse{"authentication failed: wrong secret"}});
  for (const Side* s : {&a, &b}) {
    for (const std::string& bytes : s->sent_frames) {
      CHECK(bytes.find(secret_a) == std::string::npos);
      CHECK(bytes.find(secret_b) == std::string::npos);
    }
  }
}

TEST_CASE("a secret on one side only is refused on both sides", "[network]") {
  SECTION("the first node has the secret") {
    Side a(identity(1, "alpha"), "s3cret");
    Side b(identity(2, "beta"), std::nullopt);
    run(a, b);
    CHECK(reason_of(a) == "peer sent no authentication but this node requires a secret");
    CHECK(reason_of(b) == "peer authenticates but this node has no secret configured");
  }
  SECTION("the second node has the secret") {
    Side a(identity(1, "alpha"), std::nullopt);
    Side b(identity(2, "beta"), "s3cret");
    run(a, b);
    CHECK(reason_of(a) == "peer authenticates but this node has no secret configured");
    CHECK(reason_of(b) == "peer sent no authentication but this node requires a secret");
  }
}

TEST_CASE("a peer speaking another protocol version is refused", "[network]") {
  Handshake a(identity(1, "alpha"), std::nullopt);
  std::ignore = a.start();
  Hello peer;
  peer.version = 1;
  peer.node_no = 2;
  const Handshake::Step step = a.on_frame(peer);
  REQUIRE(std::holds_alternative<Handshake::Refused>(step.state));
  const auto& refused = std::get<Handshake::Refused>(step.state);
  CHECK(refused.reason == "version mismatch: peer speaks 1, this node speaks 2");
  CHECK(only_frame(refused.refuse_frame) == Frame{Refuse{refused.reason}});
  CHECK(step.send.empty());  // no Auth after a refusal
}

TEST_CASE("a peer with this node's own number is refused on both sides", "[network]") {
  Side a(identity(3, "alpha"), "s");
  Side b(identity(3, "beta"), "s");
  run(a, b);
  CHECK(reason_of(a) == "peer has the same node number 3 as this node");
  CHECK(reason_of(b) == "peer has the same node number 3 as this node");
}

TEST_CASE("a mac reflected back to its sender is refused", "[network]") {
  Handshake a(identity(1, "alpha"), "shared");
  Handshake b(identity(2, "beta"), "shared");
  const Frame a_hello = only_frame(a.start());
  const Frame b_hello = only_frame(b.start());
  const Handshake::Step a_step = a.on_frame(b_hello);
  const Frame a_auth = only_frame(a_step.send);
  REQUIRE(std::get<Auth>(a_auth).mac.size() == kMacSize);

  // An attacker in the middle sends A's own proof back to A as if B had sent it.
  const Handshake::Step reflected = a.on_frame(a_auth);
  REQUIRE(std::holds_alternative<Handshake::Refused>(reflected.state));
  CHECK(std::get<Handshake::Refused>(reflected.state).reason == "authentication failed: wrong secret");

  // B's genuine proof would have been accepted by a fresh A in the same position.
  const Handshake::Step b_step = b.on_frame(a_hello);
  CHECK(std::holds_alternative<Handshake::InProgress>(b_step.state));
}

TEST_CASE("a mac recorded in an earlier connection is refused when replayed", "[network]") {
  // A recorded connection between A1 and B (both know the secret).
  Side a1(identity(1, "alpha"), "shared");
  Side b(identity(2, "beta"), "shared");
  run(a1, b);
  REQUIRE(std::holds_alternative<Handshake::Established>(a1.state));
  REQUIRE(b.sent_frames.size() == 2);
  const std::string recorded_hello = b.sent_frames[0];
  const std::string recorded_auth = b.sent_frames[1];

  // An attacker without the secret replays B's Hello and Auth to a new connection of node 1.
  Side a2(identity(1, "alpha"), "shared");
  std::ignore = a2.start();
  const std::string reply = a2.deliver(recorded_hello);
  CHECK_FALSE(reply.empty());  // A2 sent its own Auth
  std::ignore = a2.deliver(recorded_auth);
  CHECK(reason_of(a2) == "authentication failed: wrong secret");
}

TEST_CASE("a Refuse from the peer ends the handshake with its reason", "[network]") {
  Handshake a(identity(1, "alpha"), std::nullopt);
  std::ignore = a.start();
  const Handshake::Step step = a.on_frame(Refuse{"version mismatch: peer speaks 1, this node speaks 2"});
  REQUIRE(std::holds_alternative<Handshake::Refused>(step.state));
  const auto& refused = std::get<Handshake::Refused>(step.state);
  CHECK(refused.reason == "refused by peer: version mismatch: peer speaks 1, this node speaks 2");
  CHECK(refused.refuse_frame.empty());
  CHECK(std::holds_alternative<Handshake::Refused>(a.state()));
}

TEST_CASE("frames out of the handshake's order are refused", "[network]") {
  Handshake a(identity(1, "alpha"), std::nullopt);
  std::ignore = a.start();
  SECTION("anything but Hello first") {
    const Handshake::Step step = a.on_frame(Ping{1});
    CHECK(std::get<Handshake::Refused>(step.state).reason ==
          "unexpected Ping frame during the handshake (expected Hello)");
  }
  SECTION("anything but Auth after Hello") {
    Hello peer;
    peer.node_no = 2;
    REQUIRE(std::holds_alternative<Handshake::InProgress>(a.on_frame(peer).state));
    const Handshake::Step step = a.on_frame(MessageFrame{});
    CHECK(std::get<Handshake::Refused>(step.state).reason ==
          "unexpected Message frame during the handshake (expected Auth)");
  }
  SECTION("a frame the reader could not decode") {
    FrameError error;
    error.frame_no = 1;
    error.message = "Hello frame has magic 0x0 instead of 0x54454e4e49464c45: the peer is not an elfin node";
    const Handshake::Step step = a.on_error(error);
    CHECK(std::get<Handshake::Refused>(step.state).reason ==
          "handshake frame 1: Hello frame has magic 0x0 instead of 0x54454e4e49464c45: the peer is not an elfin node");
  }
  SECTION("anything after the end") {
    std::ignore = a.on_frame(Ping{1});
    const Handshake::Step step = a.on_frame(Hello{});
    CHECK(std::get<Handshake::Refused>(step.state).reason == "the handshake is over");
  }
}

TEST_CASE("a handshake fed before start() sends its Hello first", "[network]") {
  Handshake a(identity(1, "alpha"), std::nullopt);
  Hello peer;
  peer.node_no = 2;
  const Handshake::Step step = a.on_frame(peer);
  const std::vector<Frame> frames = decode_all(step.send);
  REQUIRE(frames.size() == 2);
  CHECK(std::get<Hello>(frames[0]) == a.own_hello());
  CHECK(std::holds_alternative<Auth>(frames[1]));
}

TEST_CASE("during a rotation a node accepts the other secret it is told to", "[network]") {
  // Step 1 of a rotation: every node proves the old secret and also accepts the new one; step 2:
  // nodes prove the new secret and still accept the old one. A node of step 1 and one of step 2 talk.
  Side step1(identity(1, "alpha"), "old", {"new"});
  Side step2(identity(2, "beta"), "new", {"old"});
  run(step1, step2);
  CHECK(std::holds_alternative<Handshake::Established>(step1.state));
  CHECK(std::holds_alternative<Handshake::Established>(step2.state));

  SECTION("a node that no longer accepts the old secret refuses one still proving it") {
    Side done(identity(3, "gamma"), "new");
    Side late(identity(4, "delta"), "old", {"new"});
    run(done, late);
    CHECK(reason_of(done) == "authentication failed: wrong secret");
    CHECK(std::holds_alternative<Handshake::Established>(late.state));  // it accepts "new"
  }
}
