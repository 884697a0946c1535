// Stream: a source that runs a coroutine next to the actor and delivers what it produces as
// messages, polled by `recv` together with the mailbox.
//
//   ctx.attach(Stream::once(fetch_data(ctx)));         // one message: the awaited value
//   ctx.attach(Stream::generate(produce, ctx));         // produce(Emitter, Context) emits messages
//   ctx.attach(Stream::from(std::move(sequence)));      // one message per item of an async sequence
//
// An item is a message, or an `elfin::Result<A, B>` of two message types (success / failure):
// the actor gets the `A` or the `B`. A stream detaches itself when its coroutine ends.
//
// Trace ids: `once` and `generate` continue the trace that was current when the stream was
// attached (they are sub-tasks of the work the actor was doing); every item of `from` starts a
// new trace (the items are independent events).
//
// The coroutine runs on the actor's thread, inside `recv`, never at the same time as the actor's
// own code, so it may use the actor's Context (send, request, yield_now) but must not call `recv`.
// It may only await elfin awaitables and Tasks. One item is in flight at a time: `emit` waits
// until the actor has received the previous one. The callable given to `generate` is kept alive
// with the stream, so a lambda coroutine's captures stay valid.
//
// Async sequences: any type with `next()` returning something awaitable that yields a
// `std::optional` of an item; `std::nullopt` ends it.
//
// Thread safety: a handle is used from its actor only.
#pragma once

#include <concepts>
#include <coroutine>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <elfin/detail/stream_core.hpp>
#include <elfin/envelope.hpp>
#include <elfin/message.hpp>
#include <elfin/result.hpp>
#include <elfin/task.hpp>

namespace elfin {

namespace detail {
template <class T>
struct StreamItemTraits : std::false_type {};
template <Message M>
struct StreamItemTraits<M> : std::true_type {
  static Envelope wrap(M&& item, Addr sender, TraceId trace) {
    return detail::EnvelopeAccess::make_unqueued(std::move(item), sender, trace);
  }
};
template <Message A, Message B>
struct StreamItemTraits<Result<A, B>> : std::true_type {
  static Envelope wrap(Result<A, B>&& item, Addr sender, TraceId trace) {
    if (item) return detail::EnvelopeAccess::make_unqueued(std::move(item).value(), sender, trace);
    return detail::EnvelopeAccess::make_unqueued(std::move(item).error(), sender, trace);
  }
};
}  // namespace detail

/// A message, or a `Result` of two message types.
template <class T>
concept StreamItem = detail::StreamItemTraits<std::remove_cvref_t<T>>::value;

/// What a generator emits through; `co_await emitter.emit(item)` returns once the actor took it.
class Emitter {
 public:
  class [[nodiscard]] Emit {
   public:
    Emit(detail::StreamCore* core, Envelope item) : core_(core), item_(std::move(item)) {}
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) {
      core_->offer(std::move(item_));
      core_->cell().suspend(h, nullptr, nullptr);  // resumed by the stream's next poll
    }
    void await_resume() const noexcept {}

   private:
    detail::StreamCore* core_;
    Envelope item_;
  };

  explicit Emitter(detail::StreamCore* core) : core_(core) {}

  /// Hands `item` to the actor (name the message in a variable first: GCC 12 destroys a braced
  /// temporary inside a co_await twice).
  template <StreamItem T>
  Emit emit(T item) {
    using Traits = detail::StreamItemTraits<std::remove_cvref_t<T>>;
    return Emit{core_, Traits::wrap(std::move(item), core_->cell().addr(), core_->item_trace())};
  }

 private:
  detail::StreamCore* core_;
};

/// An async sequence: `co_await seq.next()` yields `std::optional<item>`.
template <class S>
concept AsyncSequence = requires(S& s) { s.next(); };

class Stream {
 public:
  /// One message: the value `awaitable` (a Task, a request, ...) produces. Continues the trace.
  template <class A>
  [[nodiscard]] static Stream once(A awaitable) {
    return make(false, true, nullptr, &once_body<A>, std::move(awaitable));
  }

  /// Whatever `generator(emitter, args...)` emits. `generator` is kept alive with the stream.
  /// Continues the trace.
  template <class F, class... Args>
    requires std::same_as<std::invoke_result_t<F&, Emitter, Args...>, Task<>>
  [[nodiscard]] static Stream generate(F generator, Args... args) {
    auto keep = std::make_shared<F>(std::move(generator));
    F* fn = keep.get();
    return make(
        false, false, std::move(keep), [fn](Emitter e, Args... a) { return std::invoke(*fn, e, std::move(a)...); },
        std::move(args)...);
  }

  /// One message per item of `sequence`; each starts a new trace.
  template <AsyncSequence S>
  [[nodiscard]] static Stream from(S sequence) {
    return make(true, false, nullptr, &sequence_body<S>, std::move(sequence));
  }

  /// Detaches the stream (its coroutine is destroyed).
  void terminate() { core_->detach(); }
  [[nodiscard]] bool is_terminated() const { return core_->finished(); }

  [[nodiscard]] std::shared_ptr<detail::SourceBase> source_core() const { return core_; }

 private:
  explicit Stream(std::shared_ptr<detail::StreamCore> core) : core_(std::move(core)) {}

  template <class Make, class... Args>
  static Stream make(bool new_trace_per_item, bool single_item, std::shared_ptr<void> keep, Make body, Args&&... args) {
    auto core = std::make_shared<detail::StreamCore>(new_trace_per_item, single_item);
    Task<> task = body(Emitter{core.get()}, std::forward<Args>(args)...);
    core->set_body(std::move(task), std::move(keep));
    return Stream{std::move(core)};
  }

  template <class A>
  static Task<> once_body(Emitter emitter, A awaitable) {
    auto value = co_await std::move(awaitable);
    auto emitting = emitter.emit(std::move(value));
    co_await emitting;
  }

  template <class S>
  static Task<> sequence_body(Emitter emitter, S sequence) {
    for (;;) {
      auto item = co_await sequence.next();
      if (!item) break;
      auto emitting = emitter.emit(std::move(*item));
      co_await emitting;
    }
  }

  std::shared_ptr<detail::StreamCore> core_;
};

}  // namespace elfin
