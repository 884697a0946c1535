// The telemeter (`system.telemeters`): serves the system's metrics to Prometheus on /metrics.
//
// Mount it and the runtime starts measuring every group (see elfin/telemetry.hpp):
//
//   topology.local("system.telemeters").mount(elfin::telemeter::blueprint());
//
//   [system.telemeters]
//   listen = "127.0.0.1:9100"   # host:port of the HTTP endpoint; port 0 picks a free one
//
// Each scrape sums the per-thread metric shards then and there, on the HTTP server's thread, so
// actors never wait for Prometheus. A changed `listen` moves the endpoint on reload.
//
// Thread safety: the blueprint is a value; the group runs one actor.
#pragma once

#include <string>

#include <elfin/actor_group.hpp>
#include <elfin/blueprint.hpp>
#include <elfin/config.hpp>
#include <elfin/message.hpp>

namespace elfin::telemeter {

struct Config {
  std::string listen = "127.0.0.1:9100";
  ELFIN_CONFIG(listen);
};

/// Asks the telemeter where it listens: "127.0.0.1:40123" (the port actually bound).
struct GetListenAddress {
  ELFIN_REQUEST(telemeter, GetListenAddress, std::string);
};

[[nodiscard]] Blueprint blueprint();

}  // namespace elfin::telemeter

ELFIN_EXTERN_MESSAGE(elfin::telemeter::GetListenAddress);  // compiled once, in src/telemeter.cpp
