// The connection's write path: requests, responses, credits and pongs written by whichever thread
// queues them when the connection is idle (a forwarder's or a responder's worker, the I/O
// thread), plain messages and large or blocked writes by the I/O thread. What must hold whoever
// writes: frames never interleave or reorder within a flow, large frames and small ones share the
// connection intact, and a connection that breaks under a writer fails what it carried the way
// any lost connection does.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

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

struct Bump {
  std::string name;
  std::uint64_t seq = 0;
  ELFIN_MESSAGE(write_path_test, Bump, name, seq);
};
struct Count {
  std::string name;
  ELFIN_REQUEST(write_path_test, Count, std::uint64_t, name);
};
/// Answered with its text, so a large one crosses both ways.
struct Mirror {
  std::string name;
  std::string text;
  ELFIN_REQUEST(write_path_test, Mirror, std::string, name, text);
};

/// Per name: how many Bumps arrived in order; the first out-of-order one stops the count for good.
elfin::Task<> tally(elfin::Context<elfin::NoConfig, std::string> ctx) {
  std::uint64_t next = 0;
  bool broken = false;
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* bump = envelope->get<Bump>()) {
      if (bump->seq != next) broken = true;
      if (!broken) ++next;
    } else if (envelope->is<Count>()) {
      ctx.respond(envelope->take_token<Count>(), broken ? 0 : next);
    } else if (const auto* mirror = envelope->get<Mirror>()) {
      std::string text = mirror->text;
      ctx.respond(envelope->take_token<Mirror>(), std::move(text));
    }
  }
}

elfin::Blueprint tallies() {
  return elfin::ActorGroup()
      .router(elfin::MapRouter<std::string>{[](const elfin::Envelope& e) -> elfin::Outcome<std::string> {
        if (const auto* m = e.get<Bump>()) return elfin::Outcome<std::string>::Unicast(m->name);
        if (const auto* m = e.get<Count>()) return elfin::Outcome<std::string>::Unicast(m->name);
        if (const auto* m = e.get<Mirror>()) return elfin::Outcome<std::string>::Unicast(m->name);
        return elfin::Outcome<std::string>::Default();
      }})
      .exec(tally);
}

elfin::testing::Proxy server_node(std::uint16_t node, unsigned workers) {
  elfin::Topology topology;
  topology.local("system.network").mount(elfin::network::blueprint());
  topology.local("tallies").mount(tallies());
  elfin::StartOptions start;
  start.node_no = node;
  start.workers = workers;
  start.config_toml = elfin::network::test::network_config("127.0.0.1:0", {});
  elfin::testing::ProxyOptions options;
  options.node_no = node;
  return elfin::testing::proxy(std::move(topology), "tallies", std::move(start), options);
}

/// Node `node` with `remotes` remote groups `t0`, `t1`, ... all for node 2's `tallies`: each has a
/// forwarder of its own, so each is one more writer on the same connection.
elfin::testing::Proxy client_node(std::uint16_t node, const std::string& peer, unsigned remotes, unsigned workers) {
  elfin::Topology topology;
  topology.local("system.network").mount(elfin::network::blueprint());
  for (unsigned i = 0; i < remotes; ++i) {
    elfin::network::RemoteGroupOptions remote;
    remote.nodes = {2};
    remote.remote_name = "tallies";
    topology.local(fmt::format("t{}", i)).mount(elfin::network::remote_group(std::move(remote)));
  }
  elfin::StartOptions start;
  start.node_no = node;
  start.workers = workers;
  start.config_toml = elfin::network::test::network_config(
      "127.0.0.1:0", peer.empty() ? std::vector<std::string>{} : std::vector{peer});
  elfin::testing::ProxyOptions options;
  options.node_no = node;
  return elfin::testing::proxy(std::move(topology), "t0", std::move(start), options);
}

/// A text whose every byte depends on its position and `seed`: a torn or shifted copy differs.
std::string pattern(std::size_t size, unsigned seed) {
  std::string text(size, '\0');
  for (std::size_t i = 0; i < size; ++i)
    text[i] = static_cast<char>((i * 131 + std::size_t{seed} * 7 + (i >> 12)) & 0xff);
  return text;
}

}  // namespace

TEST_CASE("frames stay whole and in order per flow while several workers and the I/O thread write one connection",
          "[network][write_path]") {
  // Four senders, each on its own thread, each through its own forwarder (three remote groups and
  // the direct forwarder of system.network, which carries sends to an address on node 2), racing
  // each other, the responses to their requests and node 2's credits, on one connection each way.
  auto two = server_node(2, 2);
  auto one = client_node(1, info(two).listening.front(), 3, 4);
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2); }));
  const elfin::Addr tallies_on_two = two.subject_addr();

  constexpr std::uint64_t kBumps = 20'000;
  constexpr unsigned kSenders = 4;
  std::vector<elfin::testing::Proxy> senders;
  senders.reserve(kSenders);
  for (unsigned s = 0; s < kSenders; ++s) senders.push_back(one.subproxy());
  std::vector<std::thread> threads;
  threads.reserve(kSenders);
  std::atomic<unsigned> failures{0};
  for (unsigned s = 0; s < kSenders; ++s) {
    threads.emplace_back([&, s] {
      auto& proxy = senders[s];
      const std::string name = fmt::format("n{}", s);
      // Senders 0..2 go through remote groups t0..t2; sender 3 addresses node 2's group directly.
      const elfin::Addr to = s < 3 ? one.system().group_addr(fmt::format("t{}", s)) : tallies_on_two;
      for (std::uint64_t seq = 0; seq < kBumps; ++seq) {
        proxy.send_to(to, Bump{name, seq});
        // A request now and then: its response is written by a worker on node 2 while that
        // node's I/O thread writes credits for the Bumps.
        if (seq % 1000 == 999) {
          auto counted = proxy.request_fallible(Count{name}, to);
          if (!counted || *counted != seq + 1) failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures.load() == 0);
  for (unsigned s = 0; s < kSenders; ++s) {
    CHECK(two.request(Count{fmt::format("n{}", s)}) == kBumps);  // all arrived, in order, none torn
  }
  CHECK(has_peer(info(one), 2));  // never a framing error that closed the connection
}

TEST_CASE("a frame larger than the socket's buffer and small frames from other writers share a connection intact",
          "[network][write_path]") {
  // A 6 MiB request cannot leave in one non-blocking write: the I/O thread finishes it while other
  // forwarders queue small frames behind it; its 6 MiB answer does the same on node 2.
  auto two = server_node(2, 2);
  auto one = client_node(1, info(two).listening.front(), 2, 3);
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2); }));

  auto small = one.subproxy();
  std::atomic<bool> small_done{false};
  constexpr std::uint64_t kBumps = 20'000;
  std::thread smalls([&] {
    const elfin::Addr to = one.system().group_addr("t1");
    for (std::uint64_t seq = 0; seq < kBumps; ++seq) small.send_to(to, Bump{"small", seq});
    small_done = true;
  });
  auto large = one.subproxy();
  large.set_timeout(30s);
  for (unsigned round = 0; round < 3; ++round) {
    const std::string text = pattern(std::size_t{6} << 20, round);
    auto back = large.request_fallible(Mirror{"large", text}, one.system().group_addr("t0"));
    REQUIRE(back.ok());
    CHECK(back.value().size() == text.size());
    CHECK(back.value() == text);
  }
  smalls.join();
  CHECK(small_done.load());
  // Asked along the Bumps' own path (one flow, in order), the count is final when it answers; asked
  // on node 2 directly it could overtake Bumps still in flight.
  auto counted = small.request_fallible(Count{"small"}, one.system().group_addr("t1"));
  REQUIRE(counted.ok());
  CHECK(counted.value() == kBumps);
}

namespace {

/// Node 2 played by hand over a blocking socket: it dials node 1, passes the handshake, offers a
/// `tallies` group, then reads frames, granting credit, until told to break the connection.
class FakeNode {
 public:
  FakeNode(const std::string& address, std::optional<std::string> secret)
      : socket_(io_), handshake_(elfin::network::NodeIdentity{2, 77, "fake", 1 << 24}, std::move(secret)) {
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
    auto welcome = next();
    if (!welcome || !std::holds_alternative<elfin::network::Welcome>(*welcome)) throw std::runtime_error("no Welcome");
    elfin::network::Welcome mine;
    mine.groups.push_back(elfin::network::GroupEntry{1, "tallies"});
    std::string bytes;
    elfin::network::encode(mine, bytes);
    write(bytes);
  }

  /// Reads Message frames, granting credit for them, until `messages` have come; false if the
  /// connection ended first.
  bool read_messages(std::uint64_t messages) {
    std::map<std::uint32_t, std::uint32_t> owed;
    for (std::uint64_t got = 0; got < messages;) {
      auto frame = next();
      if (!frame) return false;
      if (const auto* m = std::get_if<elfin::network::MessageFrame>(&*frame)) {
        ++got;
        if (++owed[m->flow_id] == 64) {
          std::string credit;
          elfin::network::encode(elfin::network::Credit{m->flow_id, 64}, credit);
          write(credit);
          owed[m->flow_id] = 0;
        }
      }
    }
    return true;
  }

  /// Breaks the connection with a reset (no Bye, no orderly close): the node's next write fails.
  void reset() {
    std::error_code ignored;
    socket_.set_option(asio::socket_base::linger(true, 0), ignored);
    socket_.close(ignored);
  }

 private:
  void write(std::string_view bytes) {
    if (!bytes.empty()) asio::write(socket_, asio::buffer(bytes.data(), bytes.size()));
  }
  std::optional<elfin::network::Frame> next() {
    for (;;) {
      auto got = reader_.next();
      if (!got) throw std::runtime_error(got.error().message);
      if (auto& frame = *got) {
        if (std::holds_alternative<elfin::network::Ping>(*frame)) continue;
        return frame;
      }
      auto buffer = reader_.prepare(std::size_t{64} * 1024);
      std::error_code ec;
      const auto n = socket_.read_some(asio::buffer(buffer.data(), buffer.size()), ec);
      if (ec) return std::nullopt;
      reader_.commit(n);
    }
  }

  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  elfin::network::Handshake handshake_;
  elfin::network::FrameReader reader_;
};

}  // namespace

TEST_CASE("a connection reset while workers write to it fails its requests and stops its sends, no one waits",
          "[network][write_path]") {
  auto one = client_node(1, "", 3, 4);
  const std::string address = info(one).listening.front();
  FakeNode two(address, "s3cret");
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return has_peer(i, 2); }));

  // Writers on three forwarders send without pause; requesters wait for answers that never come
  // (the fake node answers nothing), so their requests are pending when the connection breaks.
  std::atomic<bool> stop{false};
  std::atomic<unsigned> unexpected{0};
  std::atomic<unsigned> failed_requests{0};
  std::vector<elfin::testing::Proxy> proxies;
  proxies.reserve(6);
  for (unsigned i = 0; i < 6; ++i) proxies.push_back(one.subproxy());
  std::vector<std::thread> threads;
  threads.reserve(3);
  for (unsigned i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      const elfin::Addr to = one.system().group_addr(fmt::format("t{}", i));
      for (std::uint64_t seq = 0; !stop.load(); ++seq) {
        auto sent = proxies[i].try_send_to(to, Bump{"w", seq});
        // Full while the forwarder is behind; NoRoute once node 2 is gone.
        if (!sent && sent.error() != elfin::SendErrorKind::Full && sent.error() != elfin::SendErrorKind::NoRoute) {
          unexpected.fetch_add(1);
        }
        if (!sent) std::this_thread::yield();
      }
    });
  }
  for (unsigned i = 3; i < 6; ++i) {
    threads.emplace_back([&, i] {
      proxies[i].set_timeout(20s);
      const elfin::Addr to = one.system().group_addr(fmt::format("t{}", i - 3));
      auto answer = proxies[i].request_fallible(Count{"w"}, to);  // pending until the reset
      if (answer.ok()) {
        unexpected.fetch_add(1);
      } else if (answer.error() == elfin::RequestError::Failed) {
        failed_requests.fetch_add(1);
      }
    });
  }
  REQUIRE(two.read_messages(5'000));  // the writers are at full speed
  two.reset();
  REQUIRE(wait_info(one, [](const NetworkInfo& i) { return !has_peer(i, 2); }));
  for (unsigned i = 3; i < 6; ++i) threads[i].join();  // every pending request was answered: Failed
  stop = true;
  for (unsigned i = 0; i < 3; ++i) threads[i].join();
  CHECK(unexpected.load() == 0);
  CHECK(failed_requests.load() == 3);
  // And with node 2 gone, a request fails at once instead of waiting.
  auto refused = one.request_fallible(Count{"w"});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error() == elfin::RequestError::Failed);
}
