// Broadcast to every pod: a message, or a request with each pod's answer, to a named group on
// every pod the assignment map lists (this pod included), whatever shards they own.
//
//   auto answers = co_await elfin::actors::sharding::broadcast_request(ctx, GetLoad{},
//                      {.cache = cache, .group = "inventory"});
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
// Pods are asked one after the other. An actor's request has no deadline in elfin, so a pod that
// received the request and never answers (its actor alive but stuck) holds the broadcast until it
// answers, drops the request, or its connection is lost (which fails the request).
//
// Thread safety: runs inside the calling actor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/sharding/assignment_cache.hpp>
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
};

enum class BroadcastErrorKind : std::uint8_t {
  Unreachable,   ///< the pod's sharding actor could not be asked (its node is not connected)
  NoGroup,       ///< the pod has no group registered under that name
  NotDelivered,  ///< the group took no actor for it (its router refused it, or the node went away)
  Failed,        ///< the group's actor failed or finished before answering
  Ignored,       ///< the group's actor dropped the request without answering
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
  }
  return "error";
}

/// The address of `group` on `pod`'s node.
template <class C, class K>
Task<Result<Addr, BroadcastError>> locate_group(Context<C, K> ctx, AssignmentCache& cache,
                                                const protocols::sharding::PodEntry& pod, const std::string& group) {
  if (pod.pod == cache.self()) {
    if (const auto local = cache.group(group); local != 0) co_return Addr{local};
    co_return Err{BroadcastError{BroadcastErrorKind::NoGroup, fmt::format("no group `{}` on this pod", group)}};
  }
  if (const auto known = cache.remote_group(pod.pod, group); known != 0) co_return Addr{known};
  auto answer = co_await ctx.request_to(Addr{pod.endpoint}, protocols::sharding::LocateGroup{group});
  if (!answer) {
    if (answer.error().reached_no_one()) cache.note_unreachable(pod.pod);
    co_return Err{BroadcastError{BroadcastErrorKind::Unreachable, std::string(to_string(answer.error()))}};
  }
  if (*answer == 0) {
    co_return Err{BroadcastError{BroadcastErrorKind::NoGroup, fmt::format("no group `{}` on {}", group, pod.pod)}};
  }
  cache.remember_remote_group(pod.pod, group, *answer);
  co_return Addr{*answer};
}

[[nodiscard]] inline BroadcastError undelivered(const RequestError& error) {
  if (error == RequestError::Ignored) return {BroadcastErrorKind::Ignored, std::string(to_string(error))};
  if (error.reached_no_one()) return {BroadcastErrorKind::NotDelivered, std::string(to_string(error))};
  return {BroadcastErrorKind::Failed, std::string(to_string(error))};
}

}  // namespace detail

/// `request` to `options.group` on every pod of the map; one answer per pod.
template <class C, class K, Request R>
Task<std::vector<PodAnswer<typename R::Response>>> broadcast_request(Context<C, K> ctx, R request,
                                                                     BroadcastOptions options) {
  std::vector<PodAnswer<typename R::Response>> answers;
  for (auto& pod : options.cache->pods()) {
    auto where = co_await detail::locate_group(ctx, *options.cache, pod, options.group);
    if (!where) {
      answers.push_back({std::move(pod), Err{std::move(where).error()}});
      continue;
    }
    auto answer = co_await ctx.request_to(*where, request);
    if (!answer && answer.error().reached_no_one() && pod.pod != options.cache->self()) {
      options.cache->note_unreachable(pod.pod);
    }
    if (answer) {
      answers.push_back({std::move(pod), std::move(answer).value()});
    } else {
      answers.push_back({std::move(pod), Err{detail::undelivered(answer.error())}});
    }
  }
  co_return answers;
}

/// `message` to `options.group` on every pod of the map (waiting while a mailbox is full); per
/// pod whether it was delivered.
template <class C, class K, Message M>
Task<std::vector<PodAnswer<Unit>>> broadcast(Context<C, K> ctx, M message, BroadcastOptions options) {
  std::vector<PodAnswer<Unit>> results;
  for (auto& pod : options.cache->pods()) {
    auto where = co_await detail::locate_group(ctx, *options.cache, pod, options.group);
    if (!where) {
      results.push_back({std::move(pod), Err{std::move(where).error()}});
      continue;
    }
    auto sent = co_await ctx.send_to(*where, message);
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
