// request_entity: a request to an entity that keeps trying until the shard's owner answers or
// `send_timeout` passed, then gives a typed error. An attempt fails when no pod is known to own
// the shard, when the pod it reached does not own it (its entity router refuses it), or when the
// owner's node is unreachable; the next attempt waits a backoff that doubles from 10 ms to 200 ms
// (Shardcake retries every 100-200 ms), and sees the cache as it is by then.
//
//   auto state = co_await elfin::actors::sharding::request_entity(ctx, GetCart{"cart-7"},
//                    {.to = carts_front, .pod = Addr{cache->endpoint()}, .send_timeout = 10s});
//   if (!state) log::warn("{}", state.error());   // EntitySendError: Timeout after N attempts
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
#include <string>
#include <utility>

#include <fmt/format.h>

#include <elfin/addr.hpp>
#include <elfin/context.hpp>
#include <elfin/protocols/sharding/entity_protocol.hpp>
#include <elfin/request.hpp>
#include <elfin/result.hpp>
#include <elfin/task.hpp>
#include <elfin/telemetry.hpp>

namespace elfin::actors::sharding {

struct EntitySendError {
  std::uint32_t attempts = 0;
  std::string last;  ///< why the last attempt failed
};

struct EntitySendOptions {
  Addr to;   ///< the entity group (or the group fronting it on every pod node); null: routed
  Addr pod;  ///< this pod's sharding actor (AssignmentCache::endpoint), which times the backoffs
  std::chrono::milliseconds send_timeout{10'000};
  std::chrono::milliseconds min_backoff{10};
  std::chrono::milliseconds max_backoff{200};
};

template <class C, class K, Request R>
Task<Result<typename R::Response, EntitySendError>> request_entity(Context<C, K> ctx, R request,
                                                                   EntitySendOptions options) {
  const auto deadline = std::chrono::steady_clock::now() + options.send_timeout;
  auto backoff = options.min_backoff;
  EntitySendError error;
  while (true) {
    ++error.attempts;
    auto answer = options.to.is_null() ? co_await ctx.request(request) : co_await ctx.request_to(options.to, request);
    if (answer) co_return std::move(answer).value();
    error.last = std::string(to_string(answer.error()));
    const auto now = std::chrono::steady_clock::now();
    if (now + backoff >= deadline) break;
    metrics::increment_counter("elfin_sharding_not_owner_retries_total");
    auto paused =
        co_await ctx.request_to(options.pod, protocols::sharding::Backoff{static_cast<std::uint32_t>(backoff.count())});
    if (!paused) break;  // no pod to time the backoff: nothing else will change either
    backoff = std::min(backoff * 2, options.max_backoff);
  }
  co_return Err{std::move(error)};
}

}  // namespace elfin::actors::sharding

template <>
struct fmt::formatter<elfin::actors::sharding::EntitySendError> : fmt::formatter<std::string_view> {
  auto format(const elfin::actors::sharding::EntitySendError& e, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "no owner answered within send_timeout ({} attempts; last: {})", e.attempts,
                          e.last);
  }
};
