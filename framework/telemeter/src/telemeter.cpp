#include <elfin/telemeter/telemeter.hpp>

#include <functional>
#include <memory>

#include <fmt/format.h>
#include <prometheus/collectable.h>

#include <elfin/context.hpp>
#include <elfin/handle.hpp>
#include <elfin/messages.hpp>
#include <elfin/telemeter/prometheus_text.hpp>

#include "metrics_endpoint.hpp"

namespace elfin::telemeter {

namespace {

// What Prometheus's scrape calls, on the HTTP server's thread.
class Scrape final : public prometheus::Collectable {
 public:
  explicit Scrape(std::function<std::vector<telemetry::MetricSample>()> scrape) : scrape_(std::move(scrape)) {}
  std::vector<prometheus::MetricFamily> Collect() const override { return to_families(scrape_()); }

 private:
  std::function<std::vector<telemetry::MetricSample>()> scrape_;
};

Task<> exec(Context<Config> ctx) {
  auto scrape = std::make_shared<Scrape>(telemetry::scraper(ctx));
  std::unique_ptr<MetricsEndpoint> endpoint;
  std::string listening;  // the configured address the endpoint was made for
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        [&](const ConfigUpdated&) {
          if (ctx.config().listen == listening) return;
          endpoint.reset();  // free the old port first: the new address may be the same port on another host
          endpoint = std::make_unique<MetricsEndpoint>(ctx.config().listen, scrape);
          listening = ctx.config().listen;
        },
        [&](const GetListenAddress&, ResponseToken<GetListenAddress> token) {
          ctx.respond(std::move(token), endpoint ? endpoint->bound() : std::string{});
        });
  }
}

}  // namespace

Blueprint blueprint() { return ActorGroup().config<Config>().exec(exec); }

}  // namespace elfin::telemeter

ELFIN_INSTANTIATE_MESSAGE(elfin::telemeter::GetListenAddress);
