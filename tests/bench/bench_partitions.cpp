// bench_partitions: the partition actors (actors/partition) with three replicas on loopback TCP,
// three elfin nodes in one process, each with its WAL actors (fdatasync per batch) in its own
// directory under $ELFIN_BENCH_WAL_DIR (default: the temporary directory). Each partition writes
// a snapshot file every $ELFIN_BENCH_SNAPSHOT_EVERY applied entries (default 100000: none within
// a run; e.g. 1000 to measure the runs with snapshots, written off the workers, in them).
//
//   commit_latency   one partition, one proposal at a time (128-byte KV put) from a client on the
//                    leader's node: p50/p99 of propose -> Proposed. Its floor, measured in the same
//                    run: one loopback TCP round trip (8 bytes, two threads) plus one 4 KiB pwrite +
//                    fdatasync into a preallocated file on the same file system, with a core kept busy
//                    as the nodes keep theirs (each a median of its own repetitions).
//   p<P>             P partitions (1, 8, 64, 1024), 1024 proposals in flight in total (1024 / P
//                    client actors per partition... at least one each), 128-byte commands:
//                    proposals acknowledged per second; `vs_one_partition` is this case's rate
//                    over the one-partition case's, run side by side.
//
//   idle_p1024       1024 partitions elected, then idle: the process's CPU time (three nodes) over
//                    10 s without requests, as a share of one core. Idle partitions fall asleep
//                    (quiesce_after_ticks, default 10 ticks = 1 s) and then cost only the per-node
//                    liveness pings.
//   idle_p1024_asleep the same, the window starting once every replica reports itself quiesced:
//                    the steady state of idle partitions.
//   idle_p0          the same three nodes with no partition: their own idle cost, the floor.
//
//   elect_awake_p64  64 partitions elected, then the node leading most of them stopped (its system
//   elect_asleep_p64 terminated, the in-process stand-in for a killed process): for each partition
//                    it led, the time from the stop until another node reports itself its leader
//                    (p50 and max over those partitions). Awake: stopped right after the elections;
//                    asleep: once every replica sleeps, so the followers learn of the loss from the
//                    per-node liveness pings, not from missed heartbeats. Tick 100 ms, election
//                    timeout 10 ticks (a follower campaigns 1 to 2 s after its last heartbeat).
//
// Clients live on node 1 and reach each partition's leader through a remote group whose node
// selector reads the leaders found before the run (node 1 itself included), so a proposal goes
// straight to its leader. Start-up, elections and the first WAL recovery are not timed.
// The machine is shared with the rest of the build and test load: say so next to the figures.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/partition.hpp>
#include <elfin/actors/partition/kv_state_machine.hpp>
#include <elfin/actors/wal.hpp>
#include <elfin/elfin.hpp>
#include <elfin/network/network.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/testing/proxy.hpp>

#include "bench_common.hpp"
#include "bench_disk.hpp"
#include "eventually.hpp"

namespace {

namespace ap = elfin::actors::partition;
namespace pk = elfin::protocols::kv;
namespace pr = elfin::protocols::raft;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
constexpr std::string_view kBench = "partitions";

/// What the client actors share with main: the leader of each partition, latencies, completion.
struct Load {
  std::vector<std::atomic<std::uint16_t>> leaders;
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<double> latencies_us;
  std::uint64_t done = 0;
  std::uint64_t failed = 0;
  std::string error;
  explicit Load(std::size_t partitions) : leaders(partitions) {}
};

struct Go {
  std::uint64_t client = 0;
  std::uint64_t partition = 0;
  std::uint64_t count = 0;
  std::uint64_t bytes = 128;
  ELFIN_MESSAGE(bench_partitions, Go, client, partition, count, bytes);
};

elfin::Task<> client_run(elfin::Context<elfin::NoConfig, std::uint64_t> ctx, Go go, std::shared_ptr<Load> load) {
  std::vector<double> latencies;
  latencies.reserve(go.count);
  std::string error;
  std::uint64_t failed = 0;
  for (std::uint64_t i = 0; i < go.count; ++i) {
    const auto command = pk::encode(
        pk::KvCommand{pk::KvOp::Put, fmt::format("c{}-{}", go.client, i % 64), std::string(go.bytes, 'x'), 0});
    const auto t0 = Clock::now();
    auto answer = co_await ctx.request(pr::Propose{go.partition, command});
    latencies.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (!answer) {
      error = elfin::to_string(answer.error());
      ++failed;
    } else if (!*answer) {
      error = pr::to_string(answer->error());
      ++failed;
    }
  }
  std::lock_guard lock(load->mutex);
  load->latencies_us.insert(load->latencies_us.end(), latencies.begin(), latencies.end());
  load->failed += failed;
  if (!error.empty()) load->error = error;
  ++load->done;
  load->cv.notify_all();
}

elfin::Task<> client(elfin::Context<elfin::NoConfig, std::uint64_t> ctx, std::shared_ptr<Load> load) {
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* go = envelope->get<Go>()) co_await client_run(ctx, *go, load);
  }
}

/// $ELFIN_BENCH_SNAPSHOT_EVERY, else 100000.
std::uint64_t snapshot_every() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): nothing in this process writes the environment
  const char* text = std::getenv("ELFIN_BENCH_SNAPSHOT_EVERY");
  if (text == nullptr || *text == '\0') return 100000;
  const std::uint64_t every = std::strtoull(text, nullptr, 10);
  if (every == 0) throw std::runtime_error("ELFIN_BENCH_SNAPSHOT_EVERY: a positive number of entries");
  return every;
}

class Cluster {
 public:
  Cluster(std::size_t partitions, const std::filesystem::path& dir) : load_(std::make_shared<Load>(partitions)) {
    for (std::uint16_t n = 1; n <= 3; ++n) start(n, dir);
  }

  /// Elects every partition and records its leader; false when one has none in time.
  bool elect(std::size_t partitions) {
    // The first message naming a partition creates its actor (and its first campaign its peers'):
    // create them all first, so that they elect side by side.
    for (std::uint64_t p = 0; p < partitions; ++p) {
      std::ignore =
          nodes_[0]->request_fallible(pr::GetPartitionStatus{p}, nodes_[0]->system().group_addr("partitions"));
    }
    for (std::uint64_t p = 0; p < partitions; ++p) {
      std::uint16_t leader = 0;
      // The elections run on the nodes' threads; nothing signals this one to the bench's thread.
      const bool elected = elfin::test::eventually(
          [&] {
            for (std::uint16_t n = 1; n <= 3; ++n) {
              auto status = nodes_[n - 1]->request_fallible(pr::GetPartitionStatus{p},
                                                            nodes_[n - 1]->system().group_addr("partitions"));
              if (status && status->role == pr::Role::Leader) {
                leader = n;
                return true;
              }
            }
            return false;
          },
          30s, 5ms);
      if (!elected) return false;
      load_->leaders[p].store(leader);
    }
    return true;
  }

  elfin::testing::Proxy& node1() { return *nodes_[0]; }

  /// The running node that reports itself leader of partition `p` (0: none).
  std::uint16_t leader_of(std::uint64_t p) {
    for (std::size_t n = 1; n <= nodes_.size(); ++n) {
      auto& node = nodes_[n - 1];
      if (!node) continue;
      auto status = node->request_fallible(pr::GetPartitionStatus{p}, node->system().group_addr("partitions"));
      if (status && status->role == pr::Role::Leader) return static_cast<std::uint16_t>(n);
    }
    return 0;
  }
  /// Stops node `n`: its system terminates (its peers see the connection close) and is joined.
  void stop(std::uint16_t n) { nodes_[n - 1].reset(); }

  /// Replicas (of `partitions` on the three nodes) that report themselves quiesced.
  std::size_t asleep(std::size_t partitions) {
    std::size_t n = 0;
    for (auto& node : nodes_) {
      if (!node) continue;
      for (std::uint64_t p = 0; p < partitions; ++p) {
        auto status = node->request_fallible(pr::GetPartitionStatus{p}, node->system().group_addr("partitions"));
        n += status && status->quiesced ? 1 : 0;
      }
    }
    return n;
  }
  std::shared_ptr<Load> load() { return load_; }

 private:
  std::string listen_address(std::uint16_t n) {
    auto info = nodes_[n - 1]->request_fallible(elfin::network::GetNetworkInfo{},
                                                nodes_[n - 1]->system().group_addr("system.network"));
    if (!info || info->listening.empty()) throw std::runtime_error("a node listens nowhere");
    return info->listening.front();
  }

  void start(std::uint16_t n, const std::filesystem::path& dir) {
    std::string peers;
    for (std::uint16_t other = 1; other < n; ++other) {
      peers += fmt::format("{}\"tcp://{}\"", peers.empty() ? "" : ", ", listen_address(other));
    }
    elfin::Topology topology;
    topology.local("system.network").mount(elfin::network::blueprint());
    auto wal = topology.local("wal");
    wal.mount(elfin::actors::wal::blueprint());
    elfin::network::RemoteGroupOptions to_peers;
    for (std::uint16_t other = 1; other <= 3; ++other) {
      if (other != n) to_peers.nodes.push_back(other);
    }
    to_peers.remote_name = "partitions";
    to_peers.pick = ap::peer_node;
    auto peer_group = topology.local("partitions.peers");
    peer_group.mount(elfin::network::remote_group(std::move(to_peers)));
    auto partitions = topology.local("partitions");
    partitions.mount(ap::blueprint());
    partitions.route_to(wal, elfin::filters::protocol("wal"));
    partitions.route_to(peer_group, elfin::filters::messages<pr::RaftMessage>());
    if (n == 1) {
      // The clients, and in front of them the partitions of all three nodes, by leader.
      elfin::network::RemoteGroupOptions front;
      front.nodes = {1, 2, 3};
      front.remote_name = "partitions";
      front.pick = [load = load_](const elfin::Envelope& e,
                                  const std::vector<std::uint16_t>&) -> std::optional<std::uint16_t> {
        if (const auto* m = e.get<pr::Propose>()) return load->leaders[m->partition].load();
        return std::nullopt;
      };
      auto front_group = topology.local("partitions.leaders");
      front_group.mount(elfin::network::remote_group(std::move(front)));
      auto clients = topology.local("clients");
      clients.mount(
          elfin::ActorGroup()
              .router(elfin::MapRouter<std::uint64_t>([](const elfin::Envelope& e) {
                if (const auto* go = e.get<Go>()) return elfin::Outcome<std::uint64_t>::Unicast(go->client);
                return elfin::Outcome<std::uint64_t>::Default();
              }))
              .exec([load = load_](elfin::Context<elfin::NoConfig, std::uint64_t> ctx) { return client(ctx, load); }));
      clients.route_to(front_group, elfin::filters::messages<pr::Propose>());
    }
    elfin::StartOptions start;
    start.node_no = n;
    start.config_toml = fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:0"]
discovery.predefined = [{}]
discovery.attempt_interval = "200ms"

[wal]
dir = "{}"
wal_count = 2

[partitions]
nodes = [1, 2, 3]
tick = "100ms"
snapshot_dir = "{}"
snapshot_every = {}

[partitions.system.mailbox]
capacity = 4096
)",
                                    peers, (dir / fmt::format("node{}/wal", n)).string(),
                                    (dir / fmt::format("node{}/snapshots", n)).string(), snapshot_every());
    elfin::testing::ProxyOptions options;
    options.node_no = n;
    options.timeout = 30s;
    options.workers = 2;
    nodes_.push_back(std::make_unique<elfin::testing::Proxy>(
        elfin::testing::proxy(std::move(topology), "wal", std::move(start), options)));
    // Every node dials the ones before it; wait until this one is connected to all of them.
    const bool connected = elfin::test::eventually(
        [&] {
          auto info = nodes_.back()->request_fallible(elfin::network::GetNetworkInfo{},
                                                      nodes_.back()->system().group_addr("system.network"));
          return info && info->peers.size() + 1 >= n;
        },
        20s, 5ms);
    if (!connected) throw std::runtime_error("the nodes did not connect");
  }

  std::shared_ptr<Load> load_;
  std::vector<std::unique_ptr<elfin::testing::Proxy>> nodes_;
};

struct Result {
  double seconds = 0;
  std::uint64_t proposals = 0;
  std::vector<double> latencies_us;
};

/// `clients` clients over `partitions` partitions (client c on partition c % partitions), each
/// proposing `each` times one after the other.
Result run(std::size_t partitions, std::size_t clients, std::uint64_t each) {
  elfin_bench::RunDir dir{"elfin-bench-partitions"};
  Cluster cluster(partitions, dir.path());
  if (!cluster.elect(partitions)) throw std::runtime_error("a partition elected no leader");
  auto load = cluster.load();
  const auto t0 = Clock::now();
  // The proxy's subject is the WAL group, which sends nothing of its own (a subject's outgoing
  // messages also go to the proxy); the clients are addressed by their group.
  const elfin::Addr group = cluster.node1().system().group_addr("clients");
  for (std::size_t c = 0; c < clients; ++c) cluster.node1().send_to(group, Go{c, c % partitions, each, 128});
  std::unique_lock lock(load->mutex);
  if (!load->cv.wait_for(lock, 300s, [&] { return load->done == clients; })) throw std::runtime_error("hung");
  const auto t1 = Clock::now();
  if (load->failed != 0) throw std::runtime_error(fmt::format("{} proposals failed: {}", load->failed, load->error));
  return Result{std::chrono::duration<double>(t1 - t0).count(), clients * each, std::move(load->latencies_us)};
}

// --- the floor ---------------------------------------------------------------------------------

/// Median of `rounds` 8-byte round trips between two threads over loopback TCP, in microseconds.
double tcp_round_trip_us(int rounds) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) throw std::runtime_error("loopback socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw std::runtime_error("loopback listen failed");
  }
  std::thread echo([listener, rounds] {
    const int s = ::accept(listener, nullptr, nullptr);
    if (s < 0) return;  // the main thread's connect failed first
    const int one = 1;
    ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::array<char, 8> buf{};
    for (int i = 0; i < rounds; ++i) {
      if (::recv(s, buf.data(), buf.size(), MSG_WAITALL) != 8 || ::send(s, buf.data(), buf.size(), 0) != 8) break;
    }
    ::close(s);
  });
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  if (s < 0 || ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::shutdown(listener, SHUT_RDWR);  // the echo thread's accept returns
    echo.join();
    ::close(listener);
    throw std::runtime_error("connect failed");
  }
  const int one = 1;
  ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::vector<double> us;
  std::array<char, 8> buf{};
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = Clock::now();
    if (::send(s, buf.data(), buf.size(), 0) != 8 || ::recv(s, buf.data(), buf.size(), MSG_WAITALL) != 8) break;
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  ::close(s);
  echo.join();
  ::close(listener);
  return elfin_bench::percentile(us, 0.5);
}

/// Median of `rounds` 4 KiB pwrite + fdatasync into a preallocated file on the benchmark's file
/// system, in microseconds.
double fdatasync_us(int rounds) {
  elfin_bench::RunDir dir{"elfin-bench-partitions-floor"};
  const std::string path = (dir.path() / "floor").string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("open failed");
  // Preallocated and synced first, as the WAL's segments are: an fdatasync then writes the data
  // only, not the file's growing size.
  if (::posix_fallocate(fd, 0, static_cast<off_t>(rounds) * 4096) != 0 || ::fsync(fd) != 0) {
    throw std::runtime_error("preallocating failed");
  }
  std::vector<char> block(4096, 'x');
  std::vector<double> us;
  // A spinning thread keeps a CPU busy, as the nodes' threads do during the cluster's run: on a
  // VM whose vCPU halts when idle, an idle process's fdatasync returns late (bench_wal_actors
  // explains), which would make the floor look higher than it is.
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  for (int i = 0; i < rounds; ++i) {
    const auto t0 = Clock::now();
    if (::pwrite(fd, block.data(), block.size(), static_cast<off_t>(i) * 4096) != 4096 || ::fdatasync(fd) != 0) break;
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  stop.store(true);
  spinner.join();
  ::close(fd);
  return elfin_bench::percentile(us, 0.5);
}

// --- cases -------------------------------------------------------------------------------------

bool commit_latency(const elfin_bench::Options& opts) {
  try {
    const std::uint64_t n = opts.quick ? 200 : 2000;
    if (opts.warmup) std::ignore = run(1, 1, n / 10);
    Result r = run(1, 1, n);
    const double rtt = tcp_round_trip_us(opts.quick ? 200 : 2000);
    const double sync = fdatasync_us(opts.quick ? 50 : 300);
    elfin_bench::Stats s;
    s.ops = r.proposals;
    s.ops_per_s = static_cast<double>(r.proposals) / r.seconds;
    s.ns_per_op = r.seconds * 1e9 / static_cast<double>(r.proposals);
    s.min_ops_per_s = s.max_ops_per_s = s.ops_per_s;
    elfin_bench::print_line(
        kBench, "commit_latency", s, std::nullopt,
        fmt::format(" p50_us={:.0f} p99_us={:.0f} floor_us={:.0f} floor_rtt_us={:.0f} "
                    "floor_fdatasync_us={:.0f} fs={}",
                    elfin_bench::percentile(r.latencies_us, 0.5), elfin_bench::percentile(r.latencies_us, 0.99),
                    rtt + sync, rtt, sync, elfin_bench::fs_name(elfin_bench::disk_root())),
        "floor");
    return true;
  } catch (const std::exception& e) {
    fmt::print("bench={} case=commit_latency error=\"{}\"\n", kBench, e.what());
    return false;
  }
}

bool partitions_case(std::size_t partitions, const elfin_bench::Options& opts) {
  const std::string name = fmt::format("p{}", partitions);
  try {
    constexpr std::size_t kInFlight = 1024;
    const std::uint64_t each = opts.quick ? 10 : 50;
    if (opts.warmup) std::ignore = run(partitions, kInFlight, 2);
    std::vector<elfin_bench::Figure> mine;
    std::vector<elfin_bench::Figure> one;
    for (unsigned rep = 0; rep < opts.reps; ++rep) {
      Result r = run(partitions, kInFlight, each);
      mine.push_back({r.seconds, r.proposals});
      if (partitions != 1) {
        Result base = run(1, kInFlight, each);
        one.push_back({base.seconds, base.proposals});
      }
    }
    const auto stats = elfin_bench::summarize(mine);
    std::string extra = fmt::format(" in_flight={} fs={}", kInFlight, elfin_bench::fs_name(elfin_bench::disk_root()));
    if (!one.empty()) {
      const auto base = elfin_bench::summarize(one);
      extra += fmt::format(" one_partition_ops_per_s={:.0f} vs_one_partition={:.2f}", base.ops_per_s,
                           stats.ops_per_s / base.ops_per_s);
    }
    elfin_bench::print_line(kBench, name, stats, std::nullopt, extra, "none");
    return true;
  } catch (const std::exception& e) {
    fmt::print("bench={} case={} error=\"{}\"\n", kBench, name, e.what());
    return false;
  }
}

/// CPU time (user + system) of the whole process so far, in seconds.
double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// 1024 partitions elected and then left alone: the three nodes' CPU over a few seconds without a
/// request, as a share of one core (all three nodes together). `settled`: the window starts only
/// once every replica reports itself quiesced (the steady state of idle partitions), else 1 s
/// after the last partition was found elected.
bool idle_case(const elfin_bench::Options& opts, bool settled, std::size_t kPartitions = 1024) {
  const char* name = kPartitions == 0 ? "idle_p0" : settled ? "idle_p1024_asleep" : "idle_p1024";
  try {
    const auto window = opts.quick ? 2s : 10s;
    elfin_bench::RunDir dir{"elfin-bench-partitions"};
    Cluster cluster(kPartitions, dir.path());
    if (!cluster.elect(kPartitions)) throw std::runtime_error("a partition elected no leader");
    std::this_thread::sleep_for(1s);  // the elections' last messages settle (not measured)
    if (settled) {
      if (!elfin::test::eventually([&] { return cluster.asleep(kPartitions) >= 3 * kPartitions; }, 60s, 500ms)) {
        throw std::runtime_error("the idle partitions did not all fall asleep");
      }
    }
    const double cpu0 = process_cpu_seconds();
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(window);  // idle on purpose: the measurement is what runs meanwhile
    const double cpu = process_cpu_seconds() - cpu0;
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const std::size_t asleep = cluster.asleep(kPartitions);
    elfin_bench::Stats s;
    s.ops = 1;
    s.ops_per_s = s.min_ops_per_s = s.max_ops_per_s = 1 / wall;
    s.ns_per_op = wall * 1e9;
    elfin_bench::print_line(
        kBench, name, s, std::nullopt,
        fmt::format(" partitions={} nodes=3 tick_ms=100 cpu_share_of_one_core={:.3f} window_s={:.1f} "
                    "replicas_asleep_after={}",
                    kPartitions, cpu / wall, wall, asleep),
        "none");
    return true;
  } catch (const std::exception& e) {
    fmt::print("bench={} case={} error=\"{}\"\n", kBench, name, e.what());
    return false;
  }
}

/// Time to elect: `partitions` elected (and, `asleep`, left until every replica sleeps), then the
/// node leading most of them stopped; per partition it led, the time until another node leads it.
bool elect_case(const elfin_bench::Options& /*opts*/, bool asleep, std::size_t partitions = 64) {
  const std::string name = fmt::format("elect_{}_p{}", asleep ? "asleep" : "awake", partitions);
  try {
    elfin_bench::RunDir dir{"elfin-bench-partitions"};
    Cluster cluster(partitions, dir.path());
    if (!cluster.elect(partitions)) throw std::runtime_error("a partition elected no leader");
    if (asleep) {
      if (!elfin::test::eventually([&] { return cluster.asleep(partitions) >= 3 * partitions; }, 60s, 200ms)) {
        throw std::runtime_error("the idle partitions did not all fall asleep");
      }
    }
    std::array<std::vector<std::uint64_t>, 4> led;  // by node: the partitions it leads
    for (std::uint64_t p = 0; p < partitions; ++p) led[cluster.leader_of(p)].push_back(p);
    const auto victim = static_cast<std::uint16_t>(
        std::max_element(led.begin() + 1, led.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); }) -
        led.begin());
    std::vector<std::uint64_t> waiting = led[victim];
    const std::size_t lost = waiting.size();
    std::vector<double> elect_ms;
    const auto t0 = Clock::now();
    cluster.stop(victim);
    const auto deadline = t0 + 60s;
    while (!waiting.empty()) {
      if (Clock::now() > deadline)
        throw std::runtime_error(fmt::format("{} partitions elected no new leader", waiting.size()));
      std::erase_if(waiting, [&](std::uint64_t p) {
        if (cluster.leader_of(p) == 0) return false;
        elect_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        return true;
      });
      std::this_thread::sleep_for(2ms);  // the elections run on the nodes' threads
    }
    const double p50 = elfin_bench::percentile(elect_ms, 0.5);
    elfin_bench::Stats s;
    s.ops = lost;
    s.ops_per_s = s.min_ops_per_s = s.max_ops_per_s = 1000 / p50;
    s.ns_per_op = p50 * 1e6;
    elfin_bench::print_line(kBench, name, s, std::nullopt,
                            fmt::format(" partitions={} led_by_stopped_node={} p50_ms={:.0f} max_ms={:.0f} tick_ms=100 "
                                        "election_ticks=10",
                                        partitions, lost, p50, *std::max_element(elect_ms.begin(), elect_ms.end())),
                            "none");
    return true;
  } catch (const std::exception& e) {
    fmt::print("bench={} case={} error=\"{}\"\n", kBench, name, e.what());
    return false;
  }
}

std::vector<elfin_bench::Case> cases() {
  std::vector<elfin_bench::Case> out;
  out.push_back({"commit_latency", "latency", commit_latency});
  for (std::size_t p : {1, 8, 64, 1024}) {
    out.push_back({fmt::format("p{}", p), "throughput",
                   [p](const elfin_bench::Options& opts) { return partitions_case(p, opts); }});
  }
  out.push_back({"idle_p1024", "idle", [](const elfin_bench::Options& opts) { return idle_case(opts, false); }});
  out.push_back({"idle_p1024_asleep", "idle", [](const elfin_bench::Options& opts) { return idle_case(opts, true); }});
  out.push_back({"idle_p0", "idle", [](const elfin_bench::Options& opts) { return idle_case(opts, true, 0); }});
  out.push_back({"elect_awake_p64", "elect", [](const elfin_bench::Options& opts) { return elect_case(opts, false); }});
  out.push_back({"elect_asleep_p64", "elect", [](const elfin_bench::Options& opts) { return elect_case(opts, true); }});
  return out;
}

}  // namespace

int main(int argc, char** argv) { return elfin_bench::run_main(kBench, cases(), argc, argv); }
