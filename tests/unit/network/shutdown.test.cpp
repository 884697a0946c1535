// A node's network stops at once whatever its dials and accepts are doing: a connection that
// completes while the node stops is closed with the others, never left open to keep the node's
// I/O loop (and so its termination) running until the peer lets go.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <asio/connect.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <elfin/elfin.hpp>

#include <elfin/network/network.hpp>
#include <elfin/testing/proxy.hpp>

#include "network_info.hpp"

namespace {

using namespace std::chrono_literals;

constexpr std::string_view kQuietPeers = R"(idle_timeout = "60s"
secret = "s3cret"
)";

/// A peer that accepts every connection and holds it without a word: a connection the node does
/// not close itself stays open (for the node's idle_timeout, a minute here).
class SilentListener {
 public:
  SilentListener() : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  ~SilentListener() {
    work_.reset();
    io_.stop();
    thread_.join();
  }

  [[nodiscard]] std::string address() const { return fmt::format("127.0.0.1:{}", acceptor_.local_endpoint().port()); }

 private:
  void accept() {
    acceptor_.async_accept([this](std::error_code ec, asio::ip::tcp::socket socket) {
      if (ec) return;
      held_.push_back(std::make_unique<asio::ip::tcp::socket>(std::move(socket)));
      accept();
    });
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  asio::ip::tcp::acceptor acceptor_;
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> held_;  // the I/O thread's alone
  std::thread thread_;
};

}  // namespace

TEST_CASE("a node stopped while its dials are still connecting stops at once", "[network][shutdown]") {
  const SilentListener peer;
  // Many dialers to the one peer: at any moment of the stop some resolve, connect or handshake.
  std::string peers;
  for (int i = 0; i < 32; ++i) peers += fmt::format("{}\"tcp://{}\"", i == 0 ? "" : ", ", peer.address());
  const std::string config = fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:0"]
discovery.predefined = [{}]
discovery.attempt_interval = "1ms"
{})",
                                         peers, kQuietPeers);
  for (int round = 0; round < 40; ++round) {
    elfin::Topology topology;
    topology.local("system.network").mount(elfin::network::blueprint());
    elfin::StartOptions start;
    start.node_no = 1;
    start.config_toml = config;
    auto system = elfin::System::start(std::move(topology), std::move(start));
    REQUIRE(system.ok());
    // Stop at a different point of the dialing each round.
    std::this_thread::sleep_for(std::chrono::microseconds(round * 50));
    system->terminate("the test stops the node");
    INFO("round " << round);
    REQUIRE(system->join_for(10s));
  }
}

TEST_CASE("a node stopped while peers keep connecting to it stops at once", "[network][shutdown]") {
  for (int round = 0; round < 40; ++round) {
    elfin::Topology topology;
    topology.local("system.network").mount(elfin::network::blueprint());
    elfin::StartOptions start;
    start.node_no = 1;
    start.config_toml = fmt::format("[system.network]\nlisten = [\"tcp://127.0.0.1:0\"]\n{}", kQuietPeers);
    auto node = elfin::testing::proxy(std::move(topology), "system.network", std::move(start));
    const auto listening = elfin::network::test::info(node).listening;
    REQUIRE(listening.size() == 1);
    const auto colon = listening.front().rfind(':');
    const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(listening.front().substr(0, colon)),
                                           static_cast<std::uint16_t>(std::stoi(listening.front().substr(colon + 1))));
    // Silent peers connect one after another until the node stops listening; their sockets stay
    // open until the round ends (the thread's alone until it is joined).
    asio::io_context io;
    std::vector<asio::ip::tcp::socket> held;
    std::atomic<bool> done{false};
    std::thread peers([&] {
      while (!done.load() && held.size() < 500) {
        asio::ip::tcp::socket socket(io);
        std::error_code ec;
        socket.connect(endpoint, ec);
        if (ec) break;
        held.push_back(std::move(socket));
      }
    });
    std::this_thread::sleep_for(std::chrono::microseconds(round * 50));
    node.system().terminate("the test stops the node");
    INFO("round " << round);
    CHECK(node.system().join_for(10s));
    done = true;
    peers.join();
  }
}
