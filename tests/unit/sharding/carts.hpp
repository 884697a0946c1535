// A tiny entity for the tests: a cart that counts the items added to it, and a World that sees
// every cart start and stop on every pod, to check that no cart ever runs on two pods at once
// (the sharding study's I5, with the pod's identity and epoch as the owner token).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/sharding/entities.hpp>
#include <elfin/actors/sharding/entity_registry.hpp>
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

/// A request no cart is for (cart_id does not know it): an unknown entity type.
struct CartUnknown {
  std::string cart;
  ELFIN_REQUEST(test_carts, CartUnknown, CartState, cart);
};

/// Served once by the cart: it records who served it (pod and owner token) and answers the pod.
struct CartServe {
  std::string cart;
  std::uint64_t seq = 0;
  ELFIN_REQUEST(test_carts, CartServe, std::string, cart, seq);
};

struct ClientAnswer {
  bool ok = false;
  CartState state;
  std::uint32_t attempts = 0;
  std::string error;
  bool not_owner = false;  ///< the error carries the last NotOwner answer
  std::int32_t kind = -1;  ///< EntitySendErrorKind when not ok
  ELFIN_PART(ok, state, attempts, error, not_owner, kind);
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
  bool unknown = false;  ///< send CartUnknown instead of CartGet
  ELFIN_REQUEST(test_carts, ClientGet, ClientAnswer, cart, carts, pod, send_timeout_ms, shard, group, unknown);
};

/// Asked by a stubborn cart of a group that holds it unanswered for ever (PodCluster's `void`).
struct CartHold {
  std::string cart;
  ELFIN_REQUEST(test_carts, CartHold, Unit, cart);
};

/// One CartServe as a cart saw it.
struct Served {
  std::string cart;
  std::uint64_t seq = 0;
  std::string pod;
  std::uint64_t epoch = 0;  ///< the owner token's epoch (the shard's, when the cart started)
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
  /// `pod`'s process is gone: whatever ran there runs no more.
  void pod_gone(const std::string& pod) {
    std::lock_guard lock(mutex_);
    for (auto& [cart, pods] : running_) pods.erase(pod);
  }
  void served(Served s) {
    std::lock_guard lock(mutex_);
    served_.push_back(std::move(s));
  }
  [[nodiscard]] std::vector<Served> served() {
    std::lock_guard lock(mutex_);
    return served_;
  }
  [[nodiscard]] std::size_t served_count() {
    std::lock_guard lock(mutex_);
    return served_.size();
  }
  /// A cart handled a numbered CartAdd (any incarnation, any pod).
  void added(const std::string& cart, std::uint64_t seq, const std::string& pod) {
    std::lock_guard lock(mutex_);
    added_[cart].emplace_back(seq, pod);
  }
  /// The numbered CartAdds `cart` handled, in the order it handled them, with the pod of each.
  [[nodiscard]] std::vector<std::pair<std::uint64_t, std::string>> added(const std::string& cart) {
    std::lock_guard lock(mutex_);
    return added_[cart];
  }
  /// How many numbered CartAdds `cart` handled (cheap to poll, unlike the list).
  [[nodiscard]] std::size_t added_count(const std::string& cart) {
    std::lock_guard lock(mutex_);
    auto it = added_.find(cart);
    return it == added_.end() ? 0 : it->second.size();
  }
  [[nodiscard]] std::size_t starts() {
    std::lock_guard lock(mutex_);
    return starts_;
  }
  /// Carts whose id starts with "busy" hold their worker thread from their first message until
  /// `release_busy` (a test that needs the workers stalled).
  [[nodiscard]] int busy() const { return busy_.load(); }
  void release_busy() { busy_released_.store(true); }
  void hold_worker() {
    ++busy_;
    while (!busy_released_.load()) std::this_thread::yield();
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
  std::vector<Served> served_;
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::string>>> added_;
  std::size_t starts_ = 0;
  std::atomic<int> busy_{0};
  std::atomic<bool> busy_released_{false};
};

/// A cart; one whose id starts with "busy" holds its worker thread (CartWorld::hold_worker), one
/// whose id starts with "silent" holds every CartGet and never answers, one whose id
/// starts with "stubborn" waits on its first message for an answer that never comes (CartHold),
/// so it never takes the termination message, and one whose id starts with "lingering" waits so
/// once its input ended, so it stops only when killed. `registry` (when given) is where its owner token
/// is read. The world hears of the cart's stop however it stops (killed too).
inline Task<> cart(Context<NoConfig, std::string> ctx, std::shared_ptr<CartWorld> world, std::string pod,
                   std::shared_ptr<actors::sharding::EntityRegistry> registry = nullptr) {
  world->started(ctx.key(), pod);
  struct Stopped {
    CartWorld* world;
    const std::string* cart;
    const std::string* pod;
    ~Stopped() { world->stopped(*cart, *pod); }
  } stopped{world.get(), &ctx.key(), &pod};
  if (ctx.key().starts_with("busy")) {
    std::ignore = co_await ctx.recv();
    world->hold_worker();
  }
  if (ctx.key().starts_with("stubborn")) {
    std::ignore = co_await ctx.recv();
    std::ignore = co_await ctx.request(CartHold{ctx.key()});
  }
  CartState state{pod, 0, true};
  std::uint64_t last_seq = 0;
  const bool silent = ctx.key().starts_with("silent");
  std::vector<ResponseToken<CartGet>> held;
  std::uint64_t epoch = 0;
  if (registry) {
    if (auto token = registry->token(ctx.key())) epoch = token->epoch;
  }
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        [&](const CartAdd& add) {
          ++state.items;
          if (add.seq != 0) {
            if (add.seq <= last_seq) state.in_order = false;
            last_seq = add.seq;
            world->added(ctx.key(), add.seq, pod);
          }
        },
        [&](const CartGet&, ResponseToken<CartGet> token) {
          if (silent) {
            held.push_back(std::move(token));
          } else {
            ctx.respond(std::move(token), state);
          }
        },
        [&](const CartServe& serve, ResponseToken<CartServe> token) {
          world->served(Served{ctx.key(), serve.seq, pod, epoch});
          ctx.respond(std::move(token), pod);
        });
  }
  if (ctx.key().starts_with("lingering")) std::ignore = co_await ctx.request(CartHold{ctx.key()});
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
  auto answer = get.unknown ? co_await actors::sharding::request_entity(ctx, CartUnknown{get.cart}, options)
                            : co_await actors::sharding::request_entity(ctx, CartGet{get.cart}, options);
  ClientAnswer result;
  if (answer) {
    result.ok = true;
    result.state = *answer;
  } else {
    result.attempts = answer.error().attempts;
    result.not_owner = answer.error().not_owner.has_value();
    result.kind = static_cast<std::int32_t>(answer.error().kind);
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
  if (const auto* serve = e.get<CartServe>()) return serve->cart;
  return std::nullopt;
}

}  // namespace elfin::test
