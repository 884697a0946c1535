// The KV front's actor. Each client request becomes an Op: its shard, its command (a protocols::kv
// KvCommand), how it reaches the replica (propose, read, stale read) and its deadline. An attempt
// runs as a stream next to the actor (one request to the chosen replica) and reports Attempted;
// the actor then answers the client, or picks the next replica (a NotLeader hint, else the next
// node) and attempts again, at once after a hint, else after `retry_interval` (a Delay). The
// leader each shard answered from is cached, so later requests go straight to it, and named in the
// answer (with the shard count), so the client sends the shard's next requests to its pod; Leaders
// answers the whole cache. An attempt sent to another front counts in elfin_kv_forwarded_total.
//
// A scan is one Op per shard; once every part is in, the entries are merged in key order.
//
// Requests from other fronts (ShardRequest) are served the same way, as a stream each: asked of
// the local partition group, answered with the replica's result; one the replica served as leader
// makes this node the shard's cached leader.
//
// With a manager the front also reads the manager's map every `register_retry` (a notification
// may be lost), and registers again when a newer map no longer lists its pod (the manager found
// it dead: unreachable for longer than its health check). Leave: the front unregisters its pod
// and keeps reading the map (the manager no longer sends it), passing each newer one on to the
// partitions, whose leaders move this pod's replicas off.
#include "actor.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/kv.hpp>
#include <elfin/config_checks.hpp>
#include <elfin/delay.hpp>
#include <elfin/handle.hpp>
#include <elfin/logging.hpp>
#include <elfin/messages.hpp>
#include <elfin/protocols/kv.hpp>
#include <elfin/protocols/kv/command.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>
#include <elfin/stream.hpp>
#include <elfin/telemetry.hpp>

#include "replicas.hpp"

namespace elfin::actors::kv::internal {

namespace pk = protocols::kv;
namespace pr = protocols::raft;
namespace ps = protocols::sharding;

/// An attempt's outcome (from its stream).
struct Attempted {
  std::uint64_t id = 0;
  bool ok = false;
  pk::ShardReply reply;
  pk::KvError error;
  bool lost = false;  ///< the request got no answer at all (the connection or the peer went away)
  ELFIN_MESSAGE(kv_front, Attempted, id, ok, reply, error, lost);
};
/// Time to attempt Op `id` again.
struct RetryDue {
  std::uint64_t id = 0;
  ELFIN_MESSAGE(kv_front, RetryDue, id);
};
/// The manager answered Register (with a manager: [kv] manager = true).
struct Registered {
  bool ok = false;
  protocols::sharding::Assignments assignments;
  std::string error;
  ELFIN_MESSAGE(kv_front, Registered, ok, assignments, error);
};
/// Time to register again.
struct RegisterDue {
  ELFIN_MESSAGE(kv_front, RegisterDue);
};
/// The manager answered Unregister (Leave).
struct Unregistered {
  bool ok = false;
  std::string error;
  ELFIN_MESSAGE(kv_front, Unregistered, ok, error);
};
/// Time to read the manager's map again (a pod that left).
struct RefreshDue {
  ELFIN_MESSAGE(kv_front, RefreshDue);
};
/// The manager's map, read (a pod that left).
struct Refreshed {
  bool ok = false;
  protocols::sharding::Assignments assignments;
  ELFIN_MESSAGE(kv_front, Refreshed, ok, assignments);
};
/// A peer's ShardRequest was answered; `led`: by this node's replica as the shard's leader.
struct Served {
  pk::ShardId shard = 0;
  bool led = false;
  ELFIN_MESSAGE(kv_front, Served, shard, led);
  ELFIN_NO_DUMPING;
};

namespace {

using Clock = std::chrono::steady_clock;
using Outcome = elfin::Result<pk::ShardReply, pk::KvError>;

pk::KvError from_raft(const pr::RaftError& error, pk::ShardId shard) {
  pk::KvError out;
  out.shard = shard;
  out.detail = pr::to_string(error);
  switch (error.kind) {
    case pr::RaftErrorKind::NotLeader:
      out.kind = pk::KvErrorKind::NotLeader;
      out.leader_hint = error.leader_hint;
      break;
    case pr::RaftErrorKind::Dropped:
    case pr::RaftErrorKind::Timeout:
      out.kind = pk::KvErrorKind::Timeout;
      break;
    case pr::RaftErrorKind::ShuttingDown:
    case pr::RaftErrorKind::Unavailable:
      out.kind = pk::KvErrorKind::Unavailable;
      break;
    case pr::RaftErrorKind::BadRequest:
      out.kind = pk::KvErrorKind::BadRequest;
      break;
    case pr::RaftErrorKind::Other:
      out.kind = pk::KvErrorKind::Other;
      break;
  }
  return out;
}

/// Runs `command` on this node's replica of `shard`. `lost` is set when the partition group
/// gave no answer at all.
Task<Outcome> ask_local(FrontContext ctx, pk::ShardId shard, pk::ShardMode mode, pk::Bytes command, bool* lost) {
  if (mode == pk::ShardMode::Propose) {
    auto answer = co_await ctx.request(pr::Propose{shard, std::move(command)});
    if (!answer) {
      *lost = true;
      co_return Err{pk::KvError{pk::KvErrorKind::Unavailable, 0, 0, shard,
                                fmt::format("the partition group: {}", to_string(answer.error()))}};
    }
    if (!*answer) co_return Err{from_raft(answer->error(), shard)};
    co_return pk::ShardReply{answer->value().index, std::move(answer->value().response)};
  }
  auto answer = co_await ctx.request(pr::Read{shard, std::move(command), mode == pk::ShardMode::StaleRead});
  if (!answer) {
    *lost = true;
    co_return Err{pk::KvError{pk::KvErrorKind::Unavailable, 0, 0, shard,
                              fmt::format("the partition group: {}", to_string(answer.error()))}};
  }
  if (!*answer) co_return Err{from_raft(answer->error(), shard)};
  co_return pk::ShardReply{answer->value().index, std::move(answer->value().response)};
}

Task<Attempted> attempt_local(FrontContext ctx, std::uint64_t id, pk::ShardId shard, pk::ShardMode mode,
                              pk::Bytes command) {
  bool lost = false;
  Outcome outcome = co_await ask_local(ctx, shard, mode, std::move(command), &lost);
  Attempted out;
  out.id = id;
  out.lost = lost;
  out.ok = static_cast<bool>(outcome);
  if (outcome) {
    out.reply = std::move(outcome).value();
  } else {
    out.error = std::move(outcome).error();
  }
  co_return out;
}

Task<Attempted> attempt_remote(FrontContext ctx, std::uint64_t id, pk::ShardRequest request) {
  const pk::ShardId shard = request.shard;
  const std::uint16_t node = request.node;
  auto answer = co_await ctx.request(std::move(request));
  Attempted out;
  out.id = id;
  if (!answer) {
    out.lost = true;
    out.error = pk::KvError{pk::KvErrorKind::Unavailable, 0, 0, shard,
                            fmt::format("the front on node {}: {}", node, to_string(answer.error()))};
  } else if (*answer) {
    out.ok = true;
    out.reply = std::move(*answer).value();
  } else {
    out.error = std::move(*answer).error();
  }
  co_return out;
}

Task<Served> serve(FrontContext ctx, pk::ShardRequest request, ResponseToken<pk::ShardRequest> token) {
  bool lost = false;
  Outcome outcome = co_await ask_local(ctx, request.shard, request.mode, std::move(request.command), &lost);
  const bool led = outcome && request.mode != pk::ShardMode::StaleRead;
  std::move(token).respond(std::move(outcome));
  co_return Served{request.shard, led};
}

Task<Unregistered> unregister_pod(FrontContext ctx, ps::PodRef pod) {
  auto answer = co_await ctx.request(ps::Unregister{std::move(pod)});
  Unregistered out;
  if (!answer) {
    out.error = fmt::format("the shard manager: {}", to_string(answer.error()));
  } else if (!*answer && answer->error().kind != ps::ShardingErrorKind::UnknownPod) {
    out.error = fmt::format("the shard manager refused: {}", answer->error().detail);
  } else {
    out.ok = true;  // out of the map (an unknown pod: it already was)
  }
  co_return out;
}

Task<Refreshed> read_assignments(FrontContext ctx) {
  auto answer = co_await ctx.request(ps::GetAssignments{});
  Refreshed out;
  if (answer) {
    out.ok = true;
    out.assignments = std::move(*answer);
  }
  co_return out;
}

Task<Registered> register_pod(FrontContext ctx, ps::Register request) {
  auto answer = co_await ctx.request(std::move(request));
  Registered out;
  if (!answer) {
    out.error = fmt::format("the shard manager: {}", to_string(answer.error()));
  } else if (!*answer) {
    out.error = fmt::format("the shard manager refused: {}", answer->error().detail);
  } else {
    out.ok = true;
    out.assignments = std::move(answer->value().assignments);
  }
  co_return out;
}

using Token = std::variant<ResponseToken<pk::Put>, ResponseToken<pk::Get>, ResponseToken<pk::Delete>,
                           ResponseToken<pk::Cas>, ResponseToken<pk::DeleteIfVersion>>;

/// A request to one shard in flight.
struct Op {
  std::optional<Token> token;  ///< unset for a part of a scan
  std::uint64_t scan = 0;      ///< the scan this is a part of (0: none)
  pk::ShardId shard = 0;
  pk::ShardMode mode = pk::ShardMode::Propose;
  pk::Bytes command;
  bool conditional = false;  ///< Cas, DeleteIfVersion: never retried once it may have applied
  Clock::time_point deadline;
  std::uint16_t target = 0;
  bool unknown = false;     ///< an attempt may have applied the command
  bool whole_scan = false;  ///< a part of a scan over every shard (scan_timeout)
  std::string last_error;
  std::uint32_t attempts = 0;
};

struct ScanJob {
  ResponseToken<pk::Scan> token;
  std::uint32_t limit = 0;
  std::size_t waiting = 0;
  std::vector<pk::KeyValue> entries;
  bool more = false;
  std::optional<pk::KvError> error;
};

class Front {
 public:
  explicit Front(FrontContext ctx) : ctx_(ctx) {}

  Task<> run() {
    self_ = ctx_.addr().node_no();
    // Unique per front incarnation: the node, and when this one started.
    origin_ = (std::uint64_t{self_} << 48U) ^ static_cast<std::uint64_t>(now().time_since_epoch().count());
    // An invalid config (a start without a configurer) leaves the front inert: it only answers
    // ValidateConfig, with the problems, until a valid config arrives. Under a configurer the
    // objection stops the node before it serves anything.
    while (!validate(ctx_.config()).empty()) {
      auto envelope = co_await ctx_.recv();
      if (!envelope) co_return;
      co_await handle(*envelope, this, &Front::on_validate);
    }
    if (ctx_.config().manager) register_now();
    while (auto envelope = co_await ctx_.recv()) co_await dispatch(*envelope);
  }

 private:
  detail::HandleAwaitable dispatch(Envelope& envelope) {
    return handle(envelope, this, &Front::on_put, &Front::on_get, &Front::on_delete, &Front::on_cas,
                  &Front::on_delete_if_version, &Front::on_scan, &Front::on_shard_request, &Front::on_attempted,
                  &Front::on_retry, &Front::on_served, &Front::on_validate, &Front::on_ping, &Front::on_assign,
                  &Front::on_unassign, &Front::on_assignments, &Front::on_registered, &Front::on_register_due,
                  &Front::on_leave, &Front::on_leaders, &Front::on_unregistered, &Front::on_refresh_due,
                  &Front::on_refreshed);
  }

  /// A start or a reload is refused with the problems `validate` finds, each with its file:line.
  void on_validate(const ValidateConfig& request, ResponseToken<ValidateConfig> token) {
    ctx_.respond(std::move(token), config_verdict<Config>(request.config));
  }

  /// The config, checked (an invalid one fails the actor: the restart policy retries it). Under a
  /// configurer an invalid config never arrives here: ValidateConfig refuses it first.
  const Config& config() {
    const Config& config = ctx_.config();
    if (auto errors = validate(config); !errors.empty()) {
      throw std::runtime_error(fmt::format("kv front: invalid config: {}", fmt::join(errors, "; ")));
    }
    return config;
  }

  // --- client requests ----------------------------------------------------------------------

  template <class Request>
  bool refuse_empty_key(const Request& request, ResponseToken<Request>& token) {
    if (!request.key.empty()) return false;
    std::move(token).respond(Err{pk::KvError{pk::KvErrorKind::BadRequest, 0, 0, 0, "an empty key"}});
    return true;
  }

  template <class Request>
  void start_key_op(const Request& request, ResponseToken<Request> token, pk::ShardMode mode, pk::KvCommand command,
                    bool conditional) {
    if (refuse_empty_key(request, token)) return;
    if (mode == pk::ShardMode::Propose) {
      // A request id: every attempt proposes these same bytes, and the state machine applies them
      // once. The client's, when it gave one (it may send the request again to another pod).
      if constexpr (requires { request.origin; }) {
        command.origin = request.origin;
        command.sequence = request.sequence;
      }
      if (command.origin == 0) {
        command.origin = origin_;
        command.sequence = ++sequence_;
      }
    }
    Op op;
    op.token = Token{std::move(token)};
    op.shard = shard_of(request.key, config().shards);
    op.mode = mode;
    op.command = pk::encode(command);
    op.conditional = conditional;
    start(std::move(op));
  }

  void on_put(const pk::Put& put, ResponseToken<pk::Put> token) {
    start_key_op(put, std::move(token), pk::ShardMode::Propose, {pk::KvOp::Put, put.key, put.value, 0, 0}, false);
  }
  void on_get(const pk::Get& get, ResponseToken<pk::Get> token) {
    start_key_op(get, std::move(token), get.stale ? pk::ShardMode::StaleRead : pk::ShardMode::Read,
                 {pk::KvOp::Get, get.key, {}, 0, 0}, false);
  }
  void on_delete(const pk::Delete& del, ResponseToken<pk::Delete> token) {
    start_key_op(del, std::move(token), pk::ShardMode::Propose, {pk::KvOp::Delete, del.key, {}, 0, 0}, false);
  }
  void on_cas(const pk::Cas& cas, ResponseToken<pk::Cas> token) {
    start_key_op(cas, std::move(token), pk::ShardMode::Propose,
                 {pk::KvOp::Cas, cas.key, cas.value, cas.expected_version, 0}, true);
  }
  void on_delete_if_version(const pk::DeleteIfVersion& del, ResponseToken<pk::DeleteIfVersion> token) {
    start_key_op(del, std::move(token), pk::ShardMode::Propose,
                 {pk::KvOp::DeleteIfVersion, del.key, {}, del.expected_version, 0}, true);
  }

  void on_scan(const pk::Scan& scan, ResponseToken<pk::Scan> token) {
    const Config& cfg = config();
    const auto bad = [&](std::string why) {
      std::move(token).respond(
          Err{pk::KvError{pk::KvErrorKind::BadRequest, 0, 0, scan.shard.value_or(0), std::move(why)}});
    };
    if (scan.limit == 0) return bad("a scan's limit must be at least 1");
    if (scan.limit > cfg.max_scan_limit) {
      return bad(fmt::format("a scan's limit must be at most {} (max_scan_limit)", cfg.max_scan_limit));
    }
    if (scan.shard && *scan.shard >= cfg.shards) {
      return bad(fmt::format("shard {} does not exist (there are {})", *scan.shard, cfg.shards));
    }
    const std::uint64_t id = ++next_id_;
    const pk::Bytes command = pk::encode(pk::KvCommand{pk::KvOp::Scan, scan.prefix, {}, 0, scan.limit});
    const pk::ShardId first = scan.shard.value_or(0);
    const pk::ShardId end = scan.shard ? first + 1 : cfg.shards;
    scans_.emplace(id, ScanJob{std::move(token), scan.limit, end - first, {}, false, std::nullopt});
    for (pk::ShardId shard = first; shard < end; ++shard) {
      Op op;
      op.scan = id;
      op.shard = shard;
      op.mode = scan.stale ? pk::ShardMode::StaleRead : pk::ShardMode::Read;
      op.command = command;
      op.whole_scan = !scan.shard;
      start(std::move(op));
    }
  }

  // --- attempts -----------------------------------------------------------------------------

  /// The replicas of `shard`: the assignment's (the owner first) with a manager, else `nodes`.
  [[nodiscard]] const std::vector<std::uint16_t>& replicas(pk::ShardId shard) const {
    if (ctx_.config().manager) return placed_.of(static_cast<std::uint32_t>(shard));
    return ctx_.config().nodes;
  }

  [[nodiscard]] bool is_replica(pk::ShardId shard, std::uint16_t node) const {
    const auto& nodes = replicas(shard);
    return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
  }

  /// Where to send the first attempt: a stale read to this node's replica; otherwise the cached
  /// leader, else this node, else the first replica (the owner, with a manager). 0: the shard has
  /// no replica now (placed nowhere, or no assignment yet): retried later.
  [[nodiscard]] std::uint16_t first_target(const Op& op) const {
    if (op.mode != pk::ShardMode::StaleRead) {
      if (auto it = leaders_.find(op.shard); it != leaders_.end() && is_replica(op.shard, it->second)) {
        return it->second;
      }
    }
    const auto& nodes = replicas(op.shard);
    if (nodes.empty()) return 0;
    if (!ctx_.config().manager || op.mode == pk::ShardMode::StaleRead) {
      if (is_replica(op.shard, self_)) return self_;
    }
    return nodes.front();
  }

  [[nodiscard]] std::uint16_t next_node(pk::ShardId shard, std::uint16_t after) const {
    const auto& nodes = replicas(shard);
    if (nodes.empty()) return 0;
    auto it = std::find(nodes.begin(), nodes.end(), after);
    if (it == nodes.end() || std::next(it) == nodes.end()) return nodes.front();
    return *std::next(it);
  }

  void start(Op op) {
    const Config& cfg = config();
    op.deadline = now() + (op.whole_scan ? cfg.scan_timeout : cfg.request_timeout);
    op.target = first_target(op);
    const std::uint64_t id = ++next_id_;
    ops_.emplace(id, std::move(op));
    attempt(id);
  }

  void attempt(std::uint64_t id) {
    Op& op = ops_.at(id);
    ++op.attempts;
    if (op.target == 0 || !is_replica(op.shard, op.target)) op.target = first_target(op);
    if (op.target == 0) {
      // Placed nowhere right now (the manager unassigns before it assigns): wait for the map.
      op.last_error = ctx_.config().manager && placed_.epoch() == 0
                          ? std::string(
                                "no assignment from the shard manager yet (is the manager node running and "
                                "reachable?)")
                          : fmt::format("shard {} has no replica in the assignment", op.shard);
      retry_later(ops_.find(id));
      return;
    }
    if (op.target == self_) {
      ctx_.attach(Stream::once(attempt_local(ctx_, id, op.shard, op.mode, op.command)));
    } else {
      metrics::increment_counter("elfin_kv_forwarded_total");
      ctx_.attach(Stream::once(attempt_remote(ctx_, id, pk::ShardRequest{op.target, op.shard, op.mode, op.command})));
    }
  }

  void on_attempted(const Attempted& attempted) {
    auto it = ops_.find(attempted.id);
    if (it == ops_.end()) return;
    Op& op = it->second;
    if (attempted.ok) {
      if (op.mode != pk::ShardMode::StaleRead) leaders_[op.shard] = op.target;
      finish(it, attempted.reply);
      return;
    }
    const pk::KvError& error = attempted.error;
    op.last_error = fmt::format("node {}: {}", op.target, pk::to_string(error));
    const bool writes = op.mode == pk::ShardMode::Propose;
    if (attempted.lost || error.kind == pk::KvErrorKind::Timeout) {
      // The command may have been applied.
      op.unknown = op.unknown || writes;
      if (op.conditional && writes) {
        fail(it, pk::KvError{
                     pk::KvErrorKind::Timeout, 0, 0, op.shard,
                     fmt::format("the outcome is unknown ({}); it may or may not have been applied", op.last_error)});
        return;
      }
      if (attempted.lost) {
        leaders_.erase(op.shard);
        op.target = next_node(op.shard, op.target);
      } else if (error.leader_hint != 0 && is_replica(op.shard, static_cast<std::uint16_t>(error.leader_hint))) {
        op.target = static_cast<std::uint16_t>(error.leader_hint);
      }
      retry_later(it);
      return;
    }
    switch (error.kind) {
      case pk::KvErrorKind::NotLeader: {
        const auto hint = static_cast<std::uint16_t>(error.leader_hint);
        if (hint != 0 && hint != op.target && is_replica(op.shard, hint)) {
          op.target = hint;
          leaders_[op.shard] = hint;
          if (now() >= op.deadline) {
            retry_later(it);  // answers the deadline
          } else {
            attempt(it->first);
          }
          return;
        }
        if (hint == op.target) {
          // The replica leads but cannot serve yet (a new leader confirms reads only once it
          // committed in its term): ask it again.
          retry_later(it);
          return;
        }
        leaders_.erase(op.shard);
        op.target = next_node(op.shard, op.target);
        retry_later(it);
        return;
      }
      case pk::KvErrorKind::Unavailable:
        op.target = next_node(op.shard, op.target);
        retry_later(it);
        return;
      default:
        fail(it, error);
        return;
    }
  }

  void retry_later(std::map<std::uint64_t, Op>::iterator it) {
    Op& op = it->second;
    const auto interval = ctx_.config().retry_interval;
    if (now() + interval >= op.deadline) {
      const auto kind = op.unknown ? pk::KvErrorKind::Timeout : pk::KvErrorKind::Unavailable;
      fail(it,
           pk::KvError{kind, 0, 0, op.shard,
                       fmt::format("no answer from shard {} within {} ms ({} attempts{}); last: {}", op.shard,
                                   (op.whole_scan ? ctx_.config().scan_timeout : ctx_.config().request_timeout).count(),
                                   op.attempts, op.unknown ? ", a write may have been applied" : "", op.last_error)});
      return;
    }
    // Backing off with each attempt: a scan's 1024 parts waiting for their elections would
    // otherwise ask 20 times a second each.
    ctx_.attach(Delay(interval * std::min<std::uint32_t>(op.attempts, 8), RetryDue{it->first}));
  }

  void on_retry(const RetryDue& due) {
    if (ops_.contains(due.id)) attempt(due.id);
  }

  // --- answers ------------------------------------------------------------------------------

  void fail(std::map<std::uint64_t, Op>::iterator it, pk::KvError error) {
    Op op = std::move(it->second);
    ops_.erase(it);
    if (!op.token) {
      scan_part(op.scan, std::move(error));
      return;
    }
    std::visit([&](auto& token) { std::move(token).respond(Err{std::move(error)}); }, *op.token);
  }

  void finish(std::map<std::uint64_t, Op>::iterator it, const pk::ShardReply& reply) {
    Op op = std::move(it->second);
    ops_.erase(it);
    pk::KvResponse response;
    try {
      response = pk::decode_kv_response(reply.response);
    } catch (const std::exception& e) {
      pk::KvError error{pk::KvErrorKind::Other, 0, 0, op.shard, fmt::format("an undecodable response: {}", e.what())};
      if (!op.token) {
        scan_part(op.scan, std::move(error));
      } else {
        std::visit([&](auto& token) { std::move(token).respond(Err{std::move(error)}); }, *op.token);
      }
      return;
    }
    if (!op.token) {
      scan_part(op.scan, std::move(response));
      return;
    }
    // The replica that answered a linearizable request led the shard: the client sends the
    // shard's next requests to its node.
    const std::uint16_t leader = op.mode == pk::ShardMode::StaleRead ? 0 : op.target;
    const pk::ShardId shards = ctx_.config().shards;
    const auto mismatch = [&] {
      return pk::KvError{pk::KvErrorKind::VersionMismatch, leader, response.version, op.shard,
                         response.found ? fmt::format("the key's version is {}", response.version)
                                        : std::string("the key does not exist")};
    };
    std::visit(
        [&](auto& token) {
          using T = std::decay_t<decltype(token)>;
          if constexpr (std::is_same_v<T, ResponseToken<pk::Put>>) {
            std::move(token).respond(pk::Written{response.version, leader, shards});
          } else if constexpr (std::is_same_v<T, ResponseToken<pk::Get>>) {
            std::move(token).respond(
                pk::Found{response.found, std::move(response.value), response.version, leader, shards});
          } else if constexpr (std::is_same_v<T, ResponseToken<pk::Delete>>) {
            std::move(token).respond(pk::Deleted{response.ok, leader, shards});
          } else if constexpr (std::is_same_v<T, ResponseToken<pk::Cas>>) {
            if (response.ok) {
              std::move(token).respond(pk::Written{response.version, leader, shards});
            } else {
              std::move(token).respond(Err{mismatch()});
            }
          } else {
            if (response.ok) {
              std::move(token).respond(pk::Deleted{response.version != 0, leader, shards});
            } else {
              std::move(token).respond(Err{mismatch()});
            }
          }
        },
        *op.token);
  }

  void scan_part(std::uint64_t id, std::variant<pk::KvResponse, pk::KvError> part) {
    auto it = scans_.find(id);
    if (it == scans_.end()) return;
    ScanJob& job = it->second;
    if (auto* response = std::get_if<pk::KvResponse>(&part)) {
      job.more = job.more || response->more;
      for (auto& entry : response->entries) job.entries.push_back(std::move(entry));
    } else if (!job.error) {
      job.error = std::get<pk::KvError>(std::move(part));
    }
    if (--job.waiting != 0) return;
    ScanJob done = std::move(job);
    scans_.erase(it);
    if (done.error) {
      std::move(done.token).respond(Err{std::move(*done.error)});
      return;
    }
    // Shards hold disjoint keys: sorting the union gives the key order across shards.
    std::sort(done.entries.begin(), done.entries.end(),
              [](const pk::KeyValue& a, const pk::KeyValue& b) { return a.key < b.key; });
    if (done.entries.size() > done.limit) {
      done.entries.resize(done.limit);
      done.more = true;
    }
    std::move(done.token).respond(pk::Scanned{std::move(done.entries), done.more});
  }

  /// The system's clock (System::now): the steady clock, or virtual time in a simulated cluster,
  /// where a request's deadline then passes with the cluster's time, as its retries' delays do.
  [[nodiscard]] Clock::time_point now() const { return ctx_.now(); }

  // --- other fronts -------------------------------------------------------------------------

  void on_shard_request(const pk::ShardRequest& request, ResponseToken<pk::ShardRequest> token) {
    ctx_.attach(Stream::once(serve(ctx_, request, std::move(token))));
  }

  /// The leader cache, for a client's first routing table.
  void on_leaders(const pk::Leaders&, ResponseToken<pk::Leaders> token) {
    pk::LeaderTable table;
    table.shards = config().shards;
    table.leaders.assign(table.shards, 0);
    for (const auto& [shard, node] : leaders_) {
      if (shard < table.shards) table.leaders[shard] = node;
    }
    std::move(token).respond(std::move(table));
  }

  /// A peer's request this node's replica served as leader: the requests clients send here once
  /// they learnt that this node leads go to the local replica at once.
  void on_served(const Served& served) {
    if (served.led) leaders_[served.shard] = self_;
  }

  // --- the shard manager ([kv] manager = true) ----------------------------------------------

  /// This pod as the manager knows it: named after its node, a new incarnation per start.
  [[nodiscard]] ps::PodRef pod() const { return ps::PodRef{fmt::format("kv-pod-{}", self_), origin_}; }

  /// Registers (a stream: the manager pings this front before it answers).
  void register_now() {
    ps::Register request;
    request.pod = pod();
    request.endpoint = ctx_.addr().raw();
    request.version = "1";
    request.shard_function = fmt::format("jump-xxh64/1:{}", config().shards);
    ctx_.attach(Stream::once(register_pod(ctx_, std::move(request))));
  }

  void on_registered(const Registered& registered) {
    if (!registered.ok) {
      log::warn("kv front: registering with the shard manager failed: {}", registered.error);
      ctx_.attach(Delay(ctx_.config().register_retry, RegisterDue{}));
      return;
    }
    log::info("kv front: registered with the shard manager as {}", pod());
    registered_ = true;
    registered_epoch_ = registered.assignments.epoch;
    take(registered.assignments);
    start_refreshing();
  }

  void on_register_due(const RegisterDue&) {
    if (!left_) register_now();
  }

  // --- leaving (Leave) ------------------------------------------------------------------------

  void on_leave(const pk::Leave&, ResponseToken<pk::Leave> token) {
    if (!ctx_.config().manager) {
      std::move(token).respond(Err{pk::KvError{pk::KvErrorKind::BadRequest, 0, 0, 0,
                                               "this pod has no shard manager: every pod holds every shard"}});
      return;
    }
    if (left_) {
      std::move(token).respond(pk::Left{placed_.epoch()});
      return;
    }
    leaving_.push_back(std::move(token));
    if (leaving_.size() == 1) ctx_.attach(Stream::once(unregister_pod(ctx_, pod())));
  }

  void on_unregistered(const Unregistered& unregistered) {
    if (!unregistered.ok) {
      log::warn("kv front: leaving: {}", unregistered.error);
      for (auto& token : leaving_) {
        std::move(token).respond(Err{pk::KvError{pk::KvErrorKind::Unavailable, 0, 0, 0, unregistered.error}});
      }
      leaving_.clear();
      return;
    }
    log::info("kv front: {} left the shard manager's map; its replicas move to the other pods", pod());
    left_ = true;
    for (auto& token : leaving_) std::move(token).respond(pk::Left{placed_.epoch()});
    leaving_.clear();
    start_refreshing();
  }

  /// Reads the manager's map every `register_retry` from now on.
  void start_refreshing() {
    if (refreshing_) return;
    refreshing_ = true;
    ctx_.attach(Delay(ctx_.config().register_retry, RefreshDue{}));
  }
  void on_refresh_due(const RefreshDue&) { ctx_.attach(Stream::once(read_assignments(ctx_))); }
  void on_refreshed(const Refreshed& refreshed) {
    if (refreshed.ok) on_map(refreshed.assignments);
    ctx_.attach(Delay(ctx_.config().register_retry, RefreshDue{}));
  }

  void on_ping(const ps::PingPod&, ResponseToken<ps::PingPod> token) { std::move(token).respond(pod()); }

  /// The assignment is the target: the partitions' leaders move their membership toward it
  /// (raft.Placement), whatever order the manager's commands arrive in, so these only check who
  /// they are for.
  template <class Command>
  void acknowledge(const Command& command, ResponseToken<Command> token) {
    if (command.pod != pod()) {
      std::move(token).respond(Err{ps::ShardingError{
          ps::ShardingErrorKind::WrongIncarnation, fmt::format("this is {}, not {}", pod(), command.pod), {}}});
      return;
    }
    std::move(token).respond(Unit{});
  }
  void on_assign(const ps::AssignShards& assign, ResponseToken<ps::AssignShards> token) {
    acknowledge(assign, std::move(token));
  }
  void on_unassign(const ps::UnassignShards& unassign, ResponseToken<ps::UnassignShards> token) {
    acknowledge(unassign, std::move(token));
  }

  void on_assignments(const ps::AssignmentsChanged& changed) { on_map(changed.assignments); }

  /// A map from the manager: routes by it; a newer one that no longer lists this pod (the
  /// manager found it dead) makes the front register again, unless the pod left.
  void on_map(const ps::Assignments& map) {
    take(map);
    if (!registered_ || left_ || map.epoch <= registered_epoch_) return;
    const ps::PodRef self = pod();
    if (std::any_of(map.pods.begin(), map.pods.end(), [&](const ps::PodEntry& e) { return e.pod == self; })) return;
    log::warn("kv front: the shard manager's map at epoch {} no longer lists {}; registering again", map.epoch, self);
    registered_ = false;
    register_now();
  }

  /// A newer assignment: routes by it from now on, and tells this node's partition group.
  void take(const ps::Assignments& assignments) {
    if (assignments.epoch <= placed_.epoch()) return;
    placed_ = ShardReplicas(assignments);
    // Unbounded: the table is rare and must not wait behind a full mailbox.
    if (auto sent = ctx_.unbounded_send(placed_.placement()); !sent) {
      log::warn("kv front: the placement table (epoch {}) did not reach the partitions", placed_.epoch());
    }
  }

  FrontContext ctx_;
  std::uint16_t self_ = 0;
  std::uint64_t origin_ = 0;    ///< this incarnation's request ids' origin
  std::uint64_t sequence_ = 0;  ///< the last write's request number
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, Op> ops_;
  std::map<std::uint64_t, ScanJob> scans_;
  std::unordered_map<pk::ShardId, std::uint16_t> leaders_;  ///< the replica that last answered as leader
  ShardReplicas placed_;                                    ///< with a manager: the newest assignment's
  bool registered_ = false;                                 ///< in the manager's map, as far as it knows
  std::uint64_t registered_epoch_ = 0;                      ///< the map's epoch when it registered
  bool refreshing_ = false;                                 ///< reading the map every register_retry
  bool left_ = false;                                       ///< Leave: out of the manager's map
  std::vector<ResponseToken<pk::Leave>> leaving_;           ///< Leave requests waiting for the manager
};

}  // namespace

Task<> exec(FrontContext ctx) {
  Front front(ctx);
  co_await front.run();
}

}  // namespace elfin::actors::kv::internal
