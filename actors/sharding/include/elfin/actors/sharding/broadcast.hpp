// Broadcast to every pod: a message, or a request with each pod's answer, to a named group on
// every pod the assignment map lists (this pod included), whatever shards they own.
//
//   auto answers = co_await elfin::actors::sharding::broadcast_request(ctx, GetLoad{},
//                      {.cache = cache, .group = "inventory", .pod_timeout = 2s});
//   for (const auto& [pod, answer] : answers) {
//     if (answer) total += answer->items;
//     else log::warn("{}: {}", pod.pod, answer.error());   // typed: which pod, and why
//   }
//
// The target group is found by name on each pod's node: a group registers its address in its
// pod's AssignmentCache (`cache->add_group(ctx.group(), ctx.group_addr().raw())` at its actor's
// start; entity groups and singletons do it themselves), and the sender asks each other pod's
// sharding actor once (LocateGroup), remembering the answer for that pod's incarnation. The
// message then goes to that address, through the network battery when the pod is on another
// node, exactly as any send to an address there.
//
// One answer per pod, in the map's pod order: the group's answer, or a BroadcastError saying why
// that pod has none (its node is not connected, it has no such group, the group refused the
// request, its actor failed or ignored it) — one pod that does not answer never hides the others'
// answers. A pod found unreachable is reported to the manager like an unreachable owner is.
//
// Pods are asked all at once, and each has until `pod_timeout` (from the broadcast's start) to
// answer: a pod whose group holds the request without answering (its actor alive but stuck, its
// process stopped with SIGSTOP) gives TimedOut then, and never holds up the other pods' answers.
// The group's address is found the same way, all pods at once, within the same deadline.
//
// Thread safety: runs inside the calling actor.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/sharding/assignment_cache.hpp>
#include <elfin/actors/sharding/timed_requests.hpp>
#include <elfin/addr.hpp>
#include <elfin/context.hpp>
#include <elfin/protocols/sharding/entity_protocol.hpp>
#include <elfin/protocols/sharding/pod_ref.hpp>
#include <elfin/request.hpp>
#include <elfin/result.hpp>
#include <elfin/task.hpp>

namespace elfin::actors::sharding {

struct BroadcastOptions {
  /// This pod's cache: it lists the pods and holds what LocateGroup answered.
  std::shared_ptr<AssignmentCache> cache;
  /// The target group's name on every pod's node.
  std::string group;
  /// How long each pod has to answer (its group located and the request answered), counted from
  /// the broadcast's start; every pod is asked at once.
  std::chrono::milliseconds pod_timeout{10'000};
};

enum class BroadcastErrorKind : std::uint8_t {
  Unreachable,   ///< the pod's sharding actor could not be asked (its node is not connected)
  NoGroup,       ///< the pod has no group registered under that name
  NotDelivered,  ///< the group took no actor for it (its router refused it, or the node went away)
  Failed,        ///< the group's actor failed or finished before answering
  Ignored,       ///< the group's actor dropped the request without answering
  TimedOut,      ///< no answer within pod_timeout (the request may still be handled)
};

struct BroadcastError {
  BroadcastErrorKind kind = BroadcastErrorKind::Failed;
  std::string detail;
};

/// One pod's part of a broadcast.
template <class T>
struct PodAnswer {
  protocols::sharding::PodEntry pod;
  Result<T, BroadcastError> answer;
};

namespace detail {

[[nodiscard]] inline std::string_view to_string(BroadcastErrorKind kind) {
  switch (kind) {
    case BroadcastErrorKind::Unreachable:
      return "unreachable";
    case BroadcastErrorKind::NoGroup:
      return "no such group";
    case BroadcastErrorKind::NotDelivered:
      return "not delivered";
    case BroadcastErrorKind::Failed:
      return "failed";
    case BroadcastErrorKind::Ignored:
      return "ignored";
    case BroadcastErrorKind::TimedOut:
      return "timed out";
  }
  return "error";
}

[[nodiscard]] inline BroadcastError undelivered(const RequestError& error) {
  if (error == RequestError::Ignored) return {BroadcastErrorKind::Ignored, std::string(to_string(error))};
  if (error == RequestError::TimedOut) return {BroadcastErrorKind::TimedOut, std::string(to_string(error))};
  if (error.reached_no_one()) return {BroadcastErrorKind::NotDelivered, std::string(to_string(error))};
  return {BroadcastErrorKind::Failed, std::string(to_string(error))};
}

/// The address of `group` on every pod's node (this pod's from the cache, others' remembered or
/// asked of their sharding actors, all at once, by `deadline`).
template <class C, class K>
Task<std::vector<Result<Addr, BroadcastError>>> locate_groups(Context<C, K> ctx, AssignmentCache& cache,
                                                              const std::vector<protocols::sharding::PodEntry>& pods,
                                                              const std::string& group,
                                                              std::chrono::steady_clock::time_point deadline) {
  std::vector<Result<Addr, BroadcastError>> where(pods.size(), Err{BroadcastError{}});
  std::vector<std::pair<Addr, protocols::sharding::LocateGroup>> asks;
  std::vector<std::size_t> asked;  // the pod each ask is for
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const auto& pod = pods[i];
    if (pod.pod == cache.self()) {
      if (const auto local = cache.group(group); local != 0) {
        where[i] = Addr{local};
      } else {
        where[i] = Err{BroadcastError{BroadcastErrorKind::NoGroup, fmt::format("no group `{}` on this pod", group)}};
      }
    } else if (const auto known = cache.remote_group(pod.pod, group); known != 0) {
      where[i] = Addr{known};
    } else if (pod.endpoint == 0) {
      where[i] = Err{BroadcastError{BroadcastErrorKind::Unreachable, "the pod has no endpoint"}};
    } else {
      asks.emplace_back(Addr{pod.endpoint}, protocols::sharding::LocateGroup{group});
      asked.push_back(i);
    }
  }
  if (asks.empty()) co_return where;
  auto answers = co_await timed_requests(ctx, std::move(asks), deadline);
  for (std::size_t n = 0; n < answers.size(); ++n) {
    const auto& pod = pods[asked[n]];
    auto& answer = answers[n];
    if (!answer) {
      if (answer.error().reached_no_one()) cache.note_unreachable(pod.pod);
      const auto kind =
          answer.error() == RequestError::TimedOut ? BroadcastErrorKind::TimedOut : BroadcastErrorKind::Unreachable;
      where[asked[n]] = Err{BroadcastError{kind, std::string(to_string(answer.error()))}};
    } else if (*answer == 0) {
      where[asked[n]] =
          Err{BroadcastError{BroadcastErrorKind::NoGroup, fmt::format("no group `{}` on {}", group, pod.pod)}};
    } else {
      cache.remember_remote_group(pod.pod, group, *answer);
      where[asked[n]] = Addr{*answer};
    }
  }
  co_return where;
}

}  // namespace detail

/// `request` to `options.group` on every pod of the map, all at once; one answer per pod, each by
/// `options.pod_timeout` at the latest.
template <class C, class K, Request R>
Task<std::vector<PodAnswer<typename R::Response>>> broadcast_request(Context<C, K> ctx, R request,
                                                                     BroadcastOptions options) {
  const auto deadline = std::chrono::steady_clock::now() + options.pod_timeout;
  auto pods = options.cache->pods();
  auto where = co_await detail::locate_groups(ctx, *options.cache, pods, options.group, deadline);
  std::vector<std::pair<Addr, R>> asks;
  std::vector<std::size_t> asked;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    if (!where[i]) continue;
    asks.emplace_back(*where[i], request);
    asked.push_back(i);
  }
  auto answers = co_await timed_requests(ctx, std::move(asks), deadline);
  std::vector<std::optional<Result<typename R::Response, RequestError>>> by_pod(pods.size());
  for (std::size_t n = 0; n < answers.size(); ++n) by_pod[asked[n]] = std::move(answers[n]);
  std::vector<PodAnswer<typename R::Response>> out;
  out.reserve(pods.size());
  for (std::size_t i = 0; i < pods.size(); ++i) {
    auto& pod = pods[i];
    if (!where[i]) {
      out.push_back({std::move(pod), Err{std::move(where[i]).error()}});
      continue;
    }
    auto& answer = *by_pod[i];
    if (!answer && answer.error().reached_no_one() && pod.pod != options.cache->self()) {
      options.cache->note_unreachable(pod.pod);
    }
    if (answer) {
      out.push_back({std::move(pod), std::move(answer).value()});
    } else {
      out.push_back({std::move(pod), Err{detail::undelivered(answer.error())}});
    }
  }
  co_return out;
}

/// `message` to `options.group` on every pod of the map (waiting while a mailbox is full); per
/// pod whether it was delivered. The groups are located all at once, within `pod_timeout`.
template <class C, class K, Message M>
Task<std::vector<PodAnswer<Unit>>> broadcast(Context<C, K> ctx, M message, BroadcastOptions options) {
  const auto deadline = std::chrono::steady_clock::now() + options.pod_timeout;
  auto pods = options.cache->pods();
  auto where = co_await detail::locate_groups(ctx, *options.cache, pods, options.group, deadline);
  std::vector<PodAnswer<Unit>> results;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    auto& pod = pods[i];
    if (!where[i]) {
      results.push_back({std::move(pod), Err{std::move(where[i]).error()}});
      continue;
    }
    auto sent = co_await ctx.send_to(*where[i], message);
    if (sent) {
      results.push_back({std::move(pod), Unit{}});
    } else {
      results.push_back(
          {std::move(pod), Err{BroadcastError{BroadcastErrorKind::NotDelivered, fmt::format("{}", sent.error())}}});
    }
  }
  co_return results;
}

}  // namespace elfin::actors::sharding

template <>
struct fmt::formatter<elfin::actors::sharding::BroadcastError> : fmt::formatter<std::string_view> {
  auto format(const elfin::actors::sharding::BroadcastError& e, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "{}: {}", elfin::actors::sharding::detail::to_string(e.kind), e.detail);
  }
};
