// Test clients of the WAL group: a `clients` group with one actor per partition, each appending
// its partition's entries one request at a time (as a partition actor does) and reporting every
// answer to a Sink. Used by the tests and by the crash helper process.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <elfin/actor_group.hpp>
#include <elfin/handle.hpp>
#include <elfin/map_router.hpp>
#include <elfin/protocols/wal.hpp>
#include <elfin/topology.hpp>

namespace wal_test {

namespace pw = elfin::protocols::wal;

/// The payload of (partition, index): recognisable, so recovery can be checked byte for byte.
inline pw::Payload payload_of(std::uint64_t partition, std::uint64_t index, std::size_t size) {
  pw::Payload out(size);
  std::uint64_t x = partition * 0x9E3779B97F4A7C15ull + index;
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::uint8_t>(x);
  }
  return out;
}

/// What a client is told to do: `count` appends from `first_index`, `per_request` entries each.
struct Run {
  std::uint64_t partition = 0;
  std::uint64_t first_index = 1;
  std::uint64_t count = 1;
  std::uint64_t per_request = 1;
  std::uint64_t payload_bytes = 32;
  std::uint64_t term = 1;
  ELFIN_MESSAGE(wal_test, Run, partition, first_index, count, per_request, payload_bytes, term);
};

struct Ack {
  std::uint64_t partition = 0;
  std::uint64_t index = 0;  ///< the durable index the WAL answered
};
struct Refused {
  std::uint64_t partition = 0;
  std::uint64_t index = 0;  ///< the first index of the refused request
  pw::WalErrorKind kind = pw::WalErrorKind::WalFailed;
};

/// Where the clients report. Thread safety: any thread.
class Sink {
 public:
  void ack(std::uint64_t partition, std::uint64_t index) {
    {
      std::lock_guard lock(mu_);
      acks_.push_back({partition, index});
      if (on_ack_) on_ack_(partition, index);
    }
    cv_.notify_all();
  }
  void refused(std::uint64_t partition, std::uint64_t index, pw::WalErrorKind kind) {
    {
      std::lock_guard lock(mu_);
      refused_.push_back({partition, index, kind});
    }
    cv_.notify_all();
  }
  void done() {
    {
      std::lock_guard lock(mu_);
      ++done_;
    }
    cv_.notify_all();
  }
  /// Waits until `pred(acks, refused, done)` holds; false after the deadline.
  template <class Pred>
  bool wait(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return pred(acks_, refused_, done_); });
  }
  std::vector<Ack> acks() const {
    std::lock_guard lock(mu_);
    return acks_;
  }
  std::vector<Refused> refusals() const {
    std::lock_guard lock(mu_);
    return refused_;
  }
  void reset() {
    std::lock_guard lock(mu_);
    acks_.clear();
    refused_.clear();
    done_ = 0;
  }
  /// Called under the sink's lock for every ack (the crash helper prints them).
  void set_on_ack(std::function<void(std::uint64_t, std::uint64_t)> f) {
    std::lock_guard lock(mu_);
    on_ack_ = std::move(f);
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Ack> acks_;
  std::vector<Refused> refused_;
  std::size_t done_ = 0;
  std::function<void(std::uint64_t, std::uint64_t)> on_ack_;
};

inline Sink& sink() {
  static Sink instance;
  return instance;
}

inline elfin::Task<> client_run(elfin::Context<elfin::NoConfig, std::uint64_t> ctx, Run run) {
  std::uint64_t index = run.first_index;
  const std::uint64_t end = run.first_index + run.count;
  while (index < end) {
    const std::uint64_t n = std::min(run.per_request, end - index);
    elfin::Result<pw::Appended, pw::WalError> answer{pw::Appended{}};
    if (n == 1) {
      pw::Append append{run.partition, run.term, index, payload_of(run.partition, index, run.payload_bytes)};
      auto r = co_await ctx.request(std::move(append));
      if (!r) {
        sink().refused(run.partition, index, pw::WalErrorKind::ShuttingDown);
        break;
      }
      answer = std::move(*r);
    } else {
      pw::AppendBatch batch{run.partition, {}};
      for (std::uint64_t i = 0; i < n; ++i) {
        batch.entries.push_back({run.term, index + i, payload_of(run.partition, index + i, run.payload_bytes)});
      }
      auto r = co_await ctx.request(std::move(batch));
      if (!r) {
        sink().refused(run.partition, index, pw::WalErrorKind::ShuttingDown);
        break;
      }
      answer = std::move(*r);
    }
    if (!answer) {
      sink().refused(run.partition, index, answer.error().kind);
      break;
    }
    sink().ack(run.partition, answer->index);
    index += n;
  }
  sink().done();
}

inline elfin::Task<> client(elfin::Context<elfin::NoConfig, std::uint64_t> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* run = envelope->get<Run>()) {
      Run copy = *run;
      co_await client_run(ctx, copy);
    }
  }
}

inline elfin::Blueprint clients() {
  return elfin::ActorGroup()
      .router(elfin::MapRouter<std::uint64_t>([](const elfin::Envelope& e) {
        if (const auto* run = e.get<Run>()) return elfin::Outcome<std::uint64_t>::Unicast(run->partition);
        return elfin::Outcome<std::uint64_t>::Default();
      }))
      .exec(client);
}

/// `wal` (the blueprint) and `clients`, whose `wal` messages go to it.
inline elfin::Topology topology(elfin::Blueprint wal) {
  elfin::Topology topology;
  auto wal_group = topology.local("wal");
  auto clients_group = topology.local("clients");
  clients_group.route_to(wal_group, elfin::filters::protocol("wal"));
  wal_group.mount(std::move(wal));
  clients_group.mount(clients());
  return topology;
}

}  // namespace wal_test
