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
// not block senders: the new state replaces the old one atomically once `prepare` returns, and a
// send reads the state without writing to memory other senders share.
//
// Routers run on the sending side, concurrently from many threads: the functions must be
// thread-safe (pure functions of their arguments are).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

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
    auto store = std::make_shared<StateStore<State>>();
    MapRouter router{[store, route = std::move(route)](const Envelope& e) {
      return route(e, *store->current.load(std::memory_order_acquire));
    }};
    router.update_ = [store, prepare = std::move(prepare)](const void* config) {
      store->replace(prepare(*static_cast<const Config*>(config), *store->current.load(std::memory_order_acquire)));
    };
    return router;
  }

  [[nodiscard]] Outcome<Key> route(const Envelope& envelope) const { return route_(envelope); }
  /// Rebuilds the state of a `with_state` router from the group's new config (type-erased).
  void update(const void* config) const {
    if (update_) update_(config);
  }

 private:
  // The state every send reads. A send must not write to memory all senders share (an atomic
  // shared_ptr load bumps a reference count, and libstdc++ guards it with a lock bit): senders
  // read a plain pointer. That is safe because no state is freed while the router lives: a
  // replaced one stays in `all` (config reloads are rare, so the few kept are cheap), and the
  // release store publishes a fully built state to the acquire loads.
  template <class State>
  struct StateStore {
    StateStore() : current(keep(std::make_shared<const State>())) {}
    void replace(State next) {
      std::lock_guard lock{mutex};  // reloads only; never taken by a send
      current.store(keep(std::make_shared<const State>(std::move(next))), std::memory_order_release);
    }
    const State* keep(std::shared_ptr<const State> state) {
      all.push_back(std::move(state));
      return all.back().get();
    }
    std::mutex mutex;
    std::vector<std::shared_ptr<const State>> all;
    std::atomic<const State*> current;
  };

  RouteFn route_;
  std::function<void(const void*)> update_;
};

}  // namespace elfin
