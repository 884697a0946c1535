// The simulated cluster: nodes, the virtual clock they share, and the loop that plays events in
// order (see elfin/testing/sim_cluster.hpp).
#include <elfin/testing/sim_cluster.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>

#include <fmt/format.h>

#include <elfin/any_message.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/internal/system_hooks.hpp>

#include "sim_network_state.hpp"

namespace elfin::testing {

namespace {

using Nanos = std::chrono::nanoseconds;
using Event = SimNetwork::State::Event;
using Failure = SimNetwork::State::Failure;

/// Where every node's clock starts: a constant, so that what actors read from their clock is the
/// same in every run of a seed.
constexpr std::chrono::steady_clock::time_point kEpoch{std::chrono::hours(24)};

std::uint64_t choose_seed(const std::optional<std::uint64_t>& given) {
  if (given) return *given;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read on the test's thread, nothing sets it meanwhile
  if (const char* env = std::getenv("ELFIN_SIM_SEED"); env != nullptr && *env != '\0') {
    return std::strtoull(env, nullptr, 0);
  }
  std::random_device device;
  const std::uint64_t seed = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  std::fprintf(stderr, "sim cluster: seed %llu (ELFIN_SIM_SEED=%llu replays it)\n",
               static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  return seed;
}

}  // namespace

struct SimCluster::Impl {
  Impl(SimClusterOptions opts, SimTopology topo)
      : options(std::move(opts)),
        topology(std::move(topo)),
        seed(choose_seed(options.seed)),
        net(std::make_shared<SimNetwork::State>(SimRandom::derive(seed, 0, 1), options.nodes, options.faults)),
        network(net),
        test_random(SimRandom::derive(seed, 0, 2)),
        systems(options.nodes + 1u),
        links(options.nodes + 1u) {
    if (options.disk_root.empty()) {
      std::string pattern = (std::filesystem::temp_directory_path() / "elfin-sim-XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) throw SimError("sim cluster: cannot create a temporary directory");
      disk_root = pattern;
      own_root = true;
    } else {
      disk_root = options.disk_root;
    }
    disks.emplace_back();  // no node 0
    for (std::uint16_t n = 1; n <= options.nodes; ++n) {
      disks.push_back(std::make_unique<SimDisk>((disk_root / fmt::format("node-{}", n)).string()));
    }
  }

  ~Impl() {
    for (std::uint16_t n = 1; n <= options.nodes; ++n) {
      if (systems[n]) std::ignore = net->node_down(n, "is gone with the cluster");
    }
    for (std::uint16_t n = 1; n <= options.nodes; ++n) {
      auto& system = systems[n];
      if (!system) continue;
      system->kill("the simulated cluster is dropped");
      system.reset();
    }
    disks.clear();
    if (own_root) {
      std::error_code ignored;
      std::filesystem::remove_all(disk_root, ignored);
    }
  }

  [[nodiscard]] std::string describe() const {
    return fmt::format("sim cluster: seed {} (ELFIN_SIM_SEED={} replays it), t = {}", seed, seed, format_sim_time(now));
  }

  [[noreturn]] void broken(const std::string& what) const { throw SimError(fmt::format("{}; {}", what, describe())); }

  void check_node(std::uint16_t n) const {
    if (n == 0 || n > options.nodes) broken(fmt::format("there is no node {} (nodes are 1..{})", n, options.nodes));
  }

  System& up_system(std::uint16_t n) {
    check_node(n);
    auto& system = systems[n];
    if (!system) broken(fmt::format("node {} is down", n));
    return *system;
  }

  /// Moves node `n`'s clock to `t` (firing its timers due by then) and waits until it settles.
  void advance_node(std::uint16_t n, Nanos t) {
    System& system = up_system(n);
    const auto by = std::max(Nanos(0), std::chrono::duration_cast<Nanos>(kEpoch + t - system.now()));
    if (auto advanced = system.advance_time(by, options.settle_timeout); !advanced) {
      broken(fmt::format("node {}: {}", n, advanced.error()));
    }
  }
  void settle(std::uint16_t n) { advance_node(n, now); }

  void start_node(std::uint16_t n) {
    const std::uint32_t incarnation = net->node_up(n);
    SimNode node{n, incarnation, SimRandom::derive(seed, n, incarnation), *disks[n]};
    Topology topo = topology(node);
    topo.local(kSimDirectGroup).mount(sim_direct_forwarders());
    StartOptions start;
    start.node_no = n;
    start.workers = 1;  // one worker: a node runs its actors in the same order on every run
    start.virtual_time = true;
    start.virtual_start = kEpoch + now;
    start.config_source = fmt::format("<node {} config>", n);
    if (options.config) start.config_toml = options.config(node);
    links[n] = SimLink{net, n};
    auto started = [&] {
      StartingSimNode binding(links[n]);
      return System::start(std::move(topo), std::move(start));
    }();
    if (!started) {
      std::ignore = net->node_down(n, "did not start");
      broken(fmt::format("node {} did not start: {}", n, started.error().message()));
    }
    systems[n].emplace(std::move(*started));
    net->log(fmt::format("start node {} (incarnation {})", n, incarnation));
    settle(n);
  }

  /// Fails requests whose requesters wait on other nodes: each node's in one batch, then it settles.
  void fail_all(std::vector<Failure> failures) {
    std::stable_sort(failures.begin(), failures.end(),
                     [](const Failure& a, const Failure& b) { return a.node < b.node; });
    for (std::size_t i = 0; i < failures.size();) {
      const std::uint16_t n = failures[i].node;
      System* up = nullptr;
      if (n <= options.nodes) {
        if (auto& system = systems[n]) up = &*system;
      }
      {
        std::optional<detail::ScheduleBatch> batch;
        if (up != nullptr) batch.emplace(up->core());
        for (; i < failures.size() && failures[i].node == n; ++i) {
          failures[i].state->fail(RequestError{RequestError::Failed, failures[i].reason});
        }
      }
      if (up != nullptr) settle(n);
    }
  }

  /// Delivers one event to node `n`, which is up; failures of requesters elsewhere go to `failures`.
  void deliver(std::uint16_t n, Event& e, std::vector<Failure>& failures) {
    System& system = up_system(n);
    if (e.kind == Event::Kind::Response) {
      auto pending = net->take_pending(e.request_id);
      if (!pending) {
        net->log(fmt::format("ignore {}->{} {} (already answered or failed)", e.from, e.to, e.what));
        return;
      }
      std::vector<detail::AnswerView> views;
      views.reserve(e.answers.size());
      for (const auto& a : e.answers) views.push_back({a.status, a.payload});
      if (auto problem = pending->ops->apply_answers(*pending->state, views, e.trace)) {
        net->log(fmt::format("answer {}->{} {}: {}", e.from, e.to, e.what, *problem));
      }
      net->log(fmt::format("deliver {}->{} {}", e.from, e.to, e.what));
      return;
    }
    auto fail_requester = [&](const std::string& why) {
      net->log(fmt::format("reject {}->{} {} #{}: {}", e.from, e.to, e.what, e.seq, why));
      if (!e.request || e.duplicate) return;
      if (auto pending = net->take_pending(e.request_id)) {
        failures.push_back({pending->from, std::move(pending->state), fmt::format("node {}: {}", n, why)});
      }
    };
    const Addr group = e.remote_name.empty() ? e.recipient : system.group_addr(e.remote_name);
    if (group.is_null()) return fail_requester(fmt::format("no group `{}`", e.remote_name));
    if (group.node_no() != n) return fail_requester(fmt::format("the address is on node {}", group.node_no()));
    auto decoded = AnyMessage::decode_envelope(e.protocol, e.name, e.payload, e.sender, e.trace);
    if (!decoded) return fail_requester(decoded.error().message());
    Envelope envelope = std::move(decoded).value();
    std::shared_ptr<detail::RequestStateBase> remote;
    if (e.request) {
      const detail::RequestOps* ops = envelope.vtable().request_ops;
      if (ops == nullptr) return fail_requester("sent as a request but it is not one here");
      std::weak_ptr<SimNetwork::State> weak = net;
      remote = ops->make_remote_state(
          e.request_all, [weak, ops, from = n, to = e.from, id = e.request_id](detail::RequestStateBase& s) {
            if (auto state = weak.lock()) state->respond(from, to, id, ops->take_answers(s));
          });
      detail::EnvelopeAccess::block(envelope)->kind = MessageKind::Request;
      detail::EnvelopeAccess::block(envelope)->request = remote;
    }
    net->log(fmt::format("deliver {}->{} {} #{}", e.from, e.to, e.what, e.seq));
    detail::SendOp op{system.core(), group, std::move(envelope), detail::SendMode::Unbounded};
    std::ignore = op.run(nullptr);
    if (remote) remote->release_sender();  // unrouted: the state answers "reached no one"
  }

  /// Plays instant `t` node by node, each settling before the next: the node's clock moves to `t`
  /// (firing its timers due then), then it gets the deliveries due by then.
  void play_instant(Nanos t) {
    std::vector<Event> due = net->take_due(t);
    std::vector<Failure> failures;
    for (std::uint16_t n = 1; n <= options.nodes; ++n) {
      if (systems[n]) advance_node(n, t);
      bool any = false;
      {
        std::optional<detail::ScheduleBatch> batch;
        for (auto& e : due) {
          if (e.to != n) continue;
          any = true;
          const bool alive = systems[n].has_value() && net->incarnation(n) == e.to_incarnation;
          if (!e.lost && !alive) e.lost = fmt::format("node {} went down", n);
          if (e.lost) {
            net->log(fmt::format("lose {}->{} {} #{}: {}", e.from, e.to, e.what, e.seq, *e.lost));
            if (e.duplicate) continue;
            if (auto pending = net->take_pending(e.request_id);
                pending && (e.request || e.kind == Event::Kind::Response)) {
              failures.push_back({pending->from, std::move(pending->state), *e.lost});
            }
            continue;
          }
          if (!batch) batch.emplace(systems[n].value().core());
          deliver(n, e, failures);
        }
      }
      if (any && systems[n]) settle(n);
    }
    fail_all(std::move(failures));
  }

  [[nodiscard]] std::optional<Nanos> next_time() const {
    std::optional<Nanos> next = net->next_time();
    for (std::uint16_t n = 1; n <= options.nodes; ++n) {
      const auto& system = systems[n];
      if (!system) continue;
      if (auto timer = system->next_timer()) {
        const auto at = std::chrono::duration_cast<Nanos>(*timer - kEpoch);
        if (!next || at < *next) next = at;
      }
    }
    return next;
  }

  /// Plays every event due by `until`, in order, then moves every clock to `until`.
  void step_to(Nanos until) {
    std::uint64_t steps_here = 0;
    for (;;) {
      auto next = next_time();
      if (!next || *next > until) break;
      const Nanos t = std::max(*next, now);
      if (t == now) {
        if (++steps_here > options.max_steps_per_instant) {
          broken(fmt::format("more than {} steps at one instant (a livelock?)", options.max_steps_per_instant));
        }
      } else {
        steps_here = 0;
      }
      now = t;
      net->set_now(t);
      play_instant(t);
    }
    if (until > now) {
      now = until;
      net->set_now(now);
      for (std::uint16_t n = 1; n <= options.nodes; ++n) {
        if (systems[n]) advance_node(n, now);
      }
    }
  }

  SimClusterOptions options;
  SimTopology topology;
  std::uint64_t seed;
  std::filesystem::path disk_root;
  bool own_root = false;
  std::shared_ptr<SimNetwork::State> net;
  SimNetwork network;
  SimRandom test_random;
  std::vector<std::unique_ptr<SimDisk>> disks;  // index = node number
  std::vector<std::optional<System>> systems;   // likewise; empty while down
  std::vector<SimLink> links;                   // what each node's sim remote groups bind to
  Nanos now{0};
};

SimCluster::SimCluster(SimClusterOptions options, SimTopology topology)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(topology))) {
  for (std::uint16_t n = 1; n <= impl_->options.nodes; ++n) impl_->start_node(n);
}

SimCluster::~SimCluster() {
  if (std::uncaught_exceptions() > 0) std::fprintf(stderr, "%s\n", impl_->describe().c_str());
}

std::uint64_t SimCluster::seed() const { return impl_->seed; }
std::string SimCluster::describe() const { return impl_->describe(); }
std::chrono::nanoseconds SimCluster::now() const { return impl_->now; }
std::uint16_t SimCluster::size() const { return impl_->options.nodes; }
SimNetwork& SimCluster::network() { return impl_->network; }
SimRandom& SimCluster::random() { return impl_->test_random; }

SimDisk& SimCluster::disk(std::uint16_t node_no) {
  impl_->check_node(node_no);
  return *impl_->disks[node_no];
}

System& SimCluster::system(std::uint16_t node_no) { return impl_->up_system(node_no); }

bool SimCluster::is_up(std::uint16_t node_no) const {
  impl_->check_node(node_no);
  return impl_->systems[node_no].has_value();
}

void SimCluster::advance(std::chrono::nanoseconds by) { impl_->step_to(impl_->now + std::max(Nanos(0), by)); }

bool SimCluster::run_until(const std::function<bool()>& done, std::chrono::nanoseconds within) {
  const Nanos until = impl_->now + std::max(Nanos(0), within);
  while (!done()) {
    auto next = impl_->next_time();
    if (!next || *next > until) {
      impl_->step_to(until);
      return done();
    }
    // One instant at a time, so `done` is checked between them.
    impl_->step_to(std::max(*next, impl_->now));
    if (impl_->now >= until) return done();
  }
  return true;
}

void SimCluster::crash(std::uint16_t node_no, std::uint64_t torn_bytes) {
  System& system = impl_->up_system(node_no);
  auto failures = impl_->net->node_down(node_no, "crashed");
  impl_->net->log(fmt::format("crash node {}", node_no));
  SimDisk& disk = *impl_->disks[node_no];
  disk.cut_power();  // before the kill: what the node's destructors still write never lands
  system.kill("crashed by the simulation");
  impl_->systems[node_no].reset();
  disk.power_loss(torn_bytes);
  impl_->fail_all(std::move(failures));
}

void SimCluster::restart(std::uint16_t node_no) {
  impl_->check_node(node_no);
  if (impl_->systems[node_no]) impl_->broken(fmt::format("node {} is up; crash it first", node_no));
  impl_->start_node(node_no);
}

void SimCluster::inject(std::uint16_t node_no, std::string_view group, Envelope envelope,
                        detail::RequestStateBase* request) {
  impl_->check_node(node_no);
  const std::string what = fmt::format("{}.{}", envelope.protocol(), envelope.name());
  auto& node = impl_->systems[node_no];
  if (!node) {
    impl_->net->log(fmt::format("inject {} into node {}: the node is down", what, node_no));
    if (request != nullptr) request->release_sender();  // reached no one: Failed
    return;
  }
  System& system = *node;
  impl_->net->log(fmt::format("inject {} into node {} `{}`", what, node_no, group));
  {
    detail::ScheduleBatch batch(system.core());
    detail::SendOp op{system.core(), system.group_addr(group), std::move(envelope), detail::SendMode::Unbounded};
    std::ignore = op.run(nullptr);
    if (request != nullptr) request->release_sender();
  }
  impl_->settle(node_no);
}

void SimCluster::note(std::string_view text) { impl_->net->log(fmt::format("note {}", text)); }
std::vector<std::string> SimCluster::trace() const { return impl_->net->trace(); }

}  // namespace elfin::testing
