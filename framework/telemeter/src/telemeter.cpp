#include <elfin/telemeter/telemeter.hpp>

#include <functional>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <elfin/context.hpp>
#include <elfin/match.hpp>
#include <elfin/messages.hpp>
#include <elfin/telemeter/prometheus_text.hpp>

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

std::string host_of(const std::string& listen) { return listen.substr(0, listen.rfind(':')); }

std::unique_ptr<prometheus::Exposer> listen_on(const std::string& listen) {
  if (listen.rfind(':') == std::string::npos) {
    throw std::invalid_argument{fmt::format("system.telemeters.listen = \"{}\": expected host:port", listen)};
  }
  try {
    return std::make_unique<prometheus::Exposer>(listen, 1);
  } catch (const std::exception& e) {
    throw std::runtime_error{fmt::format("cannot serve metrics on {}: {}", listen, e.what())};
  }
}

Task<> exec(Context<Config> ctx) {
  auto scrape = std::make_shared<Scrape>(telemetry::scraper(ctx));
  std::unique_ptr<prometheus::Exposer> exposer;
  std::string listening;  // the configured address the exposer was made for
  std::string bound;      // host:port actually bound
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<ConfigUpdated>() && ctx.config().listen != listening) {
      exposer.reset();  // free the old port first: the new address may be the same port on another host
      exposer = listen_on(ctx.config().listen);
      exposer->RegisterCollectable(scrape);
      listening = ctx.config().listen;
      auto ports = exposer->GetListeningPorts();
      bound = fmt::format("{}:{}", host_of(listening), ports.empty() ? 0 : ports.front());
    } else if (envelope->is<GetListenAddress>()) {
      ctx.respond(envelope->take_token<GetListenAddress>(), bound);
    }
  }
}

}  // namespace

Blueprint blueprint() { return ActorGroup().config<Config>().exec(exec); }

}  // namespace elfin::telemeter
