// NetworkState: the network battery's state in one running system — listeners, dialers, the
// connections by node, and the event loop that drives them (run by idle workers, or else by the
// I/O thread: see reactor.hpp).
//
// It is a system extension (see elfin/internal/system_hooks.hpp): the `system.network` group and the
// remote groups of the same system find the same object. The manager actor of `system.network`
// starts it with the group's config and stops it when the group terminates; a system shutdown
// hook stops it too, in case the manager never got to.
//
// At most one connection per peer node is open. A second one to the same node (both sides dialed
// each other) is settled the same way on both ends: the one dialed by the lower node number stays.
// A connection from a node number that is already connected with a different launch id is
// refused: two live processes claim the same number (a restarted node's old connection is gone
// by then: the kernel closes a killed process's sockets, and the dialer retries).
//
// Metrics: the traffic with each peer (PeerTraffic, kept per node for the life of the system) and
// the round trip of each open connection are read at scrape time, through a collector the state
// registers with the system (`on_scrape`); see `collect_metrics`.
//
// Thread safety: every public function from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <elfin/internal/system_hooks.hpp>
#include <elfin/network/network.hpp>
#include <elfin/result.hpp>

#include <elfin/network/frame.hpp>
#include <elfin/network/handshake.hpp>
#include "flows.hpp"
#include "peer_traffic.hpp"
#include "reactor.hpp"

namespace elfin::detail {
class SystemCore;
class GroupRuntime;
}  // namespace elfin::detail

namespace elfin::network::detail {

class Connection;

/// Keys of the actors of `system.network` (its router's key type): the manager, one direct
/// forwarder per peer node (sends to actor addresses there), one pusher per blocked inbound flow.
inline constexpr std::uint64_t kManagerKey = 0;
inline constexpr std::uint64_t kDirectKeyTag = std::uint64_t{1} << 48;
inline constexpr std::uint64_t kPusherKeyTag = std::uint64_t{2} << 48;
[[nodiscard]] inline bool is_direct_key(std::uint64_t key) { return (key >> 48) == 1; }
[[nodiscard]] inline bool is_pusher_key(std::uint64_t key) { return (key >> 48) == 2; }

/// Wakes a pusher (internal to the battery).
struct WakePusher {
  std::uint64_t key = 0;
  ELFIN_MESSAGE(elfin_network, WakePusher, key);
  ELFIN_NO_DUMPING;
};

class NetworkState final : public elfin::detail::RemoteRouter, public std::enable_shared_from_this<NetworkState> {
 public:
  explicit NetworkState(elfin::detail::SystemCore& system);
  NetworkState(const NetworkState&) = delete;
  NetworkState& operator=(const NetworkState&) = delete;
  ~NetworkState() override;

  /// The state of `system` (made on first use).
  [[nodiscard]] static std::shared_ptr<NetworkState> of(elfin::detail::SystemCore& system);

  /// Binds the listeners, starts the dialers and the I/O thread; an error names the address that
  /// failed. Called by the manager with its group's config.
  [[nodiscard]] Result<void, std::string> start(const Config& config);
  /// Closes every connection (Bye with `reason`) and stops the I/O thread. Idempotent.
  void stop(const std::string& reason);

  [[nodiscard]] elfin::detail::SystemCore& system() const { return system_; }
  [[nodiscard]] std::uint16_t node_no() const { return node_no_; }
  [[nodiscard]] std::uint64_t launch_id() const { return launch_id_; }
  [[nodiscard]] const Config& config() const { return config_; }
  [[nodiscard]] asio::io_context& io() { return io_; }
  [[nodiscard]] NodeIdentity identity() const;
  [[nodiscard]] Welcome welcome() const;

  /// Is `node` connected (handshake done)? Lock-free: routers ask on every message.
  [[nodiscard]] bool connected(std::uint16_t node) const { return (*connected_)[node].load(std::memory_order_acquire); }
  /// The open connection to `node`, or null.
  [[nodiscard]] std::shared_ptr<Connection> connection(std::uint16_t node) const;
  [[nodiscard]] NetworkInfo info() const;
  /// The traffic counters of peer `node` (made on first use, kept until the state goes).
  [[nodiscard]] std::shared_ptr<PeerTraffic> traffic(std::uint16_t node);
  /// Appends the `elfin_network_*` series: per peer ever admitted, its traffic counters; per
  /// connected peer whose Pong came back, `elfin_network_rtt_seconds`. Takes `mu_` once.
  void collect_metrics(std::vector<telemetry::MetricSample>& out) const;

  // RemoteRouter: sends to actor addresses on other nodes go to that node's direct forwarder.
  [[nodiscard]] std::optional<SendErrorKind> resolve(Addr to, const Envelope& envelope,
                                                     elfin::detail::Targets& out) override;

  // --- from connections (I/O thread) ---------------------------------------------------------
  /// The handshake with `conn` succeeded; a refusal reason if the connection must not be used.
  [[nodiscard]] std::optional<std::string> admit(const std::shared_ptr<Connection>& conn);
  /// `conn` got the peer's Welcome: it carries traffic from now on.
  void opened(const std::shared_ptr<Connection>& conn);
  void closed(const Connection& conn, const std::string& reason);
  /// A key for the pusher of a new inbound flow; `register_pusher` lets that pusher find the flow.
  [[nodiscard]] std::uint64_t next_pusher_key();
  void register_pusher(const std::shared_ptr<RxFlow>& flow);
  [[nodiscard]] std::shared_ptr<RxFlow> pusher_flow(std::uint64_t key) const;
  /// Wakes the pusher of `flow` (spawning it if needed).
  void wake_pusher(std::uint64_t key);

  void log(LogLevel level, std::string text) const;
  /// Logs a refused connection (as an error) and keeps it for `info()`.
  void refused(std::string text);

 private:
  struct Dialer {
    std::string address;
    std::string host;
    std::string port;
    std::unique_ptr<asio::steady_timer> timer;
    std::chrono::milliseconds backoff{0};
  };
  void accept(asio::ip::tcp::acceptor& acceptor);
  void dial(Dialer& dialer);
  /// Starts a connection on `socket`, just accepted (`dialer` null) or connected by `dialer`;
  /// false, the socket closed, once the network is stopping: an accept or a dial that completes
  /// during stop() must not leave a connection open that stop() never saw.
  [[nodiscard]] bool adopt(asio::ip::tcp::socket socket, Dialer* dialer);
  void redial_later(Dialer& dialer);

  elfin::detail::SystemCore& system_;
  const std::uint16_t node_no_;
  const std::uint64_t launch_id_;
  Config config_;  // written by start before the I/O thread exists, then read-only
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  Reactor reactor_{io_};
  bool workers_drive_ = false;  // written by start before the I/O thread exists
  std::thread thread_;
  std::vector<std::unique_ptr<asio::ip::tcp::acceptor>> acceptors_;  // I/O thread once started
  std::vector<std::unique_ptr<Dialer>> dialers_;                     // I/O thread once started

  std::mutex start_mu_;                 // taken before mu_ when both are held
  bool started_ = false;                // guarded by start_mu_
  bool stopped_ = false;                // guarded by start_mu_
  std::vector<std::string> listening_;  // written by start, read-only afterwards

  mutable std::mutex mu_;
  std::map<std::uint16_t, std::shared_ptr<Connection>> connections_;  // guarded by mu_: open ones
  std::vector<std::shared_ptr<Connection>> all_;                      // guarded by mu_: every live one
  std::unordered_map<const Connection*, Dialer*> dialed_;             // guarded by mu_: who dialed which
  std::unordered_set<const Connection*> admitted_;                    // guarded by mu_: handshake passed
  std::unique_ptr<std::array<std::atomic<bool>, 65536>> connected_;

  std::deque<std::string> refusals_;                               // guarded by mu_
  std::map<std::uint16_t, std::shared_ptr<PeerTraffic>> traffic_;  // guarded by mu_; never erased

  mutable std::mutex pushers_mu_;
  std::unordered_map<std::uint64_t, std::weak_ptr<RxFlow>> pushers_;  // guarded by pushers_mu_
  std::uint64_t next_pusher_ = 1;                                     // guarded by pushers_mu_
};

}  // namespace elfin::network::detail
