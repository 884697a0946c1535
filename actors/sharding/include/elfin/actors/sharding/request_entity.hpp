// request_entity: a request to an entity that keeps trying until the shard's owner answers or
// `send_timeout` passed, then gives a typed error. An attempt fails when no pod is known to own
// the shard, when the pod it reached does not own it (its entity router refuses it; one whose
// entity is stopping holds it instead, up to `max_held`, and hands it to the next incarnation),
// or when the owner's node is unreachable; the next attempt waits a backoff that doubles from
// 10 ms to 200 ms (Shardcake retries every 100-200 ms), and sees the cache as it is by then. A
// refused attempt reached no entity, so trying it again can never make an entity handle the
// request twice: across a handoff the request is handled once, by the old owner before it
// stopped or by the new one.
//
// Every wait ends by the deadline: an owner that took the request and holds it without answering
// gives Unanswered when `send_timeout` ends (the request may have been handled). An entity group
// that takes the request but drops it unanswered — a message none of its entities is for (an
// unknown entity type), or an entity that dropped its token — gives Refused at once, not a retry.
//
// Owner hints: with `shard` (the entity's shard) and `group` (the entity group's name on every
// pod) set, a refused attempt is followed by a ShardOwner question sent the same way, which the
// pod that refused answers with a typed NotOwner (its epoch and owner hint). The next attempt
// then goes straight to the hinted owner's entity group (its address asked of the owner's
// sharding actor, LocateGroup) without a backoff, however stale this pod's cache is; a hint that
// names the pod just tried, or none, falls back to the backoff (as does a third hint in a row). The last NotOwner is
// kept in the error. (A router can only refuse a message, untyped; the typed answer comes from the question.)
//
//   auto state = co_await elfin::actors::sharding::request_entity(ctx, GetCart{"cart-7"},
//                    {.to = carts_front, .pod = Addr{cache->endpoint()}, .send_timeout = 10s});
//   if (!state) log::warn("{}", state.error());   // EntitySendError: NoOwner after N attempts, ...
//   // following owner hints: add .shard = function.shard_of("cart-7"), .group = "carts.local"
//
// Order: requests one sender makes one after the other reach the entity in that order while its
// shard stays put; an attempt that failed is made again, so a retried request may be handled
// after one the sender started later only if the sender does not wait for answers.
//
// Thread safety: runs inside the calling actor.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include <elfin/actors/sharding/timed_requests.hpp>
#include <elfin/addr.hpp>
#include <elfin/context.hpp>
#include <elfin/protocols/sharding/entity_protocol.hpp>
#include <elfin/protocols/sharding/sharding_error.hpp>
#include <elfin/request.hpp>
#include <elfin/result.hpp>
#include <elfin/task.hpp>
#include <elfin/telemetry.hpp>

namespace elfin::actors::sharding {

enum class EntitySendErrorKind : std::uint8_t {
  NoOwner,     ///< no attempt reached an owner that took the request before send_timeout ended
  Unanswered,  ///< a pod took the request and gave no answer before send_timeout (it may have been handled)
  Refused,     ///< the entity group took the request and dropped it unanswered (no entity is for it)
};

struct EntitySendError {
  EntitySendErrorKind kind = EntitySendErrorKind::NoOwner;
  std::uint32_t attempts = 0;
  std::string last;  ///< why the last attempt failed
  /// The last typed refusal (with `shard` and `group` set): the refusing pod's epoch and hint.
  std::optional<protocols::sharding::NotOwner> not_owner;
};

struct EntitySendOptions {
  Addr to;   ///< the entity group (or the group fronting it on every pod node); null: routed
  Addr pod;  ///< this pod's sharding actor (AssignmentCache::endpoint), which times the backoffs
  std::chrono::milliseconds send_timeout{10'000};
  std::chrono::milliseconds min_backoff{10};
  std::chrono::milliseconds max_backoff{200};
  /// The entity's shard; with `group`, refusals are asked about and owner hints followed.
  std::optional<std::uint32_t> shard;
  /// The entity group's name on every pod's node (where a hint leads).
  std::string group;
};

template <class C, class K, Request R>
Task<Result<typename R::Response, EntitySendError>> request_entity(Context<C, K> ctx, R request,
                                                                   EntitySendOptions options) {
  namespace ps = protocols::sharding;
  const auto deadline = std::chrono::steady_clock::now() + options.send_timeout;
  auto backoff = options.min_backoff;
  EntitySendError error;
  Addr target = options.to;  // the owner's entity group after a hint, else `to`
  std::uint32_t hops = 0;    // hints followed since the last backoff
  while (true) {
    ++error.attempts;
    auto answer = co_await timed_request(ctx, target, request, deadline);
    if (answer) co_return std::move(answer).value();
    error.last = std::string(to_string(answer.error()));
    if (answer.error() == RequestError::TimedOut) {
      error.kind = EntitySendErrorKind::Unanswered;
      break;
    }
    if (answer.error() == RequestError::Ignored) {
      error.kind = EntitySendErrorKind::Refused;
      break;
    }
    bool hinted = false;
    if (options.shard && !options.group.empty()) {
      // Asked where the attempt went: the pod that refused says why, typed.
      auto why = co_await timed_request(ctx, target, ps::ShardOwner{*options.shard}, deadline);
      if (why && !*why && why->error().not_owner) {
        const ps::NotOwner& refusal = *why->error().not_owner;
        error.not_owner = refusal;
        if (refusal.owner && refusal.owner->endpoint != 0) {
          auto where =
              co_await timed_request(ctx, Addr{refusal.owner->endpoint}, ps::LocateGroup{options.group}, deadline);
          if (where && *where != 0 && Addr{*where} != target) {
            target = Addr{*where};
            hinted = true;
          }
        }
        if (!hinted) target = options.to;  // no better place known: the usual way
      } else if (!why) {
        target = options.to;  // nobody answered the question: the usual way
      }
      // (Ok: the pod asked owns the shard now, so the next attempt goes there again.)
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    // Two stale pods could point at each other: at most two hints in a row skip the backoff
    // (Orleans forwards a misrouted message at most twice).
    if (hinted && ++hops <= 2) {
      metrics::increment_counter("elfin_sharding_not_owner_retries_total");
      metrics::increment_counter("elfin_sharding_owner_hints_followed_total");
      continue;
    }
    hops = 0;
    if (now + backoff >= deadline) break;
    if (options.pod.is_null()) break;  // no pod to time the backoff: nothing else will change either
    metrics::increment_counter("elfin_sharding_not_owner_retries_total");
    auto paused =
        co_await timed_request(ctx, options.pod, ps::Backoff{static_cast<std::uint32_t>(backoff.count())}, deadline);
    if (!paused) break;  // no pod to time the backoff: nothing else will change either
    backoff = std::min(backoff * 2, options.max_backoff);
  }
  co_return Err{std::move(error)};
}

}  // namespace elfin::actors::sharding

template <>
struct fmt::formatter<elfin::actors::sharding::EntitySendError> : fmt::formatter<std::string_view> {
  auto format(const elfin::actors::sharding::EntitySendError& e, fmt::format_context& ctx) const {
    using elfin::actors::sharding::EntitySendErrorKind;
    switch (e.kind) {
      case EntitySendErrorKind::Unanswered:
        return fmt::format_to(
            ctx.out(), "the owner took the request and did not answer within send_timeout ({} attempts)", e.attempts);
      case EntitySendErrorKind::Refused:
        return fmt::format_to(ctx.out(), "the entity group dropped the request unanswered: {}", e.last);
      case EntitySendErrorKind::NoOwner:
        break;
    }
    return fmt::format_to(ctx.out(), "no owner answered within send_timeout ({} attempts; last: {})", e.attempts,
                          e.last);
  }
};
