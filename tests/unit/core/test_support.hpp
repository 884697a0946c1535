// Helpers shared by the core's tests: waiting on conditions with a deadline, a journal that
// actors of hand-built topologies write to, a collector of actor statuses, and short names for
// the error enums.
//
// Tests never sleep "long enough": they wait for a condition and fail with what they expected
// once a deadline passes.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "../eventually.hpp"
#include "test_protocol.hpp"

namespace elfin::test {

/// How long any wait in the tests may take before it fails.
inline constexpr std::chrono::milliseconds kDeadline{5000};

inline std::string name_of(SendErrorKind e) {
  switch (e) {
    case SendErrorKind::NoRoute:
      return "NoRoute";
    case SendErrorKind::Closed:
      return "Closed";
    case SendErrorKind::Full:
      return "Full";
    case SendErrorKind::UnknownAddr:
      return "UnknownAddr";
  }
  return "?";
}
inline std::string name_of(const RequestError& e) {
  switch (e.kind()) {
    case RequestError::Failed:
      return "Failed";
    case RequestError::Ignored:
      return "Ignored";
    case RequestError::TimedOut:
      return "TimedOut";
    default:
      return "other";
  }
}
inline std::string name_of(const Result<void, SendErrorKind>& r) { return r ? "ok" : name_of(r.error()); }
template <class M>
std::string name_of(const Result<void, SendError<M>>& r) {
  return r ? "ok" : name_of(r.error().kind());
}
/// "ok:<value>" or "err:<RequestError>".
inline std::string describe(const Result<std::string, RequestError>& r) {
  return r ? "ok:" + r.value() : "err:" + name_of(r.error());
}
inline std::vector<std::string> describe(const std::vector<Result<std::string, RequestError>>& rs) {
  std::vector<std::string> out;
  for (const auto& r : rs) out.push_back(describe(r));
  return out;
}
inline std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

/// Lines written by actors (from any thread), waited on by the test.
class Journal {
 public:
  void add(std::string line) {
    {
      std::lock_guard lock(mu_);
      lines_.push_back(std::move(line));
    }
    cv_.notify_all();
  }
  void clear() {
    std::lock_guard lock(mu_);
    lines_.clear();
  }
  [[nodiscard]] std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  /// Waits until `done(lines)` holds; false after the deadline.
  template <class Done>
  bool wait(Done done, std::chrono::milliseconds timeout = kDeadline) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, std::chrono::steady_clock::now() + timeout, [&] { return done(lines_); });
  }
  bool wait_for_line(const std::string& line, std::chrono::milliseconds timeout = kDeadline) {
    return wait([&](const auto& lines) { return std::find(lines.begin(), lines.end(), line) != lines.end(); }, timeout);
  }
  /// The lines that start with `prefix`, in the order they were written.
  [[nodiscard]] std::vector<std::string> with_prefix(const std::string& prefix) const {
    std::vector<std::string> out;
    for (auto& line : lines()) {
      if (line.starts_with(prefix)) out.push_back(line);
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
};

/// The journal actors of hand-built topologies write to. One test runs at a time and every
/// system is joined before its test ends, so tests clear it at their start.
inline Journal& journal() {
  static Journal instance;
  return instance;
}

struct StatusEvent {
  ActorMeta meta;
  Addr addr;
  ActorStatus status;
};

/// Collects what StartOptions::on_status reports. Declare it before the System it watches, so it
/// outlives the system's last report.
class StatusLog {
 public:
  [[nodiscard]] std::function<void(const ActorMeta&, Addr, const ActorStatus&)> callback() {
    return [this](const ActorMeta& meta, Addr addr, const ActorStatus& status) {
      {
        std::lock_guard lock(mu_);
        events_.push_back(StatusEvent{meta, addr, status});
      }
      cv_.notify_all();
    };
  }
  /// Waits until `group/key` has reported a status of `kind`; returns that status.
  std::optional<ActorStatus> wait_for(const std::string& group, const std::string& key, ActorStatusKind kind,
                                      std::chrono::milliseconds timeout = kDeadline) {
    std::unique_lock lock(mu_);
    std::optional<ActorStatus> found;
    cv_.wait_until(lock, std::chrono::steady_clock::now() + timeout, [&] {
      for (const auto& e : events_) {
        if (e.meta.group == group && e.meta.key == key && e.status.kind() == kind) {
          found = e.status;
          return true;
        }
      }
      return false;
    });
    return found;
  }
  /// Every status `group/key` reported, in order.
  [[nodiscard]] std::vector<ActorStatusKind> kinds_of(const std::string& group, const std::string& key) const {
    std::lock_guard lock(mu_);
    std::vector<ActorStatusKind> out;
    for (const auto& e : events_) {
      if (e.meta.group == group && e.meta.key == key) out.push_back(e.status.kind());
    }
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<StatusEvent> events_;
};

/// Options for hand-built systems: a few workers and short termination stages, so a failing
/// test does not wait 45 s for stuck actors.
inline StartOptions quick_options(unsigned workers = 2) {
  StartOptions options;
  options.workers = workers;
  options.terminate_closing_after = std::chrono::milliseconds(1000);
  options.terminate_give_up_after = std::chrono::milliseconds(1000);
  return options;
}

/// Starts a system or fails the test with the start error.
inline System start_or_fail(Topology topology, StartOptions options) {
  auto system = System::start(std::move(topology), std::move(options));
  if (!system) FAIL("System::start failed: " << system.error().message());
  return std::move(system).value();
}

/// The next envelope the proxy gets, which must be a Gate request; returns its token, so the test
/// decides when (and how) the waiting actor goes on. `from` receives the asking actor's address.
inline ResponseToken<Gate> expect_gate(testing::Proxy& proxy, Addr* from = nullptr, std::string* what = nullptr) {
  Envelope envelope = proxy.recv();
  const Gate* gate = envelope.get<Gate>();
  if (gate == nullptr) FAIL("expected a Gate request, got " << envelope.protocol() << "." << envelope.name());
  if (from != nullptr) *from = envelope.sender();
  if (what != nullptr) *what = gate->what;
  return envelope.take_token<Gate>();
}

/// Takes envelopes from the proxy until `n` Seen messages arrived; returns them as "key:what".
inline std::vector<std::string> recv_seen(testing::Proxy& proxy, std::size_t n) {
  std::vector<std::string> out;
  while (out.size() < n) {
    auto seen = proxy.recv_as<Seen>();
    out.push_back(fmt::format("{}:{}", seen.key, seen.what));
  }
  return out;
}

/// Everything already queued for the proxy, as "key:what" for Seen messages (and "protocol.Name"
/// for anything else).
inline std::vector<std::string> drain_seen(testing::Proxy& proxy) {
  std::vector<std::string> out;
  while (auto envelope = proxy.try_recv()) {
    if (const Seen* seen = envelope->get<Seen>()) {
      out.push_back(fmt::format("{}:{}", seen->key, seen->what));
    } else {
      out.push_back(fmt::format("{}.{}", envelope->protocol(), envelope->name()));
    }
  }
  return out;
}

}  // namespace elfin::test
