// MetricsEndpoint: the HTTP server behind `/metrics` (prometheus-cpp's Exposer, on civetweb),
// made to stop promptly.
//
// civetweb's accepting thread looks at its stop flag only between polls of the listening socket,
// and a poll waits up to 2 s for a connection. So destroying an Exposer took up to 2 s — on an
// actor's thread, whenever a system with a telemeter stopped or the telemeter moved to another
// address. While the destructor waits, this class connects to the socket every few milliseconds:
// the poll returns at once, the thread sees the flag and ends (the connection is accepted and
// closed without a request).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

namespace elfin::telemeter {

class MetricsEndpoint {
 public:
  /// Serves `collectable` on `listen` ("host:port", port 0 for any free one); throws
  /// std::invalid_argument or std::runtime_error with a message that names the address.
  MetricsEndpoint(const std::string& listen, std::shared_ptr<prometheus::Collectable> collectable);
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;
  ~MetricsEndpoint();

  /// "host:port" with the port actually bound.
  [[nodiscard]] std::string bound() const;

 private:
  /// One connection to the listening socket, closed at once (errors ignored: it only wakes).
  void poke() const;

  std::string host_;
  std::uint16_t port_ = 0;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace elfin::telemeter
