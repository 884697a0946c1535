// The fault runs' workload and leader probe (see kv_workload.hpp).
#include "kv_workload.hpp"

#include "eventually.hpp"
#include "kv_answer.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <utility>

#include <fmt/format.h>

#include <elfin/kv/client.hpp>
#include <elfin/network/network.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/testing/proxy.hpp>
#include <elfin/topology.hpp>

namespace elfin::test {

namespace {

namespace lin = linearizability;
namespace pk = protocols::kv;
namespace pr = protocols::raft;
using Clock = std::chrono::steady_clock;

}  // namespace

KvWorkload::KvWorkload(KvWorkloadOptions options) : options_(std::move(options)) {}

KvWorkload::~KvWorkload() { stop(); }

void KvWorkload::start() {
  for (std::size_t i = 0; i < options_.clients; ++i) threads_.emplace_back([this, i] { client_loop(i); });
}

void KvWorkload::stop() {
  stop_ = true;
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

bool KvWorkload::progress(std::size_t more, std::chrono::milliseconds timeout) {
  const std::size_t target = answered_ + more;
  return eventually([&] { return answered_ >= target; }, timeout, std::chrono::milliseconds(5));
}

void KvWorkload::problem(std::string text) {
  std::lock_guard lock(mutex_);
  problems_.push_back(std::move(text));
}

KvWorkloadStats KvWorkload::stats() const {
  KvWorkloadStats out;
  out.operations = operations_;
  out.acknowledged_writes = acknowledged_;
  out.unknown = unknown_;
  out.unavailable = unavailable_;
  out.mismatches = mismatches_;
  out.failed_reads = failed_reads_;
  std::lock_guard lock(mutex_);
  out.problems = problems_;
  return out;
}

void KvWorkload::client_loop(std::size_t index) {
  auto& record = recorder_.client();
  kv::ClientOptions client_options;
  client_options.pods = options_.pods;
  client_options.node = static_cast<std::uint16_t>(options_.first_node + index);
  client_options.timeout = options_.call_timeout;
  auto client = kv::Client::connect(client_options);
  if (!client) {
    problem(fmt::format("client {} did not connect: {}", index, client.error()));
    return;
  }
  std::mt19937_64 random(options_.seed * 1000 + index);
  const auto below = [&](std::uint64_t n) { return random() % n; };
  std::map<std::string, std::uint64_t> seen;  // the last version this client saw per key
  std::uint64_t seq = 0;
  while (!stop_) {
    const std::string& key = options_.keys[below(options_.keys.size())];
    const std::string value = fmt::format("c{}.{}", index, ++seq);
    std::uint64_t expected = seen.contains(key) ? seen[key] : 0;
    if (below(5) == 0) expected = below(2) == 0 ? 0 : expected / 2;  // now and then a stale or absent one
    const std::uint64_t kind = below(100);
    lin::KvInput input;
    if (kind < 35) {
      input = lin::KvInput::get(key);
    } else if (kind < 65) {
      input = lin::KvInput::put(key, value);
    } else if (kind < 82) {
      input = lin::KvInput::cas(key, expected, value);
    } else if (kind < 92) {
      input = lin::KvInput::del(key);
    } else {
      input = lin::KvInput::delete_if_version(key, std::max<std::uint64_t>(expected, 1));
    }
    const auto ticket = record.invoke(input);
    KvAnswer answer;
    switch (input.call) {
      case lin::KvCall::Get:
        answer = kv_answer(input, client->get(key));
        break;
      case lin::KvCall::Put:
        answer = kv_answer(input, client->put(key, value));
        break;
      case lin::KvCall::Cas:
        answer = kv_answer(input, client->cas(key, value, expected));
        break;
      case lin::KvCall::Delete:
        answer = kv_answer(input, client->remove(key));
        break;
      case lin::KvCall::DeleteIfVersion:
        answer = kv_answer(input, client->delete_if_version(key, input.expected_version));
        break;
    }
    ++operations_;
    if (answer.kind == KvAnswer::Kind::Unexpected) problem(std::move(answer.unexpected));
    if (answer.output) {
      const lin::KvOutput& out = *answer.output;
      record.ok(ticket, out);
      if (out.version != 0) seen[key] = out.version;
      if (out.status == lin::KvStatus::Mismatch) ++mismatches_;
      if (out.status == lin::KvStatus::Ok && (input.call == lin::KvCall::Put || input.call == lin::KvCall::Cas)) {
        ++acknowledged_;
        std::lock_guard lock(mutex_);
        acked_.emplace_back(key, out.version);
      }
      ++answered_;
    } else if (input.call == lin::KvCall::Get) {
      record.failed(ticket);  // a read has no effect
      ++failed_reads_;
    } else if (answer.kind == KvAnswer::Kind::Unknown) {
      record.unknown(ticket);
      ++unknown_;
    } else {
      record.failed(ticket);  // not applied
      ++unavailable_;
    }
  }
}

void KvWorkload::final_reads(std::chrono::milliseconds timeout) {
  auto& record = recorder_.client();
  const auto deadline = Clock::now() + timeout;
  kv::ClientOptions client_options;
  client_options.pods = options_.pods;
  client_options.node = static_cast<std::uint16_t>(options_.first_node + options_.clients);
  client_options.timeout = options_.call_timeout;
  auto client = kv::Client::connect(client_options);
  if (!client) {
    problem(fmt::format("the final reader did not connect: {}", client.error()));
    return;
  }
  std::map<std::string, std::uint64_t> highest;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, version] : acked_) highest[key] = std::max(highest[key], version);
  }
  for (const auto& key : options_.keys) {
    std::optional<pk::Found> found;
    std::string last;
    while (!found && Clock::now() < deadline) {
      const auto ticket = record.invoke(lin::KvInput::get(key));
      auto got = client->get(key);
      if (got) {
        found = *got;
        record.ok(ticket,
                  found->found ? lin::KvOutput::found(found->value, found->version) : lin::KvOutput::not_found());
      } else {
        record.failed(ticket);
        last = pk::to_string(got.error());
        // Not `eventually`: every key's retries share the one deadline of the final reads.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
    if (!found) {
      problem(fmt::format("key {} could not be read at the end: {}", key, last));
      continue;
    }
    // Versions only grow (log indexes): a present key's version is at least every acknowledged
    // write's; an absent one was deleted since, which the checker judges.
    if (auto it = highest.find(key); it != highest.end() && found->found && found->version < it->second) {
      problem(fmt::format("key {}: a write acknowledged with version {} is lost; the final read shows version {}", key,
                          it->second, found->version));
    }
  }
}

// --- the leader probe ---------------------------------------------------------------------------

struct PartitionStatusProbe::Impl {
  std::optional<testing::Proxy> proxy;
  std::uint16_t pods = 0;
};

PartitionStatusProbe::PartitionStatusProbe(std::vector<std::string> pods, std::uint16_t node)
    : impl_(std::make_unique<Impl>()) {
  impl_->pods = static_cast<std::uint16_t>(pods.size());
  Topology topology;
  topology.local("system.network").mount(network::blueprint());
  for (std::uint16_t pod = 1; pod <= impl_->pods; ++pod) {
    topology.local(fmt::format("status.{}", pod))
        .mount(network::remote_group({.nodes = {pod}, .remote_name = "partitions"}));
  }
  std::string dial;
  for (const auto& pod : pods) dial += fmt::format("{}\"{}\"", dial.empty() ? "" : ", ", pod);
  StartOptions start;
  start.node_no = node;
  start.config_toml = fmt::format(R"([common.system.logging]
max_level = "Error"

[system.network]
discovery.predefined = [{}]
discovery.attempt_interval = "200ms"
ping_interval = "1s"
idle_timeout = "5s"
)",
                                  dial);
  testing::ProxyOptions options;
  options.node_no = node;
  options.timeout = std::chrono::milliseconds(1000);
  impl_->proxy.emplace(testing::proxy(std::move(topology), "status.1", std::move(start), options));
}

PartitionStatusProbe::~PartitionStatusProbe() = default;

std::uint16_t PartitionStatusProbe::leader(std::uint64_t shard, std::chrono::milliseconds timeout) {
  std::uint16_t found = 0;
  eventually(
      [&] {
        for (std::uint16_t pod = 1; pod <= impl_->pods; ++pod) {
          try {
            auto status = impl_->proxy->request_fallible(
                pr::GetPartitionStatus{shard}, impl_->proxy->system().group_addr(fmt::format("status.{}", pod)));
            if (status && status->role == pr::Role::Leader) {
              found = pod;
              return true;
            }
          } catch (const testing::ProxyError&) {
            continue;  // that pod did not answer in time (down, paused): ask the next
          }
        }
        return false;
      },
      timeout, std::chrono::milliseconds(50));
  return found;
}

std::vector<std::uint64_t> PartitionStatusProbe::voters(std::uint16_t pod, std::uint64_t shard) {
  if (pod == 0 || pod > impl_->pods) return {};
  try {
    auto status = impl_->proxy->request_fallible(pr::GetPartitionStatus{shard},
                                                 impl_->proxy->system().group_addr(fmt::format("status.{}", pod)));
    if (!status) return {};
    std::vector<std::uint64_t> voters(status->conf.voters.begin(), status->conf.voters.end());
    std::sort(voters.begin(), voters.end());
    return voters;
  } catch (const testing::ProxyError&) {
    return {};  // no answer in time (down, paused)
  }
}

}  // namespace elfin::test
