// A structural actor: the state and the handlers are members of a class, and a `main()` member
// coroutine runs the loop. elfin has no Actor base class; this is a pattern, not an interface.
#include <cstdint>
#include <utility>

#include <fmt/core.h>

#include <elfin/elfin.hpp>

#include "counters.hpp"
#include "protocol.hpp"

namespace counter {

namespace {

using namespace elfin;

class Counter {
 public:
  explicit Counter(Context<> ctx) : ctx_(ctx) {}

  Task<> main() {
    while (auto envelope = co_await ctx_.recv()) {
      // `this` followed by member function pointers: each member function handles the message
      // type its first parameter names, with no lambda around it.
      co_await handle(*envelope, this, &Counter::on_increment, &Counter::on_get_value);
    }
  }

 private:
  void on_increment(const Increment& increment) { value_ += increment.delta; }

  void on_get_value(const GetValue&, ResponseToken<GetValue> token) {
    fmt::print("structural counter: value is {}\n", value_);
    ctx_.respond(std::move(token), value_);
  }

  Context<> ctx_;
  std::uint64_t value_ = 0;
};

// `exec` stays a free function: it owns the Counter (in its frame) for as long as `main` runs.
Task<> exec(Context<> ctx) {
  Counter counter(ctx);
  co_await counter.main();
}

}  // namespace

Blueprint structural() { return ActorGroup().exec(exec); }

}  // namespace counter
