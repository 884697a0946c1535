#include <elfin/testing/proxy.hpp>

#include <atomic>

#include <elfin/actor_group.hpp>
#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/supervisor.hpp>
#include <elfin/map_router.hpp>
#include <elfin/messages.hpp>
#include <elfin/topology.hpp>

namespace elfin::testing {

namespace {
using TesterKey = std::uint32_t;
using Testers = detail::Supervisor<NoConfig, TesterKey>;
constexpr const char* kSubject = "subject";
constexpr const char* kTesters = "system.testers";

// Messages the subject sends without an address go to the first proxy; sub-proxies only get what
// is sent to their own address.
Blueprint testers_blueprint() {
  return ActorGroup()
      .router(MapRouter<TesterKey>([](const Envelope& e) {
        if (e.is<ValidateConfig>()) return Outcome<TesterKey>::Default();
        // Proxies take no config. Without this, the start-up UpdateConfig reached the first proxy
        // only if the subject had already sent it something, and its recv() got a ConfigUpdated.
        if (e.is<UpdateConfig>()) return Outcome<TesterKey>::Discard();
        if (e.vtable().is_system) return Outcome<TesterKey>::GentleUnicast(0);
        return Outcome<TesterKey>::Unicast(0);
      }))
      .external();
}
}  // namespace

struct Proxy::Shared {
  Shared(System sys, ProxyOptions opts, std::string_view subject_name = kSubject)
      : system(std::move(sys)),
        testers(static_cast<Testers*>(system.core_group(kTesters))),
        subject(system.group_addr(subject_name)),
        options(opts) {}
  System system;
  Testers* testers;
  Addr subject;
  std::atomic<TesterKey> next_id{0};
  ProxyOptions options;
};

Proxy proxy(Blueprint subject, std::string config_toml, ProxyOptions options) {
  Topology topology;
  auto subject_group = topology.local(kSubject);
  auto testers = topology.local(kTesters);
  subject_group.mount(std::move(subject));
  testers.mount(testers_blueprint());
  testers.route_all_to(subject_group);
  subject_group.route_all_to(testers);

  auto section = AnyConfig::from_toml(config_toml, "<proxy config>");
  if (!section) throw ProxyError(section.error().message());
  StartOptions start;
  start.node_no = options.node_no;
  start.workers = options.workers;
  start.config = section->nested_under(kSubject);
  start.virtual_time = options.virtual_time;
  auto system = System::start(std::move(topology), std::move(start));
  if (!system) throw ProxyError(system.error().message());

  return Proxy{std::make_shared<Proxy::Shared>(std::move(*system), options)};
}

Proxy proxy(Topology topology, std::string_view subject, StartOptions start, ProxyOptions options) {
  bool declared = false;
  for (const auto& group : topology.groups()) declared = declared || group.name == subject;
  if (!declared) throw ProxyError(fmt::format("proxy: the topology has no group `{}`", subject));
  auto subject_group = topology.local(std::string(subject));
  auto testers = topology.local(kTesters);
  testers.mount(testers_blueprint());
  testers.route_all_to(subject_group);
  subject_group.route_all_to(testers);
  if (start.workers == 0) start.workers = options.workers;
  start.virtual_time = start.virtual_time || options.virtual_time;
  auto system = System::start(std::move(topology), std::move(start));
  if (!system) throw ProxyError(system.error().message());
  return Proxy{std::make_shared<Proxy::Shared>(std::move(*system), options, subject)};
}

Proxy::Proxy(std::shared_ptr<Shared> shared)
    : shared_(std::move(shared)),
      cell_(shared_->testers->actor(shared_->next_id.fetch_add(1), true)),
      timeout_(shared_->options.timeout) {
  cell_->set_trace_id(TraceId::generate());
}

Proxy::Proxy(Proxy&&) noexcept = default;
Proxy& Proxy::operator=(Proxy&&) noexcept = default;

Proxy::~Proxy() {
  if (shared_ && shared_.use_count() == 1) {
    shared_->system.terminate("test proxy dropped");
    shared_->system.join();
  }
}

Addr Proxy::addr() const { return cell_->addr(); }
Addr Proxy::subject_addr() const { return shared_->subject; }
System& Proxy::system() const { return shared_->system; }
TraceId Proxy::trace_id() const { return cell_->trace_id(); }
void Proxy::set_trace_id(TraceId id) { cell_->set_trace_id(id); }
void Proxy::set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

void Proxy::advance(std::chrono::nanoseconds by) {
  if (auto advanced = shared_->system.advance_time(by, timeout_); !advanced) {
    throw ProxyError(fmt::format("proxy.advance: {}", advanced.error()));
  }
}

Proxy Proxy::subproxy() { return Proxy{shared_}; }

detail::SendOp Proxy::routed_op(Envelope envelope, detail::SendMode mode) const {
  return {cell_->group(), std::move(envelope), mode};
}
detail::SendOp Proxy::direct_op(Addr to, Envelope envelope, detail::SendMode mode) const {
  return {cell_->group().system(), to, std::move(envelope), mode};
}

detail::Waker Proxy::waker() const { return detail::Waker{cell_}; }

bool Proxy::wait_signal(std::chrono::steady_clock::time_point deadline) { return cell_->wait_external(deadline); }

Result<void, SendErrorKind> Proxy::blocking_send(detail::SendOp& op) {
  wait([&] { return op.run(cell_.get()); }, "send (the subject's mailbox stayed full)");
  return op.result();
}

void Proxy::must(const Result<void, SendErrorKind>& result, const char* call, std::string_view name) {
  if (!result) throw ProxyError(fmt::format("proxy.{}({}): {}", call, name, to_string(result.error())));
}

Envelope Proxy::recv() {
  Envelope envelope;
  bool closed = false;
  wait(
      [&] {
        auto r = cell_->take_next(envelope);
        closed = r == detail::PopResult::Closed;
        return r != detail::PopResult::Empty;
      },
      "recv");
  if (closed) throw ProxyError("proxy.recv: the proxy's mailbox is closed");
  return envelope;
}

std::optional<Envelope> Proxy::try_recv() {
  Envelope envelope;
  if (cell_->take_next(envelope) == detail::PopResult::Item) return envelope;
  return std::nullopt;
}

void Proxy::sync() {
  // Ping is answered by `recv` itself, after everything queued before it, so an answered Ping
  // proves every earlier message was taken, and the handler of the one before finished.
  // Under virtual time nothing moves the clock while the proxy waits: an actor waiting for its
  // restart (or a subject waiting on a timer) never answers, and the error says so.
  std::ignore =
      take_all(*issue<Ping, true>(Ping{}, shared_->subject,
                                  "sync (the subject did not answer; under virtual time, an actor waiting for a "
                                  "restart or a timer needs proxy.advance first)"));
}

}  // namespace elfin::testing
