// The KV service as users run it: `elfin kv cluster start` spawns three pods (`elfin run`
// processes on loopback, free ports), the `elfin kv` client commands and elfin::kv::Client talk
// to them, `elfin kv cluster stop` stops them; and a pod killed with SIGKILL while a writer runs
// loses no acknowledged write while the other two keep serving; a pod started again keeps the
// wal_count its WAL was created with.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/kv.hpp>
#include <elfin/kv/client.hpp>
#include <elfin/kv/cluster.hpp>
#include <elfin/wal/posix_file_system.hpp>
#include <elfin/wal/recovery.hpp>
#include <elfin/wal/writer.hpp>

#include "eventually.hpp"
#include "kv_local_cluster.hpp"

using namespace std::chrono_literals;
namespace pk = elfin::protocols::kv;

namespace {

/// The clusters' shard count: a scan over every shard creates every shard's Raft group on each pod,
/// and 3 x 1024 of them at once took longer than the scan's deadline on a loaded 2-core machine
/// under the sanitizers; 128 keep the test in seconds.
constexpr std::uint32_t kShards = 128;

/// A started cluster in a temporary directory, stopped at the end.
class LocalCluster : public elfin::test::KvLocalCluster {
 public:
  LocalCluster() : KvLocalCluster({.shards = kShards}) {
    INFO(started().out << started().err);
    REQUIRE(started().code == 0);
  }
};

std::uint64_t version_in(const std::string& out) {
  const auto at = out.find("version ");
  REQUIRE(at != std::string::npos);
  return std::stoull(out.substr(at + 8));
}

}  // namespace

TEST_CASE(
    "kv: the local cluster starts with one command, serves put, get, cas, delete and scan through the CLI "
    "and the client class, and stops with one command",
    "[integration][kv]") {
  LocalCluster cluster;
  CHECK_THAT(cluster.started().out, Catch::Contains("pod 3 tcp://127.0.0.1:") && Catch::Contains("kv cluster stop"));

  // The CLI.
  const auto put = cluster.kv({"put", "user:42", "alice"});
  INFO(put.err);
  REQUIRE(put.code == 0);
  const auto version = version_in(put.out);
  const auto got = cluster.kv({"get", "user:42"});
  REQUIRE(got.code == 0);
  CHECK(got.out == fmt::format("version {}\nalice\n", version));
  // Only the answer: the client's light node logs its connections below its level (Error).
  CHECK(got.err.empty());
  const auto cas = cluster.kv({"cas", "user:42", "bob", "--expect", std::to_string(version)});
  REQUIRE(cas.code == 0);
  const auto new_version = version_in(cas.out);
  CHECK(new_version > version);
  const auto stale_cas = cluster.kv({"cas", "user:42", "carol", "--expect", std::to_string(version)});
  CHECK(stale_cas.code == 1);
  CHECK_THAT(stale_cas.err, Catch::Contains(fmt::format("VersionMismatch (shard {}, current version {})",
                                                        elfin::actors::kv::shard_of("user:42", kShards), new_version)));
  CHECK(cluster.kv({"delete", "user:42"}).out == "deleted\n");
  const auto missing = cluster.kv({"get", "user:42"});
  CHECK(missing.code == 3);
  CHECK(missing.out == "not found\n");
  CHECK(cluster.kv({"get"}).code == 2);

  // The client class, from this process.
  auto client = elfin::test::kv_client(cluster.pods(), 60001);
  if (!client) FAIL(client.error());
  const auto written = client->put("class:1", "one");
  REQUIRE(written);
  CHECK(client->get("class:1").value() == pk::Found{true, "one", written->version});
  const auto refused = client->delete_if_version("class:1", written->version + 1);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == pk::KvErrorKind::VersionMismatch);
  CHECK(client->delete_if_version("class:1", written->version).value().existed);
  // Put latency through the client class (one client, one request at a time), for the docs' figure.
  REQUIRE(client->put("latency", "first"));  // the shard's Raft group exists from here on
  constexpr std::size_t kPuts = 200;
  std::vector<std::int64_t> micros;
  for (std::size_t i = 0; i < kPuts; ++i) {
    const auto started = std::chrono::steady_clock::now();
    REQUIRE(client->put("latency", std::to_string(i)));
    micros.push_back(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count());
  }
  std::sort(micros.begin(), micros.end());
  WARN("put latency through elfin::kv::Client, " << kPuts << " sequential puts to one key: p50 " << micros[kPuts / 2]
                                                 << " us, p99 " << micros[kPuts * 99 / 100] << " us, max "
                                                 << micros.back() << " us");

  // Scans over every shard (the first creates every shard's Raft group on each pod).
  for (const char* key : {"scan:b", "scan:a", "scan:c"})
    REQUIRE(cluster.kv({"put", key, std::string("v-") + key}).code == 0);
  const auto scan = cluster.kv({"scan", "scan:", "--limit", "2"});
  INFO(scan.err);
  REQUIRE(scan.code == 0);
  CHECK_THAT(scan.out, Catch::Matches("scan:a\t[0-9]+\tv-scan:a\nscan:b\t[0-9]+\tv-scan:b\n\\(more\\)\n"));
  pk::Scan all;
  all.prefix = "scan:";
  all.limit = 10;
  const auto scanned = client->scan(all);
  REQUIRE(scanned);
  REQUIRE(scanned->entries.size() == 3);
  CHECK(scanned->entries[2].key == "scan:c");

  const std::vector<int> pids{cluster.pid(1), cluster.pid(2), cluster.pid(3)};
  const auto stopped = cluster.stop();
  INFO(stopped.err);
  REQUIRE(stopped.code == 0);
  CHECK_THAT(stopped.out, Catch::Contains("pod 1 pid") && Catch::Contains("pod 3 pid"));
  for (const int pid : pids) CHECK(elfin::test::process_gone(pid));
  CHECK_FALSE(std::filesystem::exists(std::filesystem::path(cluster.dir()) / "pod-1.pid"));
}

TEST_CASE(
    "kv: a pod killed with SIGKILL while a writer runs loses no acknowledged write, and two of three pods "
    "keep serving",
    "[integration][kv]") {
  LocalCluster cluster;
  // Keys in a few shards, so that the run is about writes, not about creating Raft groups.
  auto next_key = [i = 0]() mutable {
    for (;;) {
      std::string key = fmt::format("w:{}", i++);
      if (elfin::actors::kv::shard_of(key, kShards) % 16 == 0) return key;
    }
  };
  std::mutex mutex;
  std::map<std::string, pk::Written> acked;
  std::atomic<std::size_t> acknowledged{0};
  std::atomic<std::size_t> failed{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> writer_connected{true};
  std::thread writer([&] {
    auto client = elfin::test::kv_client(cluster.pods(), 60002);
    if (!client) {
      writer_connected = false;  // reported by the test thread (Catch2 asserts on one thread only)
      return;
    }
    while (!stop) {
      const std::string key = next_key();
      auto written = client->put(key, "value of " + key);
      if (!written) {
        ++failed;  // not acknowledged: may or may not be there
        continue;
      }
      std::lock_guard lock(mutex);
      acked.emplace(key, *written);
      ++acknowledged;
    }
  });
  const auto wait_for = [&](std::size_t count) {
    return elfin::test::eventually([&] { return acknowledged >= count; }, 60s, 5ms);
  };
  const bool before = wait_for(150);
  if (!before) {
    stop = true;
    writer.join();
    INFO("acknowledged " << acknowledged << ", failed " << failed);
    REQUIRE(writer_connected);
    REQUIRE(before);
  }
  // kill -9 pod 1: the writer's own pod (its client is connected there first) and leader of some shards.
  const int victim = cluster.pid(1);
  REQUIRE(::kill(victim, SIGKILL) == 0);
  const std::size_t at_kill = acknowledged;
  const bool after = wait_for(at_kill + 150);
  // Restart it: `cluster start` starts only the pod that is not running.
  const auto restarted = cluster.start_again();
  INFO(restarted.err);
  CHECK(restarted.code == 0);
  CHECK_THAT(restarted.out, Catch::Contains("pod 2 ") && Catch::Contains("(already running)"));
  const bool later = wait_for(acknowledged + 50);
  stop = true;
  writer.join();
  INFO("acknowledged " << acknowledged << ", failed " << failed << ", at the kill " << at_kill);
  CHECK(after);  // two of three pods kept serving writes
  CHECK(later);

  // Every acknowledged write is there, with its version, read linearizably...
  auto reader = elfin::test::kv_client(cluster.pods(), 60003);
  if (!reader) FAIL(reader.error());
  std::size_t lost = 0;
  for (const auto& [key, written] : acked) {
    auto got = reader->get(key);
    if (!got || !got->found || got->value != "value of " + key || got->version != written.version) {
      ++lost;
      UNSCOPED_INFO(
          key << ": acknowledged version " << written.version << ", read "
              << (got ? fmt::format("found {} version {}", got->found, got->version) : pk::to_string(got.error())));
    }
  }
  CHECK(lost == 0);
  // ... and the restarted pod recovered them and caught up (its own replica, a stale read).
  auto at_pod1 = elfin::test::kv_client({cluster.pods()[0]}, 60004);
  if (!at_pod1) FAIL(at_pod1.error());
  const auto& last = *acked.rbegin();
  const bool caught_up = elfin::test::eventually(
      [&] {
        auto got = at_pod1->get(last.first, true);
        return got && got->found && got->version == last.second.version;
      },
      30s, 20ms);
  CHECK(caught_up);
}

TEST_CASE("kv: the client class serves calls from many threads at once, over one light node", "[integration][kv]") {
  LocalCluster cluster;
  auto client = elfin::test::kv_client(cluster.pods(), 60003);
  if (!client) FAIL(client.error());
  // A few keys per thread in a few shards: the run is about concurrent calls, not about creating
  // Raft groups.
  constexpr int kThreads = 8;
  constexpr int kPerThread = 25;
  auto key = [](int t, int i) { return fmt::format("many:{}:{}", t, i % 5); };
  std::atomic<int> failed{0};
  std::mutex errors_mu;
  std::vector<std::string> errors;
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto written = client->put(key(t, i), fmt::format("{}-{}", t, i));
        if (!written) {
          ++failed;
          std::lock_guard lock(errors_mu);
          errors.push_back(written.error().detail);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const auto took = std::chrono::steady_clock::now() - started;
  INFO((errors.empty() ? std::string{} : errors.front()));
  REQUIRE(failed == 0);
  WARN(kThreads * kPerThread << " puts from " << kThreads << " threads through one elfin::kv::Client in "
                             << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
  // Each key holds its thread's last write to it.
  for (int t = 0; t < kThreads; ++t) {
    for (int i = kPerThread - 5; i < kPerThread; ++i) {
      auto got = client->get(key(t, i));
      REQUIRE(got);
      CHECK(got->found);
      CHECK(got->value == fmt::format("{}-{}", t, i));
    }
  }
}

TEST_CASE("kv: the client's async calls keep many requests in flight from one thread, each acknowledged",
          "[integration][kv]") {
  LocalCluster cluster;
  auto client = elfin::test::kv_client(cluster.pods(), 60004);
  if (!client) FAIL(client.error());
  constexpr int kKeys = 40;
  auto key = [](int i) { return fmt::format("async:{}", i); };
  std::vector<elfin::kv::Client::Future<pk::Written>> puts;
  puts.reserve(kKeys);
  for (int i = 0; i < kKeys; ++i) puts.push_back(client->async_put(key(i), fmt::format("v{}", i)));
  for (auto& put : puts) {
    auto written = put.get();
    INFO((written ? std::string{} : written.error().detail));
    REQUIRE(written);
    CHECK(written->version > 0);
  }
  std::vector<elfin::kv::Client::Future<pk::Found>> gets;
  gets.reserve(kKeys);
  for (int i = 0; i < kKeys; ++i) gets.push_back(client->async_get(key(i)));
  for (int i = 0; i < kKeys; ++i) {
    auto got = gets[static_cast<std::size_t>(i)].get();
    REQUIRE(got);
    CHECK(got->found);
    CHECK(got->value == fmt::format("v{}", i));
  }
}

TEST_CASE(
    "kv: async calls to paused pods answer Timeout by their deadline, a call past max_in_flight answers at once, "
    "and destroying the client answers the calls in flight",
    "[integration][kv]") {
  LocalCluster cluster;
  elfin::kv::ClientOptions options;
  options.pods = cluster.pods();
  options.node = 60005;
  options.timeout = 800ms;
  options.max_in_flight = 4;
  auto client = elfin::kv::Client::connect(options);
  if (!client) FAIL(client.error());
  // Every pod paused: connected, but nobody answers.
  for (std::uint16_t pod = 1; pod <= cluster.size(); ++pod) REQUIRE(cluster.signal(pod, SIGSTOP));
  struct Resume {
    LocalCluster& cluster;
    ~Resume() {
      for (std::uint16_t pod = 1; pod <= cluster.size(); ++pod) cluster.signal(pod, SIGCONT);
    }
  } resume{cluster};

  std::vector<elfin::kv::Client::Future<pk::Written>> puts;
  puts.reserve(4);
  for (int i = 0; i < 4; ++i) puts.push_back(client->async_put(fmt::format("paused:{}", i), "v"));
  auto refused = client->async_put("paused:more", "v");
  REQUIRE(refused.wait_for(0s) == std::future_status::ready);
  const auto over = refused.get();
  REQUIRE_FALSE(over);
  CHECK(over.error().kind == pk::KvErrorKind::Unavailable);
  CHECK_THAT(over.error().detail, Catch::Contains("in flight already"));
  for (auto& put : puts) {
    REQUIRE(put.wait_for(10s) == std::future_status::ready);
    const auto written = put.get();
    REQUIRE_FALSE(written);
    INFO(written.error().detail);
    CHECK(written.error().kind == pk::KvErrorKind::Timeout);
  }

  // The slots are free again; the client goes away with four calls in flight.
  puts.clear();
  for (int i = 0; i < 4; ++i) puts.push_back(client->async_put(fmt::format("gone:{}", i), "v"));
  client = elfin::Err{std::string("destroyed")};
  for (auto& put : puts) {
    REQUIRE(put.wait_for(0s) == std::future_status::ready);
    const auto written = put.get();
    REQUIRE_FALSE(written);
    CHECK(written.error().kind == pk::KvErrorKind::Unavailable);
  }
}

TEST_CASE("kv: cluster start keeps the wal_count a pod's WAL was created with", "[integration][kv]") {
  elfin::test::KvLocalCluster cluster({.pods = 1, .shards = 16});
  INFO(cluster.started().out << cluster.started().err);
  REQUIRE(cluster.started().code == 0);
  REQUIRE(cluster.stop().code == 0);
  // The pod's WAL as an older layout made it (two logs), empty: the config written must say 2,
  // or the WAL refuses to start.
  const std::string wal_dir = cluster.dir() + "/pod-1/wal";
  std::filesystem::remove_all(wal_dir);
  elfin::wal::PosixFileSystem fs;
  for (std::uint32_t id : {0u, 1u}) {
    elfin::wal::RecoveryOptions options;
    options.dir = wal_dir;
    options.wal_id = id;
    options.wal_count = 2;
    auto recovered = elfin::wal::recover(fs, options);
    REQUIRE(recovered);
    REQUIRE(elfin::wal::Writer::open(fs, recovered->log, elfin::wal::WriterOptions{}));  // its first segment
  }
  const auto again = cluster.start_again();
  INFO(again.out << again.err);
  CHECK(again.code == 0);
  std::ifstream config(cluster.dir() + "/pod-1.config.toml");
  const std::string text((std::istreambuf_iterator<char>(config)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("\nwal_count = 2\n"));
  CHECK(cluster.serves(1, 20s));
}
