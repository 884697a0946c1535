// A tiny entity for the tests: a cart that counts the items added to it, and a World that sees
// every cart start and stop on every pod, to check that no cart ever runs on two pods at once
// (the sharding study's I5, with the pod's identity and epoch as the owner token).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/sharding/entities.hpp>
#include <elfin/actors/sharding/request_entity.hpp>
#include <elfin/elfin.hpp>

namespace elfin::test {

struct CartAdd {
  std::string cart;
  std::uint64_t seq = 0;  ///< when not 0: the sender's sequence number, checked for order
  ELFIN_MESSAGE(test_carts, CartAdd, cart, seq);
};

struct CartState {
  std::string pod;          ///< the pod the cart runs on
  std::uint64_t items = 0;  ///< added since this incarnation of the cart started
  bool in_order = true;     ///< every numbered CartAdd came after the previous one
  ELFIN_PART(pod, items, in_order);
};

struct CartGet {
  std::string cart;
  ELFIN_REQUEST(test_carts, CartGet, CartState, cart);
};

struct ClientAnswer {
  bool ok = false;
  CartState state;
  std::uint32_t attempts = 0;
  std::string error;
  bool not_owner = false;  ///< the error carries the last NotOwner answer
  ELFIN_PART(ok, state, attempts, error, not_owner);
};

/// Asks the client actor to get a cart through request_entity, sent to `carts` with `pod`'s
/// sharding actor timing the backoffs.
struct ClientGet {
  std::string cart;
  std::uint64_t carts = 0;  ///< raw Addr of the cart group to send to
  std::uint64_t pod = 0;    ///< raw Addr of the pod's sharding actor
  std::uint32_t send_timeout_ms = 0;
  std::int64_t shard = -1;  ///< when set, with `group`: follow NotOwner hints to the owner's `group`
  std::string group;
  ELFIN_REQUEST(test_carts, ClientGet, ClientAnswer, cart, carts, pod, send_timeout_ms, shard, group);
};

class CartWorld {
 public:
  void started(const std::string& cart, const std::string& pod) {
    std::lock_guard lock(mutex_);
    auto& pods = running_[cart];
    pods.insert(pod);
    if (pods.size() > 1) violations_.push_back(fmt::format("cart {} runs on {} pods", cart, pods.size()));
    events_.push_back(fmt::format("start {} {}", cart, pod));
    ++starts_;
  }
  void stopped(const std::string& cart, const std::string& pod) {
    std::lock_guard lock(mutex_);
    running_[cart].erase(pod);
    events_.push_back(fmt::format("stop {} {}", cart, pod));
  }
  [[nodiscard]] std::vector<std::string> violations() {
    std::lock_guard lock(mutex_);
    return violations_;
  }
  [[nodiscard]] std::vector<std::string> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }
  [[nodiscard]] std::size_t starts() {
    std::lock_guard lock(mutex_);
    return starts_;
  }
  [[nodiscard]] std::size_t running_on(const std::string& pod) {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const auto& [cart, pods] : running_) n += pods.contains(pod) ? 1 : 0;
    return n;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::set<std::string>> running_;
  std::vector<std::string> events_;
  std::vector<std::string> violations_;
  std::size_t starts_ = 0;
};

inline Task<> cart(Context<NoConfig, std::string> ctx, std::shared_ptr<CartWorld> world, std::string pod) {
  world->started(ctx.key(), pod);
  CartState state{pod, 0, true};
  std::uint64_t last_seq = 0;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        [&](const CartAdd& add) {
          ++state.items;
          if (add.seq != 0) {
            if (add.seq <= last_seq) state.in_order = false;
            last_seq = add.seq;
          }
        },
        [&](const CartGet&, ResponseToken<CartGet> token) { ctx.respond(std::move(token), state); });
  }
  world->stopped(ctx.key(), pod);
}

/// Runs ClientGet's request_entity and answers with what it gave.
template <class C, class K>
Task<> answer_client_get(Context<C, K> ctx, const ClientGet& get, ResponseToken<ClientGet> token) {
  actors::sharding::EntitySendOptions options;
  options.to = Addr{get.carts};
  options.pod = Addr{get.pod};
  options.send_timeout = std::chrono::milliseconds{get.send_timeout_ms};
  if (get.shard >= 0) options.shard = static_cast<std::uint32_t>(get.shard);
  options.group = get.group;
  auto answer = co_await actors::sharding::request_entity(ctx, CartGet{get.cart}, options);
  ClientAnswer result;
  if (answer) {
    result.ok = true;
    result.state = *answer;
  } else {
    result.attempts = answer.error().attempts;
    result.not_owner = answer.error().not_owner.has_value();
    result.error = fmt::format("{}", answer.error());
  }
  ctx.respond(std::move(token), std::move(result));
}

inline Task<> client(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    // A coroutine handler: it lives until the co_await ends, so capturing by reference is safe.
    co_await handle(*envelope, [&](const ClientGet& get, ResponseToken<ClientGet> token) -> Task<> {
      co_await answer_client_get(ctx, get, std::move(token));
    });
  }
}

inline std::optional<std::string> cart_id(const Envelope& e) {
  if (const auto* add = e.get<CartAdd>()) return add->cart;
  if (const auto* get = e.get<CartGet>()) return get->cart;
  return std::nullopt;
}

}  // namespace elfin::test
