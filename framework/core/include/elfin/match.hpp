// match: elfin's `msg!`. Calls the first handler whose message type is the envelope's.
//
//   match(envelope,
//         [&](const Increment& m) { value += m.delta; },
//         [&](const GetValue&, ResponseToken<GetValue> token) { ctx.respond(std::move(token), value); },
//         [&](const Envelope& other) { /* anything else */ });
//
// A handler takes `const M&`, optionally followed by `ResponseToken<M>` for requests, or
// `const Envelope&` to match anything. Handlers are ordinary (not coroutine) lambdas and run
// before `match` returns, so capturing by reference is safe; `co_await` in the loop body instead.
// A request whose handler takes no token is answered `Ignored` once the envelope is dropped.
// Returns whether a handler ran.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include <elfin/envelope.hpp>
#include <elfin/request.hpp>

namespace elfin {

namespace detail {

template <class F>
struct HandlerTraits : HandlerTraits<decltype(&std::remove_cvref_t<F>::operator())> {};
template <class C, class R, class... A>
struct HandlerTraits<R (C::*)(A...) const> {
  static constexpr std::size_t arity = sizeof...(A);
  using First = std::remove_cvref_t<std::tuple_element_t<0, std::tuple<A...>>>;
};
template <class C, class R, class... A>
struct HandlerTraits<R (C::*)(A...)> : HandlerTraits<R (C::*)(A...) const> {};

template <class F>
bool try_handler(Envelope& envelope, F& handler) {
  using Traits = HandlerTraits<F>;
  using M = typename Traits::First;
  if constexpr (std::is_same_v<M, Envelope>) {
    static_assert(Traits::arity == 1, "a catch-all handler takes only `const Envelope&`");
    handler(std::as_const(envelope));
    return true;
  } else {
    static_assert(Message<M>, "a handler's first parameter must be `const M&` for a message type M");
    const M* message = envelope.get<M>();
    if (message == nullptr) return false;
    if constexpr (Traits::arity == 2) {
      static_assert(Request<M>, "only requests have a ResponseToken");
      handler(*message, envelope.take_token<M>());
    } else {
      static_assert(Traits::arity == 1, "a handler takes `const M&` and, for requests, a ResponseToken<M>");
      handler(*message);
    }
    return true;
  }
}

}  // namespace detail

template <class... Handlers>
bool match(Envelope& envelope, Handlers&&... handlers) {
  return (detail::try_handler(envelope, handlers) || ...);
}

}  // namespace elfin
