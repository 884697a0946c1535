// The client (see remote_counter.hpp): a steady stream of Add requests, one at a time.
#include <chrono>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include <elfin/elfin.hpp>

#include "protocol.hpp"
#include "remote_counter.hpp"

namespace remote_counter {

namespace {

using namespace elfin;

struct ClientConfig {
  std::uint32_t rate = 10;    ///< requests per second; 0 stops them
  std::string name = "hits";  ///< the counter to add to
  ELFIN_CONFIG(rate, name);
};

/// The client's own tick; protocol `remote_counter`, so the `counter.*` route never takes it.
struct Tick {
  ELFIN_MESSAGE(remote_counter, Tick);
};

std::chrono::nanoseconds period_of(std::uint32_t rate) {
  return std::chrono::nanoseconds(std::chrono::seconds(1)) / (rate == 0 ? 1 : rate);
}

Task<> client_actor(Context<ClientConfig> ctx) {
  auto interval = ctx.attach(Interval(Tick{}));
  std::uint32_t rate = ctx.config().rate;
  if (rate != 0) interval.start(period_of(rate));
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        [&](const ConfigUpdated&) {  // a reload may change the rate, or stop or resume the ticks
          const std::uint32_t next = ctx.config().rate;
          if (next == 0) {
            interval.stop();
          } else if (rate == 0) {
            interval.start(period_of(next));
          } else if (next != rate) {
            interval.set_period(period_of(next));
          }
          rate = next;
        },
        [&](const Tick&) -> Task<> {
          // The request waits for its answer; ticks meanwhile do not pile up (at most one waits),
          // so a slow or absent server slows the client down instead of queueing requests.
          std::string name = ctx.config().name;  // config() is valid only until the next recv
          auto value = co_await ctx.request(Add{name, 1});
          if (value) {
            log::info("counter {} = {}", name, *value);
          } else {
            log::warn("request failed: {}", value.error());  // e.g. the counters' node is gone; go on
          }
        });
  }
}

}  // namespace

Blueprint client() { return ActorGroup().config<ClientConfig>().exec(client_actor); }

void register_blueprints(BlueprintRegistry& registry) {
  std::ignore = registry.add("remote_counter.server", server(),
                             "counters keyed by name: answers counter.Add / counter.Get, adds counter.Increment");
  std::ignore = registry.add("remote_counter.client", client(),
                             "sends counter.Add{`[<group>] name`, 1} `rate` times a second and logs the answers");
}

}  // namespace remote_counter
