// The light node: a System of system.network, system.callers and one remote group per cluster
// group, configured from LightNodeOptions (no topology or config file).
#include <elfin/network/light_node.hpp>

#include <unistd.h>

#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <elfin/topology.hpp>

#include "network_state.hpp"

namespace elfin::network {

using Clock = std::chrono::steady_clock;

struct LightNode::Impl {
  std::uint16_t node = 0;
  std::vector<LightNodeGroup> groups;
  std::optional<System> system;
  std::vector<std::pair<std::string, Addr>> addrs;  // written by start, read-only afterwards
  std::shared_ptr<detail::NetworkState> net;
  std::optional<Caller> caller;
  std::once_flag stopped;

  void stop() {
    std::call_once(stopped, [this] {
      caller->stop("the light node stopped");
      system->terminate("the light node stopped");
      system->join();
    });
  }
};

namespace {
std::string toml_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += fmt::format("{}\"{}\"", out.empty() ? "" : ", ", item);
  return fmt::format("[{}]", out);
}
}  // namespace

Result<LightNode, std::string> LightNode::start(LightNodeOptions options) {
  if (options.groups.empty()) return Err{std::string("a light node needs at least one group to call")};
  if (options.node == 0) options.node = static_cast<std::uint16_t>(30000 + ::getpid() % 30000);
  Topology topology;
  topology.local("system.network").mount(blueprint());
  topology.local(std::string(Caller::kGroup)).mount(Caller::blueprint());
  for (const auto& group : options.groups) {
    if (group.nodes.empty()) return Err{fmt::format("the group `{}` lives on no node", group.name)};
    topology.local(group.name)
        .mount(remote_group({.nodes = group.nodes, .routing = group.routing, .remote_name = group.remote_name}));
  }
  StartOptions start;
  start.node_no = options.node;
  start.workers = options.workers;
  start.config_source = "<light node>";
  start.config_toml =
      fmt::format(R"([common.system.logging]
max_level = "{}"

[system.network]
listen = {}
discovery.predefined = {}
discovery.attempt_interval = "{}ms"
ping_interval = "{}ms"
idle_timeout = "{}ms"
{}
)",
                  options.max_log_level, toml_list(options.listen), toml_list(options.peers),
                  options.attempt_interval.count(), options.ping_interval.count(), options.idle_timeout.count(),
                  options.secret ? fmt::format("secret = \"{}\"", *options.secret) : "");
  auto system = System::start(std::move(topology), std::move(start));
  if (!system) return Err{fmt::format("the light node did not start: {}", system.error())};
  auto impl = std::make_unique<Impl>();
  impl->node = options.node;
  impl->groups = std::move(options.groups);
  System& running = impl->system.emplace(std::move(*system));
  for (const auto& group : impl->groups) impl->addrs.emplace_back(group.name, running.group_addr(group.name));
  impl->net = detail::NetworkState::of(running.core());
  auto caller = Caller::attach(running);
  if (!caller) {
    running.terminate("the caller did not attach");
    running.join();
    return Err{std::move(caller).error()};
  }
  impl->caller.emplace(std::move(*caller));
  return LightNode{std::move(impl)};
}

LightNode::LightNode(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LightNode::LightNode(LightNode&&) noexcept = default;
LightNode& LightNode::operator=(LightNode&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->stop();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
LightNode::~LightNode() {
  if (!impl_) return;
  impl_->stop();
  impl_->caller.reset();  // before the system it is an actor of
  impl_->system.reset();
}

void LightNode::stop() { impl_->stop(); }

Caller& LightNode::caller() const {
  return *impl_->caller;  // NOLINT(bugprone-unchecked-optional-access): start sets it, only the destructor resets it
}

Addr LightNode::group_addr(std::string_view group) const {
  for (const auto& [name, addr] : impl_->addrs) {
    if (name == group) return addr;
  }
  return Addr{};
}

std::uint16_t LightNode::node_no() const { return impl_->node; }

bool LightNode::connected(std::uint16_t node) const { return impl_->net->connected(node); }

NetworkInfo LightNode::info() const { return impl_->net->info(); }

Result<void, std::string> LightNode::wait_connected(std::chrono::milliseconds timeout) const {
  // No event says "connected" to a plain thread: poll the lock-free flags, briefly.
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    std::vector<std::string> missing;
    for (const auto& group : impl_->groups) {
      bool any = false;
      for (auto n : group.nodes) any = any || connected(n);
      if (!any) missing.push_back(group.name);
    }
    if (missing.empty()) return {};
    if (Clock::now() >= deadline) {
      return Err{fmt::format("within {} ms, no node of {} connected (refusals: {})", timeout.count(),
                             fmt::join(missing, ", "), fmt::join(info().refusals, "; "))};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
}

Result<void, std::string> LightNode::wait_connected(const std::vector<std::uint16_t>& nodes,
                                                    std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    std::vector<std::uint16_t> missing;
    for (auto n : nodes) {
      if (!connected(n)) missing.push_back(n);
    }
    if (missing.empty()) return {};
    if (Clock::now() >= deadline) {
      return Err{fmt::format("within {} ms, node(s) {} did not connect (refusals: {})", timeout.count(),
                             fmt::join(missing, ", "), fmt::join(info().refusals, "; "))};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
}

}  // namespace elfin::network
