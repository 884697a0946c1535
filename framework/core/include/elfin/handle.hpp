// handle: elfin's `msg!`. Runs the first handler whose message type is the envelope's, and awaits
// it when it is a coroutine, so a handler may send with backpressure or make a request.
//
//   co_await elfin::handle(*envelope,
//       [&](const Deposit& m) { balance += m.amount; },
//       [&](const Transfer& m) -> elfin::Task<> { co_await ctx.send(Credit{m.to, m.amount}); },
//       [&](const Balance&, elfin::ResponseToken<Balance> token) { ctx.respond(std::move(token), balance); },
//       this, &Account::on_withdraw, &Account::on_close,   // member functions of the object before them
//       [&](const auto& other) { log::warn("unexpected {}", other.name()); });
//
// A handler takes `const M&`, followed by `ResponseToken<M>` when it answers a request, and
// returns `void` or `elfin::Task<>`. A handler whose parameter is `const Envelope&`, or a generic
// `[&](const auto&)`, matches anything and receives the envelope. A pointer to an object makes the
// member function pointers after it handlers called on that object. A request whose handler takes
// no token is answered `Ignored` when the envelope is dropped.
//
// Lifetimes: the handlers (lambda objects, captures by reference) live until the `co_await`
// finishes, since they are temporaries of that full expression; so a coroutine handler may capture
// by reference and use its `const M&` across suspensions while the envelope lives.
//
// `co_await handle(...)` gives whether a handler ran. A synchronous handler runs without
// suspending the actor and without allocating; a coroutine handler allocates its frame.
#pragma once

#include <concepts>
#include <coroutine>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <elfin/envelope.hpp>
#include <elfin/request.hpp>
#include <elfin/task.hpp>

namespace elfin {

namespace detail {

template <class Sig>
struct SignatureTraits;
template <class R, class... A>
struct SignatureTraits<R(A...)> {
  static constexpr std::size_t arity = sizeof...(A);
  using Return = R;
  using First = std::remove_cvref_t<std::tuple_element_t<0, std::tuple<A..., void>>>;
};

/// The call signature of a handler with one `operator()`, a function or a member function.
template <class F>
struct HandlerTraits;
template <class F>
  requires requires { &std::remove_cvref_t<F>::operator(); }
struct HandlerTraits<F> : HandlerTraits<decltype(&std::remove_cvref_t<F>::operator())> {};
template <class R, class... A>
struct HandlerTraits<R (*)(A...)> : SignatureTraits<R(A...)> {};
template <class R, class... A>
struct HandlerTraits<R(A...)> : SignatureTraits<R(A...)> {};
template <class C, class R, class... A>
struct HandlerTraits<R (C::*)(A...)> : SignatureTraits<R(A...)> {
  using Class = C;
};
template <class C, class R, class... A>
struct HandlerTraits<R (C::*)(A...) const> : SignatureTraits<R(A...)> {
  using Class = C;
};
template <class C, class R, class... A>
struct HandlerTraits<R (C::*)(A...) noexcept> : HandlerTraits<R (C::*)(A...)> {};
template <class C, class R, class... A>
struct HandlerTraits<R (C::*)(A...) const noexcept> : HandlerTraits<R (C::*)(A...) const> {};
template <class R, class... A>
struct HandlerTraits<R (*)(A...) noexcept> : HandlerTraits<R (*)(A...)> {};

template <class F>
concept TypedHandler = requires { HandlerTraits<std::remove_cvref_t<F>>::arity; };

/// The object member function handlers after it are called on.
template <class P>
concept Receiver =
    std::is_pointer_v<std::remove_cvref_t<P>> && std::is_class_v<std::remove_pointer_t<std::remove_cvref_t<P>>>;

/// What running a handler left to await: nothing, or the coroutine it returned.
struct Dispatch {
  bool ran = false;
  Task<> task;
};

template <class R>
Dispatch finish_call(R&& returned) {
  if constexpr (std::is_void_v<R>) {
    return {true, {}};
  } else {
    static_assert(std::same_as<std::remove_cvref_t<R>, Task<>>, "a handler returns void or elfin::Task<>");
    return {true, std::forward<R>(returned)};
  }
}

template <class Call>
Dispatch run_handler(Call&& call) {
  using R = decltype(call());
  if constexpr (std::is_void_v<R>) {
    call();
    return {true, {}};
  } else {
    return finish_call<R>(call());
  }
}

/// Calls `invoke(message-args...)` if the envelope holds the handler's message type.
template <class Traits, class Invoke>
bool try_typed(Envelope& envelope, Dispatch& out, Invoke&& invoke) {
  using M = typename Traits::First;
  if constexpr (std::is_same_v<M, Envelope>) {
    static_assert(Traits::arity == 1, "a catch-all handler takes only `const Envelope&`");
    out = run_handler([&] { return invoke(std::as_const(envelope)); });
    return true;
  } else {
    static_assert(Message<M>, "a handler's first parameter must be `const M&` for a message type M");
    const M* message = envelope.get<M>();
    if (message == nullptr) return false;
    if constexpr (Traits::arity == 2) {
      static_assert(Request<M>, "only requests have a ResponseToken");
      out = run_handler([&] { return invoke(*message, envelope.take_token<M>()); });
    } else {
      static_assert(Traits::arity == 1, "a handler takes `const M&` and, for requests, a ResponseToken<M>");
      out = run_handler([&] { return invoke(*message); });
    }
    return true;
  }
}

template <class Self>
bool dispatch(Envelope& /*envelope*/, Dispatch& /*out*/, Self* /*self*/) {
  return false;
}

template <class Self, class H, class... Rest>
bool dispatch(Envelope& envelope, Dispatch& out, Self* self, H&& head, Rest&&... rest) {
  using F = std::remove_cvref_t<H>;
  if constexpr (Receiver<F>) {
    return dispatch(envelope, out, static_cast<F>(head), std::forward<Rest>(rest)...);
  } else {
    bool ran = false;
    if constexpr (std::is_member_function_pointer_v<F>) {
      using Traits = HandlerTraits<F>;
      static_assert(std::is_base_of_v<typename Traits::Class, Self>,
                    "a member function handler needs a pointer to its object before it: handle(e, this, &T::on_x)");
      ran = try_typed<Traits>(envelope, out, [&](auto&&... args) -> decltype(auto) {
        return (self->*head)(std::forward<decltype(args)>(args)...);
      });
    } else if constexpr (TypedHandler<F>) {
      ran = try_typed<HandlerTraits<F>>(
          envelope, out, [&](auto&&... args) -> decltype(auto) { return head(std::forward<decltype(args)>(args)...); });
    } else {
      static_assert(std::is_invocable_v<H&, const Envelope&>,
                    "a handler is a callable taking `const M&` (and a ResponseToken<M> for requests), a "
                    "member function after a pointer to its object, or a catch-all taking the envelope");
      out = run_handler([&] { return head(std::as_const(envelope)); });
      ran = true;
    }
    return ran || dispatch(envelope, out, self, std::forward<Rest>(rest)...);
  }
}

/// What `co_await handle(...)` awaits: already done for a synchronous handler, else the handler's
/// coroutine, resumed symmetrically.
class [[nodiscard]] HandleAwaitable {
 public:
  explicit HandleAwaitable(Dispatch dispatch) : dispatch_(std::move(dispatch)) {}
  [[nodiscard]] bool await_ready() const noexcept { return !dispatch_.task.valid(); }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    auto handle = dispatch_.task.handle();
    handle.promise().continuation = awaiting;
    return handle;
  }
  bool await_resume() {
    if (dispatch_.task.valid()) dispatch_.task.result();  // rethrows what the handler threw
    return dispatch_.ran;
  }

 private:
  Dispatch dispatch_;
};

}  // namespace detail

/// Runs the first matching handler: `co_await elfin::handle(*envelope, handlers...)`; gives
/// whether one ran.
template <class... Handlers>
[[nodiscard]] detail::HandleAwaitable handle(Envelope& envelope, Handlers&&... handlers) {
  detail::Dispatch out;
  detail::dispatch(envelope, out, static_cast<void*>(nullptr), std::forward<Handlers>(handlers)...);
  return detail::HandleAwaitable{std::move(out)};
}

}  // namespace elfin
