// ActorGroup: the builder of a Blueprint, as in elfo.
//
//   Blueprint counters() {
//     return ActorGroup()
//         .config<Config>()                       // the group's config struct (NoConfig by default)
//         .router(MapRouter<std::uint64_t>(...))  // inner-group routing by key (Singleton by default)
//         .restart_policy(RestartPolicy::on_failure(RestartParams{5s, 30s}))
//         .termination_policy(TerminationPolicy::manually())
//         .exec(counter_exec);                    // Task<> counter_exec(Context<Config, std::uint64_t>)
//   }
//
// `exec` may return `Task<>` or `Task<Result<void, std::string>>`; an error result, like an
// exception, marks the actor Failed with that reason.
//
// Without a router the group holds one actor (key `Singleton`): every message is Unicast to it,
// except Terminate and Ping (GentleUnicast: they never start it) and ValidateConfig (Default).
//
// Thread safety: a value type.
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <elfin/blueprint.hpp>
#include <elfin/config.hpp>
#include <elfin/context.hpp>
#include <elfin/detail/supervisor.hpp>
#include <elfin/map_router.hpp>
#include <elfin/messages.hpp>
#include <elfin/restart_policy.hpp>
#include <elfin/singleton.hpp>
#include <elfin/task.hpp>
#include <elfin/termination_policy.hpp>

namespace elfin {

namespace detail {
inline MapRouter<Singleton> singleton_router() {
  return MapRouter<Singleton>{[](const Envelope& e) {
    if (e.is<Terminate>() || e.is<Ping>()) return Outcome<Singleton>::GentleUnicast(Singleton{});
    if (e.is<ValidateConfig>()) return Outcome<Singleton>::Default();
    return Outcome<Singleton>::Unicast(Singleton{});
  }};
}

// Turns an error result of exec into the actor's failure reason.
template <class Ctx, class F>
Task<> exec_with_result(F* exec, Ctx ctx, ActorCell* cell) {
  Result<void, std::string> result = co_await (*exec)(std::move(ctx));
  if (!result) cell->failure_ = std::move(result).error();
}
}  // namespace detail

template <class C = NoConfig, class K = Singleton>
class ActorGroup {
 public:
  ActorGroup()
    requires std::same_as<K, Singleton>
      : router_(detail::singleton_router()) {}

  /// Sets the group's config type; it must list its keys with ELFIN_CONFIG.
  template <class C2>
  [[nodiscard]] ActorGroup<C2, K> config() const {
    return ActorGroup<C2, K>{router_, traits_};
  }
  template <class K2>
  [[nodiscard]] ActorGroup<C, K2> router(MapRouter<K2> router) const {
    return ActorGroup<C, K2>{std::move(router), traits_};
  }
  /// The group's default restart policy; `[<group>.system.restart_policy]` in the config and
  /// `ctx.set_restart_policy` override it. `RestartPolicy::never()` unless set.
  [[nodiscard]] ActorGroup restart_policy(RestartPolicy policy) const {
    ActorGroup copy = *this;
    copy.traits_.restart = policy;
    return copy;
  }
  [[nodiscard]] ActorGroup termination_policy(TerminationPolicy policy) const {
    ActorGroup copy = *this;
    copy.traits_.termination = policy;
    return copy;
  }
  /// Terminates the group with the `system.*` groups, after every user group has ended, instead of
  /// with the user groups: for groups that user groups still need while they stop, such as the
  /// forwarders of a remote group (a stopping actor's last requests go through them).
  [[nodiscard]] ActorGroup stop_with_system_groups() const {
    ActorGroup copy = *this;
    copy.traits_.stops_with_system = true;
    return copy;
  }
  /// Mailbox capacity of the group's actors unless `system.mailbox.capacity` says otherwise.
  [[nodiscard]] ActorGroup mailbox_capacity(std::size_t capacity) const {
    ActorGroup copy = *this;
    copy.traits_.mailbox_capacity = capacity;
    return copy;
  }

  /// Finishes the group with its actors' code. `f` is called with a `Context<C, K>` per actor.
  template <class F>
    requires std::invocable<F&, Context<C, K>>
  [[nodiscard]] Blueprint exec(F f) const {
    using Ret = std::invoke_result_t<F&, Context<C, K>>;
    typename detail::Supervisor<C, K>::Exec exec;
    if constexpr (std::same_as<Ret, Task<>>) {
      exec = std::move(f);
    } else {
      static_assert(std::same_as<Ret, Task<Result<void, std::string>>>,
                    "exec must return Task<> or Task<Result<void, std::string>>");
      auto shared = std::make_shared<F>(std::move(f));
      exec = [shared](Context<C, K> ctx) {
        auto* cell = detail::ActorCellAccess::cell(ctx);
        return detail::exec_with_result(shared.get(), std::move(ctx), cell);
      };
    }
    return Blueprint{[router = router_, traits = traits_, exec = std::move(exec)](detail::GroupInit init) {
      return std::make_unique<detail::Supervisor<C, K>>(std::move(init), traits, router, exec);
    }};
  }

  /// A group whose actors are driven from outside the runtime (the test proxy uses this).
  [[nodiscard]] Blueprint external() const {
    detail::GroupTraits traits = traits_;
    traits.external = true;
    return Blueprint{[router = router_, traits](detail::GroupInit init) {
      return std::make_unique<detail::Supervisor<C, K>>(std::move(init), traits, router,
                                                        typename detail::Supervisor<C, K>::Exec{});
    }};
  }

 private:
  template <class, class>
  friend class ActorGroup;
  ActorGroup(MapRouter<K> router, detail::GroupTraits traits) : router_(std::move(router)), traits_(traits) {}

  MapRouter<K> router_;
  detail::GroupTraits traits_;
};

}  // namespace elfin
