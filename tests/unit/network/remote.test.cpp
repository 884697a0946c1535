// Remote groups between systems in one process, over real loopback TCP: requests and responses,
// sends to addresses on the other node, flow control, a lost node and its return, refusals.
// (Separate processes, kill -9 and `elfin run` are in tests/integration.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/write.hpp>
#include <elfin/elfin.hpp>

#include <elfin/network/frame.hpp>
#include <elfin/network/handshake.hpp>
#include <elfin/network/network.hpp>
#include <elfin/testing/proxy.hpp>

#include "network_info.hpp"
#include "network_test_config.hpp"

namespace {

using namespace std::chrono_literals;
using elfin::network::NetworkInfo;
using elfin::network::test::has_peer;
using elfin::network::test::info;
using elfin::network::test::wait_info;

struct Add {
  std::string name;
  std::uint64_t by = 1;
  ELFIN_REQUEST(remote_test, Add, std::uint64_t, name, by);
};
struct Get {
  std::string name;
  ELFIN_REQUEST(remote_test, Get, std::uint64_t, name);
};
struct Increment {
  std::string name;
  std::uint64_t seq = 0;
  ELFIN_MESSAGE(remote_test, Increment, name, seq);
};
struct Echo {
  std::string text;
  ELFIN_MESSAGE(remote_test, Echo, text);
};
struct Echoed {
  std::string text;
  std::uint16_t node = 0;
  ELFIN_MESSAGE(remote_test, Echoed, text, node);
};
/// A domain error as a typed response: Err for a division by zero.
struct Divide {
  std::string name;
  std::int64_t by = 1;
  ELFIN_REQUEST(remote_test, Divide, (elfin::Result<std::int64_t, std::string>), name, by);
};
/// Its handler throws: the requester on the other node learns why.
struct Explode {
  std::string name;
  std::string why;
  ELFIN_REQUEST(remote_test, Explode, std::uint64_t, name, why);
};
/// Stops the counter named `name` from taking messages while `g_gate_closed` is set (the test
/// runs both nodes in this process, so a flag can reach the receiving node).
struct Hold {
  std::string name;
  ELFIN_MESSAGE(remote_test, Hold, name);
};
std::atomic<bool> g_gate_closed{false};

elfin::Task<> counter(elfin::Context<elfin::NoConfig, std::string> ctx) {
  std::uint64_t value = 0;
  std::uint64_t next_seq = 0;
  const std::uint16_t node = ctx.addr().node_no();
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* add = envelope->get<Add>()) {
      value += add->by;
      auto token = envelope->take_token<Add>();
      ctx.respond(std::move(token), value);
    } else if (envelope->is<Get>()) {
      auto token = envelope->take_token<Get>();
      ctx.respond(std::move(token), value);
    } else if (const auto* inc = envelope->get<Increment>()) {
      // Per-sender order holds across the network: a gap or a swap fails the counter.
      if (inc->seq != next_seq) throw std::runtime_error("Increment out of order");
      ++next_seq;
      ++value;
    } else if (const auto* echo = envelope->get<Echo>()) {
      Echoed reply{echo->text, node};
      std::ignore = co_await ctx.send_to(envelope->sender(), reply);
    } else if (const auto* divide = envelope->get<Divide>()) {
      auto token = envelope->take_token<Divide>();
      if (divide->by == 0) {
        ctx.respond(std::move(token), elfin::Err{std::string("division by zero")});
      } else {
        ctx.respond(std::move(token), 100 / divide->by);
      }
    } else if (const auto* explode = envelope->get<Explode>()) {
      // NOLINTNEXTLINE(clang-analyzer-deadcode.DeadStores): held only to be dropped by the unwinding
      auto token = envelope->take_token<Explode>();
      throw std::runtime_error(explode->why);
    } else if (envelope->is<Hold>()) {
      while (g_gate_closed.load()) co_await ctx.yield_now();  // the mailbox fills meanwhile
    }
  }
}

elfin::Blueprint counters() {
  return elfin::ActorGroup()
      .router(elfin::MapRouter<std::string>{[](const elfin::Envelope& e) -> elfin::Outcome<std::string> {
        if (const auto* m = e.get<Add>()) return elfin::Outcome<std::string>::Unicast(m->name);
        if (const auto* m = e.get<Get>()) return elfin::Outcome<std::string>::Unicast(m->name);
        if (const auto* m = e.get<Increment>()) return elfin::Outcome<std::string>::Unicast(m->name);
        if (const auto* m = e.get<Hold>()) return elfin::Outcome<std::string>::Unicast(m->name);
        if (const auto* m = e.get<Divide>()) return elfin::Outcome<std::string>::Unicast(m->name);
        if (const auto* m = e.get<Explode>()) return elfin::Outcome<std::string>::Unicast(m->name);
        if (e.is<Echo>()) return elfin::Outcome<std::string>::Unicast("echo");
        return elfin::Outcome<std::string>::Default();
      }})
      .exec(counter);
}

using elfin::network::test::network_config;

/// A server node: system.network + counters, driven through a proxy whose subject is `counters`.
elfin::testing::Proxy server(std::uint16_t node, std::string_view listen = "127.0.0.1:0",
                             std::string_view secret = "s3cret") {
  elfin::Topology topology;
  topology.local("system.network").mount(elfin::network::blueprint());
  topology.local("counters").mount(counters());
  elfin::StartOptions start;
  start.node_no = node;
  start.config_toml = network_config(listen, {}, secret);
  elfin::testing::ProxyOptions options;
  options.node_no = node;
  return elfin::testing::proxy(std::move(topology), "counters", std::move(start), options);
}

/// A client node: system.network + `counters` as a remote group on `nodes`.
elfin::testing::Proxy client(std::uint16_t node, std::vector<std::string> peers, std::vector<std::uint16_t> nodes,
                             elfin::network::Routing routing = elfin::network::Routing::Unicast,
                             std::string_view secret = "s3cret") {
  elfin::Topology topology;
  topology.local("system.network").mount(elfin::network::blueprint());
  elfin::network::RemoteGroupOptions remote;
  remote.nodes = std::move(nodes);
  remote.routing = routing;
  topology.local("counters").mount(elfin::network::remote_group(std::move(remote)));
  elfin::StartOptions start;
  start.node_no = node;
  start.config_toml = network_config("127.0.0.1:0", peers, secret);
  elfin::testing::ProxyOptions options;
  options.node_no = node;
  return elfin::testing::proxy(std::move(topology), "counters", std::move(start), options);
}

std::string listen_address(elfin::testing::Proxy& proxy) {
  auto i = info(proxy);
  if (i.listening.empty()) throw std::runtime_error("the node listens nowhere");
  return i.listening.front();
}

}  // namespace

TEST_CASE("requests, messages and replies cross to a remote group and back", "[network][remote]") {
  auto two = server(2);
  auto one = client(1, {listen_address(two)}, {2});
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2); }));

  CHECK(one.request(Add{"hits", 5}) == 5);
  CHECK(one.request(Add{"hits", 2}) == 7);
  for (std::uint64_t seq = 0; seq < 100; ++seq) one.send(Increment{"hits", seq});
  CHECK(one.request(Get{"hits"}) == 107);  // FIFO per sender: the Get comes after every Increment
  CHECK(two.request(Get{"hits"}) == 107);  // the same counter, asked locally on node 2

  // A reply by address: node 2's actor sends to envelope.sender(), an address on node 1.
  one.send(Echo{"marco"});
  auto reply = one.recv_as<Echoed>();
  CHECK(reply.text == "marco");
  CHECK(reply.node == 2);

  auto peers = info(one).peers;
  REQUIRE(peers.size() == 1);
  CHECK(peers[0].node_no == 2);
  CHECK(std::find(peers[0].groups.begin(), peers[0].groups.end(), "counters") != peers[0].groups.end());
}

TEST_CASE("typed error responses and a handler's failure reach a requester on another node", "[network][remote]") {
  auto two = server(2);
  auto one = client(1, {listen_address(two)}, {2});
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2); }));

  using Quotient = elfin::Result<std::int64_t, std::string>;
  CHECK(one.request(Divide{"d", 4}) == Quotient{25});
  CHECK(one.request(Divide{"d", 0}) == Quotient{elfin::Err{std::string("division by zero")}});

  auto exploded = one.request_fallible(Explode{"e", "kaboom"});
  REQUIRE_FALSE(exploded.ok());
  CHECK(exploded.error() == elfin::RequestError::Failed);
  CHECK(exploded.error().reason() == "the recipient failed while handling it: kaboom");
}

TEST_CASE("a broadcast remote group reaches every node and .all() gets every node's answer", "[network][remote]") {
  auto two = server(2);
  auto three = server(3);
  auto one = client(1, {listen_address(two), listen_address(three)}, {2, 3}, elfin::network::Routing::Broadcast);
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2) && has_peer(i, 3); }));

  auto answers = one.request_all(Add{"n", 1});
  REQUIRE(answers.size() == 2);
  for (const auto& a : answers) {
    REQUIRE(a.ok());
    CHECK(a.value() == 1);
  }
  CHECK(two.request(Get{"n"}) == 1);
  CHECK(three.request(Get{"n"}) == 1);

  // Unicast picks the first connected node in `nodes` order.
  auto uni = client(4, {listen_address(two), listen_address(three)}, {3, 2});
  REQUIRE(wait_info(uni, [](const NetworkInfo& i) { return has_peer(i, 2) && has_peer(i, 3); }));
  CHECK(uni.request(Add{"u", 1}) == 1);
  CHECK(three.request(Get{"u"}) == 1);
  CHECK(two.request(Get{"u"}) == 0);
}

TEST_CASE("a slow receiver slows the sender: try_send reports Full and nothing is lost", "[network][remote]") {
  auto two = server(2);
  auto one = client(1, {listen_address(two)}, {2});
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2); }));

  g_gate_closed = true;
  one.send(Hold{"slow"});  // the counter stops taking messages
  std::uint64_t accepted = 0;
  // try_send reports Full whenever the forwarder's mailbox is full, also for a moment while the
  // forwarder catches up; the sender is stalled once Full has lasted a whole second.
  constexpr std::uint64_t kLimit = 100'000;
  auto full_since = std::chrono::steady_clock::time_point{};
  while (accepted < kLimit) {
    auto sent = one.try_send(Increment{"slow", accepted});
    if (sent) {
      ++accepted;
      full_since = {};
      continue;
    }
    REQUIRE(sent.error() == elfin::SendErrorKind::Full);
    const auto now = std::chrono::steady_clock::now();
    if (full_since == std::chrono::steady_clock::time_point{}) full_since = now;
    if (now - full_since > 1s) break;
    std::this_thread::sleep_for(1ms);
  }
  // In flight at most: the window (receiving mailbox + the flow's queue on node 2), the
  // forwarder's mailbox and the message in the forwarder's hand.
  CHECK(accepted >= elfin::network::kFlowWindow);
  CHECK(accepted <= elfin::network::kFlowWindow + elfin::network::kForwarderMailboxCapacity + 1);

  g_gate_closed = false;
  // Everything accepted arrives (in order: the counter checks) once the receiver moves again.
  CHECK(one.request(Get{"slow"}) == accepted);
}

TEST_CASE("while a node is gone requests fail at once; when it is back traffic resumes", "[network][remote]") {
  std::optional<elfin::testing::Proxy> two = server(2);
  const std::string address = listen_address(*two);
  auto one = client(1, {address}, {2});
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2); }));
  CHECK(one.request(Add{"x", 1}) == 1);

  // Node 2 goes away. (A request in flight at that moment fails too: the kill -9 test in
  // tests/integration shows it.)
  two.reset();
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return !has_peer(i, 2); }));
  auto refused = one.request_fallible(Add{"x", 1});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error() == elfin::RequestError::Failed);
  CHECK(one.try_send(Increment{"x", 0}).error() == elfin::SendErrorKind::NoRoute);

  // Node 2 restarts on the same address (a new process would have a new launch id too).
  two = server(2, address);
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2); }));
  CHECK(one.request(Add{"x", 10}) == 10);  // a fresh counter on the new node
}

TEST_CASE("a node with the wrong secret is refused, and both sides say so", "[network][remote]") {
  auto two = server(2, "127.0.0.1:0", "right");
  auto one = client(1, {listen_address(two)}, {2}, elfin::network::Routing::Unicast, "wrong");
  auto said = [](const std::string& what) {
    return [what](const NetworkInfo& i) {
      for (const auto& r : i.refusals) {
        if (r.find(what) != std::string::npos) return true;
      }
      return false;
    };
  };
  CHECK(wait_info(two, said("wrong secret")));
  CHECK(wait_info(one, said("wrong secret")));
  CHECK(info(one).peers.empty());
  CHECK(info(two).peers.empty());
  CHECK(one.request_fallible(Add{"z", 1}).error() == elfin::RequestError::Failed);
}

TEST_CASE("a second node with a number already connected is refused", "[network][remote]") {
  auto two = server(2);
  auto impostor = server(2);
  auto one = client(1, {listen_address(two), listen_address(impostor)}, {2});
  // Refused, and the connection that stays has finished its Welcome.
  REQUIRE(wait_info(one, [](const NetworkInfo& i) {
    for (const auto& r : i.refusals) {
      if (r.find("duplicate node") != std::string::npos) return has_peer(i, 2);
    }
    return false;
  }));
  const auto peers = info(one).peers;
  REQUIRE(peers.size() == 1);
  CHECK(peers[0].node_no == 2);
  CHECK(one.request(Add{"d", 1}) == 1);
}

namespace {

/// A hand-driven peer over a blocking socket: it speaks the handshake itself, so a test can then
/// write anything to the node.
class RawPeer {
 public:
  RawPeer(const std::string& address, std::uint16_t node_no, std::optional<std::string> secret)
      : socket_(io_), handshake_(elfin::network::NodeIdentity{node_no, 77, "raw", 1 << 20}, std::move(secret)) {
    const auto colon = address.rfind(':');
    asio::ip::tcp::endpoint endpoint(asio::ip::make_address(address.substr(0, colon)),
                                     static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
    socket_.connect(endpoint);
    write(handshake_.start());
    for (;;) {
      auto frame = next();
      if (!frame) throw std::runtime_error("the node closed during the handshake");
      auto step = handshake_.on_frame(*frame);
      write(step.send);
      if (std::holds_alternative<elfin::network::Handshake::Established>(step.state)) break;
      if (std::holds_alternative<elfin::network::Handshake::Refused>(step.state)) throw std::runtime_error("refused");
    }
    auto welcome = next();  // the node's groups
    if (!welcome || !std::holds_alternative<elfin::network::Welcome>(*welcome)) throw std::runtime_error("no Welcome");
    for (const auto& g : std::get<elfin::network::Welcome>(*welcome).groups) groups_[g.name] = g.group_no;
    std::string bytes;
    elfin::network::encode(elfin::network::Welcome{}, bytes);
    write(bytes);
  }

  void write(std::string_view bytes) { asio::write(socket_, asio::buffer(bytes.data(), bytes.size())); }
  std::uint8_t group(const std::string& name) { return groups_.at(name); }

  /// The next frame other than Ping/Pong/Credit, or nullopt once the node closed the connection.
  std::optional<elfin::network::Frame> next() {
    for (;;) {
      auto got = reader_.next();
      if (!got) throw std::runtime_error(got.error().message);
      if (auto& frame = *got) {
        if (std::holds_alternative<elfin::network::Ping>(*frame) ||
            std::holds_alternative<elfin::network::Credit>(*frame)) {
          continue;
        }
        return frame;
      }
      auto buffer = reader_.prepare(4096);
      std::error_code ec;
      const auto n = socket_.read_some(asio::buffer(buffer.data(), buffer.size()), ec);
      if (ec) return std::nullopt;
      reader_.commit(n);
    }
  }

 private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  elfin::network::Handshake handshake_;
  elfin::network::FrameReader reader_;
  std::map<std::string, std::uint8_t> groups_;
};

std::string message_frame(std::uint8_t group_no, std::string_view protocol, std::string_view name,
                          std::string_view payload, std::uint64_t request_id) {
  elfin::network::MessageFrame m;
  m.request = request_id != 0;
  m.request_id = request_id;
  m.flow_id = 1;
  m.group_no = group_no;
  m.trace_id = 42;
  m.protocol = protocol;
  m.name = name;
  m.payload = payload;
  std::string bytes;
  elfin::network::encode(m, bytes);
  return bytes;
}

std::string encoded(const auto& message) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, message);
  return {buffer.data(), buffer.size()};
}

}  // namespace

TEST_CASE("undecodable frames are skipped and answered Failed; bad framing closes that connection only",
          "[network][remote]") {
  auto two = server(2);
  const std::string address = listen_address(two);
  RawPeer peer(address, 9, "s3cret");
  const auto counters_no = peer.group("counters");

  // A request for a message this node does not know: skipped, answered Failed.
  peer.write(message_frame(counters_no, "remote_test", "NoSuchMessage", encoded(std::map<std::string, int>{}), 5));
  auto answer = peer.next();
  REQUIRE(answer);
  auto* response = std::get_if<elfin::network::ResponseFrame>(&*answer);
  REQUIRE(response != nullptr);
  CHECK(response->request_id == 5);
  REQUIRE(response->items.size() == 1);
  CHECK(response->items[0].status == elfin::network::ResponseStatus::Failed);

  // A known request whose payload is not its shape (a string where the map should be): Failed.
  peer.write(message_frame(counters_no, "remote_test", "Add", encoded(std::string("garbage")), 6));
  answer = peer.next();
  REQUIRE(answer);
  response = std::get_if<elfin::network::ResponseFrame>(&*answer);
  REQUIRE(response != nullptr);
  CHECK(response->request_id == 6);
  CHECK(response->items.at(0).status == elfin::network::ResponseStatus::Failed);

  // A well-formed request on the same connection still works after both.
  peer.write(message_frame(counters_no, "remote_test", "Add", encoded(Add{"raw", 3}), 7));
  answer = peer.next();
  REQUIRE(answer);
  response = std::get_if<elfin::network::ResponseFrame>(&*answer);
  REQUIRE(response != nullptr);
  CHECK(response->request_id == 7);
  REQUIRE(response->items.at(0).status == elfin::network::ResponseStatus::Ok);
  CHECK(
      msgpack::unpack(response->items[0].payload.data(), response->items[0].payload.size()).get().as<std::uint64_t>() ==
      3);

  // An oversized length: the node closes this connection...
  const std::string oversized("\xff\xff\xff\x7f\x0a", 5);
  peer.write(oversized);
  CHECK_FALSE(peer.next().has_value());

  // ...and keeps serving everyone else, including a client over the network.
  auto one = client(1, {address}, {2});
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2); }));
  CHECK(one.request(Add{"raw", 1}) == 4);

  // Garbage instead of a handshake: refused, closed; the node is unmoved.
  {
    asio::io_context io;
    asio::ip::tcp::socket raw(io);
    const auto colon = address.rfind(':');
    raw.connect({asio::ip::make_address(address.substr(0, colon)),
                 static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)))});
    const std::string garbage = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    asio::write(raw, asio::buffer(garbage));
    std::array<char, 256> sink{};
    std::error_code ec;
    while (!ec) std::ignore = raw.read_some(asio::buffer(sink), ec);  // until the node closes
    CHECK((ec == asio::error::eof || ec == asio::error::connection_reset));
  }
  CHECK(one.request(Add{"raw", 1}) == 5);
}

TEST_CASE("a pick may choose this very node: the message goes to the local group named remote_name",
          "[network][remote]") {
  // Both nodes run `counters.local`; `counters` fronts them, local names staying on node 1.
  auto node = [](std::uint16_t no, std::vector<std::string> peers) {
    elfin::Topology topology;
    topology.local("system.network").mount(elfin::network::blueprint());
    topology.local("counters.local").mount(counters());
    elfin::network::RemoteGroupOptions front;
    front.nodes = {1, 2};
    front.remote_name = "counters.local";
    front.pick = [no](const elfin::Envelope& e,
                      const std::vector<std::uint16_t>& connected) -> std::optional<std::uint16_t> {
      const auto* add = e.get<Add>();
      if (add == nullptr) return std::nullopt;
      const std::uint16_t want = add->name.starts_with("one:") ? 1 : 2;
      if (want == no) return want;  // this node: never in `connected`, always reachable
      if (std::find(connected.begin(), connected.end(), want) == connected.end()) return std::nullopt;
      return want;
    };
    topology.local("counters").mount(elfin::network::remote_group(std::move(front)));
    elfin::StartOptions start;
    start.node_no = no;
    start.config_toml = network_config("127.0.0.1:0", peers);
    elfin::testing::ProxyOptions options;
    options.node_no = no;
    return elfin::testing::proxy(std::move(topology), "counters", std::move(start), options);
  };
  auto two = node(2, {});
  auto one = node(1, {listen_address(two)});
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2); }));

  CHECK(one.request(Add{"one:a", 3}) == 3);  // stays on node 1
  CHECK(one.request(Add{"two:a", 4}) == 4);  // crosses to node 2
  CHECK(two.request(Add{"one:a", 1}) == 4);  // from node 2 to node 1's counter
  CHECK(one.request_fallible(Get{"one:a"}, one.system().group_addr("counters.local")).value() == 4);
  CHECK(two.request_fallible(Get{"two:a"}, two.system().group_addr("counters.local")).value() == 4);
  CHECK(two.request_fallible(Get{"one:a"}, two.system().group_addr("counters.local")).value() == 0);
}
