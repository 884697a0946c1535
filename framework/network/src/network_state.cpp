#include "network_state.hpp"

#include <random>

#include <fmt/format.h>
#include <openssl/rand.h>
#include <asio/connect.hpp>
#include <asio/post.hpp>

#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/internal/thread_name.hpp>

#include "connection.hpp"

namespace elfin::network::detail {

namespace {

constexpr std::string_view kExtension = "elfin.network";
constexpr std::string_view kGroupName = "system.network";  // the `actor_group` of the network's series
constexpr auto kFirstRedial = std::chrono::milliseconds{100};

std::uint64_t random_launch_id() {
  std::uint64_t id = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&id), sizeof id) != 1) id = std::random_device{}();
  return id == 0 ? 1 : id;
}

/// "tcp://host:port" -> host, port.
Result<std::pair<std::string, std::string>, std::string> parse_transport(std::string_view text) {
  constexpr std::string_view kScheme = "tcp://";
  if (!text.starts_with(kScheme)) {
    return Err{fmt::format("\"{}\": expected tcp://host:port (the only transport elfin speaks)", text)};
  }
  std::string_view rest = text.substr(kScheme.size());
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) {
    return Err{fmt::format("\"{}\": expected tcp://host:port", text)};
  }
  std::string host(rest.substr(0, colon));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return std::pair{host, std::string(rest.substr(colon + 1))};
}

}  // namespace

NetworkState::NetworkState(elfin::detail::SystemCore& system)
    : system_(system),
      node_no_(elfin::detail::node_no_of(system)),
      launch_id_(random_launch_id()),
      connected_(std::make_unique<std::array<std::atomic<bool>, 65536>>()) {}

NetworkState::~NetworkState() { stop("node is shutting down"); }

std::shared_ptr<NetworkState> NetworkState::of(elfin::detail::SystemCore& system) {
  bool made = false;
  auto state = std::static_pointer_cast<NetworkState>(elfin::detail::system_extension(system, kExtension, [&] {
    made = true;
    return std::make_shared<NetworkState>(system);
  }));
  if (made) {
    std::weak_ptr<NetworkState> weak = state;
    elfin::detail::on_system_shutdown(system, [weak] {
      if (auto s = weak.lock()) s->stop("node is shutting down");
    });
    elfin::detail::on_scrape(system, [weak](std::vector<telemetry::MetricSample>& out) {
      if (auto s = weak.lock()) s->collect_metrics(out);
    });
  }
  return state;
}

NodeIdentity NetworkState::identity() const {
  NodeIdentity id;
  id.node_no = node_no_;
  id.launch_id = launch_id_;
  id.node_name = fmt::format("node-{}", node_no_);
  id.max_frame_size = static_cast<std::uint32_t>(config_.max_frame_size.bytes);
  return id;
}

Welcome NetworkState::welcome() const {
  Welcome welcome;
  for (std::uint8_t no = 1; no != 0; ++no) {
    auto* group = elfin::detail::group_by_no(system_, no);
    if (group == nullptr) break;
    welcome.groups.push_back(GroupEntry{no, group->name()});
  }
  return welcome;
}

void NetworkState::log(LogLevel level, std::string text) const {
  elfin::detail::write_runtime_log(system_, level, ActorMeta{"system.network", ""}, TraceId{}, std::move(text));
}

Result<void, std::string> NetworkState::start(const Config& config) {
  std::lock_guard lock(start_mu_);
  if (started_) return {};
  if (stopped_) return Err{std::string("the network was stopped")};
  config_ = config;
  if (config_.max_frame_size.bytes < 1024 || config_.max_frame_size.bytes > 0xFFFFFFFFull) {
    return Err{fmt::format("max_frame_size must be between 1KiB and 4GiB, got {} bytes", config_.max_frame_size.bytes)};
  }
  asio::ip::tcp::resolver resolver(io_);
  for (const auto& text : config_.listen) {
    auto parsed = parse_transport(text);
    if (!parsed) return Err{"listen " + parsed.error()};
    std::error_code ec;
    auto endpoints = resolver.resolve(parsed->first, parsed->second, ec);
    if (ec || endpoints.empty()) return Err{fmt::format("listen \"{}\": cannot resolve: {}", text, ec.message())};
    auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(io_);
    const auto endpoint = endpoints.begin()->endpoint();
    acceptor->open(endpoint.protocol(), ec);
    if (!ec) acceptor->set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor->bind(endpoint, ec);
    if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return Err{fmt::format("cannot listen on \"{}\": {}", text, ec.message())};
    const auto bound = acceptor->local_endpoint(ec);
    listening_.push_back(fmt::format("{}:{}", bound.address().to_string(), bound.port()));
    acceptors_.push_back(std::move(acceptor));
  }
  for (const auto& text : config_.discovery.predefined) {
    auto parsed = parse_transport(text);
    if (!parsed) return Err{"discovery.predefined " + parsed.error()};
    auto dialer = std::make_unique<Dialer>();
    dialer->address = text;
    dialer->host = parsed->first;
    dialer->port = parsed->second;
    dialer->timer = std::make_unique<asio::steady_timer>(io_);
    dialers_.push_back(std::move(dialer));
  }
  for (auto& acceptor : acceptors_) accept(*acceptor);
  for (auto& dialer : dialers_) asio::post(io_, [this, d = dialer.get()] { dial(*d); });
  work_.emplace(io_.get_executor());
  started_ = true;
  elfin::detail::set_remote_router(system_, this);
  workers_drive_ = elfin::detail::set_idle_waiter(system_, &reactor_);
  thread_ = std::thread([this] {
    elfin::detail::name_this_thread("elfin-net-io");
    reactor_.run_io_thread(workers_drive_);
  });
  std::vector<std::string> listening;
  listening.reserve(listening_.size());
  for (const auto& address : listening_) listening.push_back("tcp://" + address);
  log(LogLevel::Info,
      fmt::format("node {} (launch {:016x}) listening on {}; dialing {}", node_no_, launch_id_,
                  listening.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(listening, ", ")),
                  config_.discovery.predefined.empty()
                      ? std::string("nobody")
                      : fmt::format("{}", fmt::join(config_.discovery.predefined, ", "))));
  return {};
}

void NetworkState::stop(const std::string& reason) {
  {
    std::lock_guard lock(start_mu_);
    if (stopped_) return;
    stopped_ = true;
    if (!started_) return;
  }
  elfin::detail::set_remote_router(system_, nullptr);
  // From here on the I/O thread alone runs the loop: closing drains it there.
  if (workers_drive_) (void)elfin::detail::set_idle_waiter(system_, nullptr);
  reactor_.detach();
  std::vector<std::shared_ptr<Connection>> all;
  {
    std::lock_guard lock(mu_);
    all = all_;
  }
  for (auto& conn : all) conn->close(reason, /*bye=*/true);
  asio::post(io_, [this] {
    std::error_code ignored;
    for (auto& acceptor : acceptors_) acceptor->close(ignored);
    for (auto& dialer : dialers_) dialer->timer->cancel();
    work_.reset();
  });
  if (thread_.joinable()) {
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();  // stopped from an I/O callback: the loop ends on its own
    } else {
      thread_.join();
    }
  }
  // Whatever the loop did not get to (connections mid-handshake) is dropped with it.
  std::lock_guard lock(mu_);
  connections_.clear();
  all_.clear();
}

void NetworkState::accept(asio::ip::tcp::acceptor& acceptor) {
  acceptor.async_accept([this, &acceptor](std::error_code ec, asio::ip::tcp::socket socket) {
    if (ec) {
      // stop() closes the acceptor on this thread: a completion queued before that must not
      // accept again on a closed one (that fails at once, again and again).
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      log(LogLevel::Warn, fmt::format("accept failed: {}", ec.message()));
      accept(acceptor);
      return;
    }
    if (adopt(std::move(socket), nullptr)) accept(acceptor);
  });
}

void NetworkState::dial(Dialer& dialer) {
  {
    std::lock_guard lock(start_mu_);
    if (stopped_) return;
  }
  auto resolver = std::make_shared<asio::ip::tcp::resolver>(io_);
  resolver->async_resolve(dialer.host, dialer.port, [this, &dialer, resolver](std::error_code ec, auto endpoints) {
    if (ec) {
      log(LogLevel::Warn, fmt::format("cannot resolve {}: {}", dialer.address, ec.message()));
      redial_later(dialer);
      return;
    }
    auto socket = std::make_shared<asio::ip::tcp::socket>(io_);
    asio::async_connect(*socket, endpoints, [this, &dialer, socket](std::error_code connect_ec, const auto&) {
      if (connect_ec) {
        log(dialer.backoff.count() == 0 ? LogLevel::Info : LogLevel::Debug,
            fmt::format("cannot connect to {}: {}; retrying", dialer.address, connect_ec.message()));
        redial_later(dialer);
        return;
      }
      (void)adopt(std::move(*socket), &dialer);
    });
  });
}

bool NetworkState::adopt(asio::ip::tcp::socket socket, Dialer* dialer) {
  auto conn = std::make_shared<Connection>(*this, std::move(socket), /*outgoing=*/dialer != nullptr);
  {
    // stop() sets stopped_ under start_mu_ and only then lists all_ under mu_: holding both here,
    // a connection is either on that list (and closed by stop) or never started.
    std::lock_guard start_lock(start_mu_);
    if (stopped_) return false;  // conn's socket closes with it
    std::lock_guard lock(mu_);
    all_.push_back(conn);
    if (dialer != nullptr) dialed_[conn.get()] = dialer;
  }
  conn->start();
  return true;
}

void NetworkState::redial_later(Dialer& dialer) {
  {
    std::lock_guard lock(start_mu_);
    if (stopped_) return;
  }
  // Backoff from 100 ms, doubling up to attempt_interval.
  dialer.backoff =
      dialer.backoff.count() == 0 ? kFirstRedial : std::min(dialer.backoff * 2, config_.discovery.attempt_interval);
  dialer.backoff = std::min(dialer.backoff, std::max(config_.discovery.attempt_interval, std::chrono::milliseconds{1}));
  dialer.timer->expires_after(dialer.backoff);
  dialer.timer->async_wait([this, &dialer](std::error_code ec) {
    if (!ec) dial(dialer);
  });
}

std::shared_ptr<Connection> NetworkState::connection(std::uint16_t node) const {
  std::lock_guard lock(mu_);
  auto it = connections_.find(node);
  return it == connections_.end() ? nullptr : it->second;
}

std::optional<std::string> NetworkState::admit(const std::shared_ptr<Connection>& conn) {
  std::lock_guard lock(mu_);
  for (const auto& other : all_) {
    // Only connections admitted before count: the handshakes run on this one thread, so of two
    // arriving together the second one admitted is the duplicate.
    if (other == conn || other->closed() || !admitted_.contains(other.get()) || other->node_no() != conn->node_no()) {
      continue;
    }
    if (other->launch_id() != conn->launch_id()) {
      return fmt::format(
          "duplicate node: node number {} is already connected to node {} (launch {:016x} at {}); "
          "two live processes claim the same number",
          conn->node_no(), node_no_, other->launch_id(), other->address());
    }
    // Both sides dialed each other: the connection dialed by the lower node number stays.
    const std::uint16_t dialer_of_conn = conn->outgoing() ? node_no_ : conn->node_no();
    const std::uint16_t lower = std::min(node_no_, conn->node_no());
    if (dialer_of_conn != lower) return std::string("duplicate connection: the one dialed by the lower node stays");
    other->close("duplicate connection: the one dialed by the lower node stays", /*bye=*/true);
  }
  admitted_.insert(conn.get());
  return std::nullopt;
}

void NetworkState::opened(const std::shared_ptr<Connection>& conn) {
  {
    std::lock_guard lock(mu_);
    connections_[conn->node_no()] = conn;
    // Under the lock that info() takes: whoever sees the peer listed and sends at once finds it
    // routable (remote groups route on this flag alone).
    (*connected_)[conn->node_no()].store(true, std::memory_order_release);
    // The next loss redials from the first, short wait again.
    if (auto it = dialed_.find(conn.get()); it != dialed_.end()) it->second->backoff = std::chrono::milliseconds{0};
  }
  log(LogLevel::Info,
      fmt::format("connected to node {} (`{}`, launch {:016x}) at {} ({})", conn->node_no(), conn->node_name(),
                  conn->launch_id(), conn->address(), conn->outgoing() ? "dialed" : "accepted"));
}

void NetworkState::closed(const Connection& conn, const std::string& reason) {
  bool was_current = false;
  {
    std::lock_guard lock(mu_);
    auto it = connections_.find(conn.node_no());
    if (it != connections_.end() && it->second.get() == &conn) {
      connections_.erase(it);
      // Under the lock, like opened(): never after a newer connection to the node set it.
      (*connected_)[conn.node_no()].store(false, std::memory_order_release);
      was_current = true;
    }
    std::erase_if(all_, [&](const auto& c) { return c.get() == &conn; });
    admitted_.erase(&conn);
  }
  if (was_current) {
    log(LogLevel::Warn, fmt::format("connection to node {} at {} lost: {}", conn.node_no(), conn.address(), reason));
  } else {
    log(LogLevel::Info, fmt::format("connection with {} closed: {}", conn.address(), reason));
  }
  // A dialed connection that went away is dialed again (with backoff).
  Dialer* dialer = nullptr;
  {
    std::lock_guard lock(mu_);
    if (auto it = dialed_.find(&conn); it != dialed_.end()) {
      dialer = it->second;
      dialed_.erase(it);
    }
  }
  if (dialer != nullptr) redial_later(*dialer);
}

void NetworkState::refused(std::string text) {
  log(LogLevel::Error, text);
  std::lock_guard lock(mu_);
  refusals_.push_back(std::move(text));
  if (refusals_.size() > 16) refusals_.pop_front();
}

NetworkInfo NetworkState::info() const {
  NetworkInfo info;
  info.node_no = node_no_;
  info.launch_id = launch_id_;
  info.listening = listening_;
  std::lock_guard lock(mu_);
  info.refusals.assign(refusals_.begin(), refusals_.end());
  for (const auto& [node, conn] : connections_) {
    info.peers.push_back(Peer{node, conn->node_name(), conn->launch_id(), conn->address(), conn->peer_group_names()});
  }
  return info;
}

std::shared_ptr<PeerTraffic> NetworkState::traffic(std::uint16_t node) {
  std::lock_guard lock(mu_);
  auto& slot = traffic_[node];
  if (!slot) slot = std::make_shared<PeerTraffic>();
  return slot;
}

void NetworkState::collect_metrics(std::vector<telemetry::MetricSample>& out) const {
  using Labels = std::vector<std::pair<std::string, std::string>>;
  auto add = [&out](const char* name, telemetry::MetricKind kind, const Labels& labels, double value) {
    telemetry::MetricSample sample;
    sample.name = name;
    sample.labels = labels;
    sample.kind = kind;
    sample.value = value;
    out.push_back(std::move(sample));
  };
  auto counter = [&add](const char* name, const Labels& labels, const std::atomic<std::uint64_t>& value) {
    add(name, telemetry::MetricKind::Counter, labels, static_cast<double>(value.load(std::memory_order_relaxed)));
  };
  std::lock_guard lock(mu_);
  for (const auto& [node, traffic] : traffic_) {
    const Labels labels{{"actor_group", std::string(kGroupName)}, {"peer", std::to_string(node)}};
    counter("elfin_network_sent_messages_total", labels, traffic->sent_messages);
    counter("elfin_network_received_messages_total", labels, traffic->received_messages);
    counter("elfin_network_sent_bytes_total", labels, traffic->sent_bytes);
    counter("elfin_network_received_bytes_total", labels, traffic->received_bytes);
    counter("elfin_network_writes_total", labels, traffic->writes);
    // A lost peer has no round trip: its last one would read as a healthy link.
    if (auto it = connections_.find(node); it != connections_.end()) {
      if (auto ns = it->second->rtt_ns()) {
        add("elfin_network_rtt_seconds", telemetry::MetricKind::Gauge, labels, static_cast<double>(*ns) * 1e-9);
      }
    }
  }
}

std::optional<SendErrorKind> NetworkState::resolve(Addr to, const Envelope& envelope, elfin::detail::Targets& out) {
  if (!connected(to.node_no())) return SendErrorKind::UnknownAddr;
  auto* network = elfin::detail::find_group(system_, "system.network");
  if (network == nullptr) return SendErrorKind::UnknownAddr;
  network->resolve(envelope, out);
  return out.empty() ? std::optional{SendErrorKind::NoRoute} : std::nullopt;
}

std::uint64_t NetworkState::next_pusher_key() {
  std::lock_guard lock(pushers_mu_);
  return kPusherKeyTag | next_pusher_++;
}

void NetworkState::register_pusher(const std::shared_ptr<RxFlow>& flow) {
  std::lock_guard lock(pushers_mu_);
  std::erase_if(pushers_, [](const auto& entry) { return entry.second.expired(); });
  pushers_[flow->pusher_key()] = flow;
}

std::shared_ptr<RxFlow> NetworkState::pusher_flow(std::uint64_t key) const {
  std::lock_guard lock(pushers_mu_);
  auto it = pushers_.find(key);
  return it == pushers_.end() ? nullptr : it->second.lock();
}

void NetworkState::wake_pusher(std::uint64_t key) {
  auto* network = elfin::detail::find_group(system_, "system.network");
  if (network == nullptr) return;
  elfin::detail::SendOp op{system_, network->addr(), Envelope::make(WakePusher{key}, Addr{}, TraceId::generate()),
                           elfin::detail::SendMode::Unbounded};
  std::ignore = op.run(nullptr);
}

}  // namespace elfin::network::detail
