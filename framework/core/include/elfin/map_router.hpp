// MapRouter: an inner-group router made from a function `Envelope -> Outcome<Key>`.
//
//   ActorGroup().router(MapRouter<std::uint64_t>([](const Envelope& e) {
//     if (auto* m = e.get<Increment>()) return Outcome<std::uint64_t>::Unicast(m->counter_id);
//     return Outcome<std::uint64_t>::Default();
//   }))
//
// `MapRouter<Key>::with_state<Config, State>(prepare, route)` keeps a State rebuilt from the
// group's config whenever it changes (`State prepare(const Config&, const State& previous)`); the
// route function reads it as `Outcome<Key> route(const Envelope&, const State&)`. Rebuilding does
// not block senders: the new state replaces the old one atomically once `prepare` returns.
//
// Routers run on the sending side, concurrently from many threads: the functions must be
// thread-safe (pure functions of their arguments are).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <utility>

#include <elfin/envelope.hpp>
#include <elfin/outcome.hpp>

namespace elfin {

template <class Key>
class MapRouter {
 public:
  using key_type = Key;
  using RouteFn = std::function<Outcome<Key>(const Envelope&)>;

  explicit MapRouter(RouteFn route) : route_(std::move(route)) {}

  template <class Config, class State, class Prepare, class Route>
  [[nodiscard]] static MapRouter with_state(Prepare prepare, Route route) {
    auto holder = std::make_shared<std::atomic<std::shared_ptr<const State>>>(std::make_shared<const State>());
    MapRouter router{[holder, route = std::move(route)](const Envelope& e) {
      auto state = holder->load(std::memory_order_acquire);
      return route(e, *state);
    }};
    router.update_ = [holder, prepare = std::move(prepare)](const void* config) {
      auto previous = holder->load(std::memory_order_acquire);
      auto next = std::make_shared<const State>(prepare(*static_cast<const Config*>(config), *previous));
      holder->store(std::move(next), std::memory_order_release);
    };
    return router;
  }

  [[nodiscard]] Outcome<Key> route(const Envelope& envelope) const { return route_(envelope); }
  /// Rebuilds the state of a `with_state` router from the group's new config (type-erased).
  void update(const void* config) const {
    if (update_) update_(config);
  }

 private:
  RouteFn route_;
  std::function<void(const void*)> update_;
};

}  // namespace elfin
