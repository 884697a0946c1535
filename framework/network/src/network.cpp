// The network battery's groups: `system.network` (manager, direct forwarders, pushers) and remote
// groups (forwarders to one node each). See elfin/network/network.hpp.
#include <elfin/network/network.hpp>

#include <coroutine>

#include <fmt/format.h>

#include <elfin/actor_group.hpp>
#include <elfin/detail/awaitables.hpp>
#include <elfin/handle.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/logging.hpp>
#include <elfin/messages.hpp>
#include <elfin/telemetry.hpp>

#include "connection.hpp"
#include "direct_sink.hpp"
#include "network_state.hpp"
#include "undelivered.hpp"

namespace elfin::network {

namespace {

using detail::Connection;
using detail::NetworkState;
using detail::TxFlow;
using elfin::detail::ActorCell;
using elfin::detail::ActorCellAccess;

/// `co_await`: parks the forwarder until its flow has credit (taking one) or is closed.
class [[nodiscard]] CreditAwaitable {
 public:
  /// `flow` must outlive the wait (the forwarder holds it).
  CreditAwaitable(ActorCell* self, TxFlow& flow) : self_(self), flow_(flow) {}
  bool await_ready() { return ready(); }
  void await_suspend(std::coroutine_handle<> h) { self_->suspend(h, &poll, this); }
  /// True with a credit taken, false if the flow closed.
  bool await_resume() const { return acquired_; }

 private:
  bool ready() {
    if (flow_.try_acquire()) return acquired_ = true;
    if (flow_.closed()) return true;
    // Park, then look again: a grant between the first look and the park is not missed.
    flow_.park(elfin::detail::Waker{self_->shared_from_this()});
    if (flow_.try_acquire()) return acquired_ = true;
    return flow_.closed();
  }
  static bool poll(void* self) { return static_cast<CreditAwaitable*>(self)->ready(); }

  ActorCell* self_;
  TxFlow& flow_;
  bool acquired_ = false;
};

/// Gives up on a message the network cannot carry: a request someone waits for fails at once.
void drop(Envelope& envelope, std::uint16_t node, std::string_view why, std::uint64_t& dropped) {
  detail::fail_undelivered(envelope, node, why);
  if (dropped++ == 0) {
    log::warn("{}.{} to node {} dropped: {} (further drops until the node is back are counted, not logged)",
              envelope.protocol(), envelope.name(), node, why);
  }
}

/// Frames a forwarder has encoded and not yet handed to its connection: the messages it finds
/// queued together go to the connection as one batch, under one lock, rather than one by one.
struct Outbox {
  static constexpr std::size_t kMaxBytes = std::size_t{256} * 1024;  ///< handed over at this size at the latest
  static constexpr std::size_t kMaxMessages = 512;                   ///< taken from the mailbox without `recv`

  std::shared_ptr<Connection> conn;
  std::shared_ptr<TxFlow> flow;
  std::string frames;
  std::uint64_t messages = 0;  ///< in `frames`, for the peer's sent-messages counter
  bool awaited = false;        ///< a request among them: the connection writes it at once if idle

  void flush() {
    if (conn) conn->send_encoded(frames, messages, awaited);
    frames.clear();
    messages = 0;
    awaited = false;
  }
};

/// The next envelope already in the mailbox, if any (never waits).
template <class Ctx>
std::optional<Envelope> queued(Ctx& ctx) {
  auto more = ctx.try_recv();
  if (!more) return std::nullopt;
  return std::move(*more);
}

/// A forwarder: what reaches its mailbox goes to node `node`, through the peer's group
/// `remote_name` (or, with an empty name, to each envelope's recipient address there).
template <class Ctx>
Task<> forward(Ctx ctx, std::shared_ptr<NetworkState> net, std::uint16_t node, std::string remote_name) {
  ActorCell* self = ActorCellAccess::cell(ctx);
  Outbox out;
  std::uint64_t dropped = 0;
  while (auto received = co_await ctx.recv()) {
    // What is already queued is encoded into one batch; the batch leaves when the mailbox is
    // empty, when it is big enough, or before waiting for credit. At most kMaxMessages are taken
    // this way: then `recv`, which gives the worker to other actors when the budget is spent (a
    // sender on another worker could otherwise keep this loop going forever).
    std::size_t taken = 0;
    for (std::optional<Envelope> current = std::move(received); current;
         current = ++taken < Outbox::kMaxMessages ? queued(ctx) : std::nullopt) {
      Envelope& envelope = *current;
      if (envelope.vtable().is_system) continue;  // UpdateConfig, Terminate, ... are for us, not the peer
      if (!out.conn || out.conn->closed()) {
        out.flush();
        out.conn = net->connection(node);
        out.flow = out.conn ? out.conn->open_flow() : nullptr;
        if (out.conn && dropped > 0) {
          log::info("node {} is back; {} message(s) to it were dropped while it was away", node, dropped);
          dropped = 0;
        }
      }
      if (!out.conn) {
        drop(envelope, node, "the node is not connected", dropped);
        continue;
      }
      std::uint8_t group_no = 0;
      if (!remote_name.empty()) {
        group_no = out.conn->peer_group(remote_name);
        if (group_no == 0) {
          drop(envelope, node, fmt::format("node {} has no group `{}`", node, remote_name), dropped);
          continue;
        }
      }
      if (!out.flow->try_acquire()) {
        out.flush();  // the peer answers credit for what it has received
        CreditAwaitable credit{self, *out.flow};
        const bool acquired = co_await credit;
        if (!acquired) {
          drop(envelope, node, "the connection was lost", dropped);
          continue;
        }
      }
      const bool request = envelope.kind() == MessageKind::Request;
      auto encoded = out.conn->encode_envelope(envelope, *out.flow, group_no, out.frames);
      if (encoded) {
        ++out.messages;
        out.awaited = out.awaited || request;
      } else {
        drop(envelope, node, encoded.error(), dropped);
      }
      if (out.frames.size() >= Outbox::kMaxBytes) out.flush();
    }
    out.flush();
  }
  out.flush();
}

/// The forwarder a `pick` chose this very node for: what reaches it goes, in order, to the local
/// group `local_name`, routed by that group's router like any send to it.
template <class Ctx>
Task<> forward_local(Ctx ctx, std::shared_ptr<NetworkState> net, std::string local_name) {
  ActorCell* self = ActorCellAccess::cell(ctx);
  std::uint64_t dropped = 0;
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->vtable().is_system) continue;
    auto* group = elfin::detail::find_group(net->system(), local_name);
    if (group == nullptr) {
      drop(*envelope, net->node_no(), fmt::format("this node has no group `{}`", local_name), dropped);
      continue;
    }
    elfin::detail::SendOpAwaitable delivery{
        self,
        elfin::detail::SendOp{net->system(), group->addr(), std::move(*envelope), elfin::detail::SendMode::Bounded}};
    auto done = co_await delivery;
    (void)done;  // refused by the group's router: the request (if any) is answered as undelivered
  }
}

/// A pusher: delivers, in order, the messages of one inbound flow that met a full mailbox.
template <class Ctx>
Task<> push(Ctx ctx, std::shared_ptr<NetworkState> net) {
  ActorCell* self = ActorCellAccess::cell(ctx);
  auto flow = net->pusher_flow(ctx.key());
  std::deque<detail::BlockedDelivery> batch;
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->template is<detail::WakePusher>()) continue;
    if (!flow) flow = net->pusher_flow(ctx.key());
    if (!flow) continue;
    for (flow->take(batch); !batch.empty(); flow->take(batch)) {
      // Credit is returned as deliveries land, not only after the batch: the batch can be a
      // whole window, and the sender waits for it.
      std::uint32_t delivered = 0;
      for (auto& head : batch) {
        elfin::detail::SendOpAwaitable delivery{self, std::move(head.op)};
        auto done = co_await delivery;
        (void)done;  // a closed or vanished recipient is an answer too: the message is done
        if (head.request) head.request->release_sender();
        if (++delivered == kFlowWindow / 8) flow->delivered(std::exchange(delivered, 0));
      }
      batch.clear();
      flow->delivered(delivered);
    }
  }
}

using NetworkContext = Context<Config, std::uint64_t>;

Task<Result<void, std::string>> manage(NetworkContext ctx, std::shared_ptr<NetworkState> net) {
  bool started = false;
  while (auto envelope = co_await ctx.recv()) {
    if (!started) {
      auto result = net->start(ctx.config());
      if (!result) co_return Err{std::move(result).error()};
      started = true;
    }
    co_await handle(*envelope, [&](const GetNetworkInfo&, ResponseToken<GetNetworkInfo> token) {
      ctx.respond(std::move(token), net->info());
    });
  }
  net->stop("node is shutting down");
  co_return Result<void, std::string>{};
}

Task<Result<void, std::string>> network_exec(NetworkContext ctx) {
  auto& system = ActorCellAccess::cell(ctx)->group().system();
  auto net = NetworkState::of(system);
  const std::uint64_t key = ctx.key();
  if (key == detail::kManagerKey) co_return co_await manage(ctx, std::move(net));
  if (detail::is_direct_key(key)) {
    co_await forward(ctx, std::move(net), static_cast<std::uint16_t>(key), std::string{});
  } else if (detail::is_pusher_key(key)) {
    co_await push(ctx, std::move(net));
  }
  co_return Result<void, std::string>{};
}

std::optional<std::uint16_t> first_connected(const NetworkState& net, const std::vector<std::uint16_t>& nodes) {
  for (auto n : nodes) {
    if (net.connected(n)) return n;
  }
  return std::nullopt;
}

}  // namespace

Blueprint blueprint() {
  metrics::describe("elfin_network_sent_messages_total", "Message and Response frames written to the peer node");
  metrics::describe("elfin_network_received_messages_total", "Message and Response frames read from the peer node");
  metrics::describe("elfin_network_sent_bytes_total", "Bytes written to the peer's connections, handshake included");
  metrics::describe("elfin_network_received_bytes_total", "Bytes read from the peer's connections, handshake included");
  metrics::describe("elfin_network_writes_total",
                    "Writes to the peer's connections, each of all the frames queued then");
  metrics::describe("elfin_network_rtt_seconds", "Round trip of the last Ping on the connection to the peer");
  return Blueprint{[](elfin::detail::GroupInit init) {
    const std::uint16_t self_node = init.addr.node_no();
    MapRouter<std::uint64_t> router{[self_node](const Envelope& e) -> Outcome<std::uint64_t> {
      using O = Outcome<std::uint64_t>;
      if (const auto* wake = e.get<detail::WakePusher>()) return O::Unicast(wake->key);
      if (e.is<GetNetworkInfo>() || e.is<UpdateConfig>()) return O::Unicast(detail::kManagerKey);
      if (e.vtable().is_system) return O::Default();
      const Addr recipient = elfin::detail::EnvelopeAccess::block(e)->recipient;
      if (!recipient.is_null() && recipient.node_no() != self_node) {
        return O::Unicast(detail::kDirectKeyTag | recipient.node_no());
      }
      return O::Discard();
    }};
    auto net = NetworkState::of(*init.system);
    auto group =
        ActorGroup()
            .config<Config>()
            .router(std::move(router))
            // A manager that cannot listen (address in use) tries again, with backoff.
            .restart_policy(RestartPolicy::on_failure(RestartParams{std::chrono::seconds{1}, std::chrono::seconds{30}}))
            .exec(network_exec)
            .instantiate(std::move(init));
    group->set_direct_sink(std::make_shared<detail::ForwarderSink>(std::move(net), std::string{}));
    return group;
  }};
}

Blueprint remote_group(RemoteGroupOptions options) {
  return Blueprint{[options = std::move(options)](elfin::detail::GroupInit init) {
    auto net = NetworkState::of(*init.system);
    const std::string remote_name = options.remote_name.empty() ? init.name : options.remote_name;
    MapRouter<std::uint16_t> router{[net, options](const Envelope& e) -> Outcome<std::uint16_t> {
      using O = Outcome<std::uint16_t>;
      if (e.vtable().is_system) return O::Default();
      if (options.pick || options.routing == Routing::Broadcast) {
        std::vector<std::uint16_t> connected;
        for (auto n : options.nodes) {
          if (net->connected(n)) connected.push_back(n);
        }
        if (options.pick) {
          // This node itself is never "connected", but a pick may choose it (see RemoteGroupOptions).
          auto n = options.pick(e, connected);
          return n ? O::Unicast(*n) : O::Discard();
        }
        return connected.empty() ? O::Discard() : O::Multicast(std::move(connected));
      }
      auto n = first_connected(*net, options.nodes);
      return n ? O::Unicast(*n) : O::Discard();
    }};
    auto group = ActorGroup()
                     .router(std::move(router))
                     // User groups send through it while they stop (a pod unregistering, a last flush to a
                     // peer): it stops with system.network, after them.
                     .stop_with_system_groups()
                     // Room for a window's worth: the sender and the forwarder hand over in batches instead of
                     // waking each other per message. Still bounded (system.mailbox.capacity overrides it).
                     .mailbox_capacity(kForwarderMailboxCapacity)
                     .exec([net, remote_name](Context<NoConfig, std::uint16_t> ctx) {
                       const std::uint16_t node = ctx.key();
                       if (node == net->node_no()) return forward_local(ctx, net, remote_name);
                       return forward(ctx, net, node, remote_name);
                     })
                     .instantiate(std::move(init));
    // A Caller's messages skip the forwarders' mailboxes (direct_sink.hpp).
    group->set_direct_sink(std::make_shared<detail::ForwarderSink>(net, remote_name));
    return group;
  }};
}

void register_blueprints(BlueprintRegistry& registry) {
  std::ignore = registry.add("elfin.network", blueprint(),
                             "system.network: nodes over TCP (listen, discovery, secret); remote groups");
  registry.set_remote_factory([](const RemoteGroupDecl& decl) {
    RemoteGroupOptions options;
    options.nodes = decl.nodes;
    options.routing = decl.routing == "broadcast" ? Routing::Broadcast : Routing::Unicast;
    options.remote_name = decl.remote_name;
    options.pick = decl.selector;
    return remote_group(std::move(options));
  });
}

}  // namespace elfin::network

ELFIN_INSTANTIATE_MESSAGE(elfin::network::GetNetworkInfo);
