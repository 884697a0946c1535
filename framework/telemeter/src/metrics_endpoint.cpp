#include "metrics_endpoint.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace elfin::telemeter {

namespace {

// Where to connect to reach a server bound to `host`: a wildcard address is reached on loopback.
std::string reachable_host(std::string host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "0.0.0.0" || host.empty()) return "127.0.0.1";
  if (host == "::") return "::1";
  return host;
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(const std::string& listen, std::shared_ptr<prometheus::Collectable> collectable) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    throw std::invalid_argument{fmt::format("system.telemeters.listen = \"{}\": expected host:port", listen)};
  }
  host_ = listen.substr(0, colon);
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen, 1);
  } catch (const std::exception& e) {
    throw std::runtime_error{fmt::format("cannot serve metrics on {}: {}", listen, e.what())};
  }
  exposer_->RegisterCollectable(collectable);  // it keeps a weak reference: the owner keeps it alive
  const auto ports = exposer_->GetListeningPorts();
  port_ = ports.empty() ? 0 : static_cast<std::uint16_t>(ports.front());
}

MetricsEndpoint::~MetricsEndpoint() {
  std::mutex mu;
  std::condition_variable cv;
  bool stopped = false;
  std::thread waker;
  if (port_ != 0) {
    waker = std::thread([&] {
      std::unique_lock lock(mu);
      // Until the destructor below returns: a poke that lands before civetweb raised its stop
      // flag only starts another poll, which the next poke ends.
      do {
        lock.unlock();
        poke();
        lock.lock();
      } while (!cv.wait_for(lock, std::chrono::milliseconds(5), [&] { return stopped; }));
    });
  }
  exposer_.reset();
  {
    std::lock_guard lock(mu);
    stopped = true;
  }
  cv.notify_one();
  if (waker.joinable()) waker.join();
}

std::string MetricsEndpoint::bound() const { return fmt::format("{}:{}", host_, port_); }

void MetricsEndpoint::poke() const {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(reachable_host(host_).c_str(), std::to_string(port_).c_str(), &hints, &found) != 0) return;
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, &freeaddrinfo);
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const bool connected = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    ::close(fd);
    if (connected) return;
  }
}

}  // namespace elfin::telemeter
