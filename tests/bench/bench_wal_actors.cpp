// bench_wal_actors: the WAL actors (actors/wal) under many partitions, against raw write +
// fdatasync on the same file system in the same run, at equal bytes per sync.
//
//   p<P>_k<K>_<size>   P partitions over K WAL actors, records of <size> bytes of payload
//
// Every case keeps the same total concurrency of writers: C entries in flight (C = 64; 1024 for
// the 1024-partition cases, whose one-partition baseline runs at C = 1024 too). Each partition has
// one writer actor that sends AppendBatch requests of C / P entries and waits for the answer
// before the next (as a partition actor appends its log in order), so one partition writes
// batches of C entries and 64 partitions write single entries, 64 at a time. One op is one entry
// acknowledged durable. The commit latency is a request's, from send to answer.
//
// The WAL directory is fresh per run and its recovery is not timed (the driver waits for every
// WAL actor to answer a Flush first). The raw peer runs min(P, K) threads, one file each, each
// doing pwrite + fdatasync of the WAL's measured mean bytes per sync into a file preallocated as
// the WAL's segments are (64 MiB), as many syncs as the WAL did in total, with one more thread
// spinning (see run_raw); runs alternate WAL, raw, WAL, raw after one warm-up of each.
//
// `vs_one_partition` is this case's appends/s over the one-partition case of the same K, record
// size and concurrency (`one_partition_ops_per_s`), whose runs alternate with this case's: the
// disk's latency drifts during a run, so only figures taken side by side compare. The files go to $ELFIN_BENCH_WAL_DIR
// (default: the system temporary directory); every line names the file system. Durability mode:
// fdatasync before an append is acknowledged.
#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <elfin/actor_group.hpp>
#include <elfin/actors/wal.hpp>
#include <elfin/handle.hpp>
#include <elfin/map_router.hpp>
#include <elfin/protocols/wal.hpp>
#include <elfin/topology.hpp>

#include "bench_common.hpp"
#include "bench_disk.hpp"

namespace {

namespace pw = elfin::protocols::wal;
using Clock = std::chrono::steady_clock;
constexpr std::string_view kBench = "wal_actors";

// --- the elfin side -----------------------------------------------------------------------------

struct Go {
  std::uint64_t partition = 0;
  std::uint64_t requests = 0;
  std::uint64_t per_request = 1;
  std::uint64_t payload = 128;
  ELFIN_MESSAGE(bench_wal_actors, Go, partition, requests, per_request, payload);
};
struct Done {
  std::uint64_t partition = 0;
  std::vector<std::uint32_t> latencies_us;
  std::string error;
  ELFIN_MESSAGE(bench_wal_actors, Done, partition, latencies_us, error);
};

struct Measured {
  std::vector<double> latencies_us;
  std::uint64_t syncs = 0;
  std::uint64_t bytes = 0;
};
std::mutex measured_mu;
Measured measured;  // written by the driver before report(), read by main after it

struct Shape {
  std::uint64_t partitions = 1;
  std::uint32_t wal_count = 1;
  std::uint64_t payload = 128;
  std::uint64_t concurrency = 64;
  std::uint64_t entries = 0;  ///< per run, all partitions
};

elfin::Task<> writer_run(elfin::Context<elfin::NoConfig, std::uint64_t> ctx, Go go) {
  Done done{go.partition, {}, {}};
  done.latencies_us.reserve(go.requests);
  const pw::Payload payload(go.payload, 0x5a);
  std::uint64_t index = 1;
  for (std::uint64_t r = 0; r < go.requests && done.error.empty(); ++r) {
    pw::AppendBatch batch{go.partition, {}};
    batch.entries.reserve(go.per_request);
    for (std::uint64_t i = 0; i < go.per_request; ++i) batch.entries.push_back({1, index++, payload});
    const auto t0 = Clock::now();
    auto answer = co_await ctx.request(std::move(batch));
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
    done.latencies_us.push_back(static_cast<std::uint32_t>(us));
    if (!answer) {
      done.error = elfin_bench::error_text("append", answer.error());
    } else if (!*answer) {
      done.error = pw::to_string(answer->error());
    }
  }
  co_await ctx.send(std::move(done));
}

elfin::Task<> writer(elfin::Context<elfin::NoConfig, std::uint64_t> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* go = envelope->get<Go>()) co_await writer_run(ctx, *go);
  }
}

elfin::Task<> driver(elfin::Context<> ctx, Shape shape) {
  // Every WAL actor has recovered once it answers a Flush (requests wait for recovery).
  for (std::uint32_t k = 0; k < shape.wal_count; ++k) {
    auto flushed = co_await ctx.request(pw::Flush{k});
    if (!flushed || !*flushed) {
      elfin_bench::report_error("the WAL did not start");
      co_return;
    }
  }
  const std::uint64_t per_request = shape.concurrency / shape.partitions;
  const std::uint64_t requests = shape.entries / shape.concurrency;
  const auto t0 = Clock::now();
  for (std::uint64_t p = 0; p < shape.partitions; ++p) {
    auto sent = co_await ctx.send(Go{p, requests, per_request, shape.payload});
    if (!sent) elfin_bench::report_error(elfin_bench::error_text("go", sent.error()));
  }
  Measured m;
  std::uint64_t done = 0;
  while (done < shape.partitions) {
    auto envelope = co_await ctx.recv();
    if (!envelope) co_return;
    if (const auto* d = envelope->get<Done>()) {
      if (!d->error.empty()) elfin_bench::report_error(d->error);
      for (auto us : d->latencies_us) m.latencies_us.push_back(us);
      ++done;
    }
  }
  const auto t1 = Clock::now();
  for (std::uint32_t k = 0; k < shape.wal_count; ++k) {
    const pw::WalStats stats = (co_await ctx.request(pw::GetStats{k})).value();
    m.syncs += stats.syncs;
    m.bytes += stats.bytes;
  }
  {
    std::lock_guard lock(measured_mu);
    measured = std::move(m);
  }
  elfin_bench::report({elfin_bench::seconds_between(t0, t1), requests * per_request * shape.partitions});
  while (co_await ctx.recv()) {
  }
}

elfin::Topology topology(const Shape& shape) {
  elfin::Topology topology;
  auto drivers = topology.local("driver");
  auto writers = topology.local("writers");
  auto wal = topology.local("wal");
  drivers.route_to(wal, elfin::filters::protocol("wal"));
  drivers.route_to(writers, elfin::filters::protocol("bench_wal_actors"));
  writers.route_to(wal, elfin::filters::protocol("wal"));
  writers.route_to(drivers, elfin::filters::protocol("bench_wal_actors"));
  drivers.mount(elfin::ActorGroup().exec([shape](elfin::Context<> ctx) { return driver(ctx, shape); })).entrypoint();
  writers.mount(elfin::ActorGroup()
                    .router(elfin::MapRouter<std::uint64_t>([](const elfin::Envelope& e) {
                      if (const auto* go = e.get<Go>()) return elfin::Outcome<std::uint64_t>::Unicast(go->partition);
                      return elfin::Outcome<std::uint64_t>::Default();
                    }))
                    .exec(writer));
  wal.mount(elfin::actors::wal::blueprint());
  return topology;
}

struct Run {
  elfin_bench::Figure figure;
  Measured measured;
};

Run run_wal(const Shape& shape, const elfin_bench::Options& opts) {
  elfin_bench::RunDir dir{"elfin-bench-wal-actors"};
  const std::string config = fmt::format("[wal]\ndir = \"{}\"\nwal_count = {}\n", dir.path().string(), shape.wal_count);
  Run run;
  run.figure = elfin_bench::run_elfin("wal_actors", topology(shape), config, opts.threads);
  std::lock_guard lock(measured_mu);
  run.measured = std::move(measured);
  return run;
}

/// `streams` threads, each appending `bytes` with pwrite(2) then fdatasync to a preallocated file,
/// `syncs` times in all.
Run run_raw(std::uint64_t streams, std::uint64_t bytes, std::uint64_t syncs, std::uint64_t ops) {
  elfin_bench::RunDir dir{"elfin-bench-wal-actors"};
  std::vector<std::thread> threads;
  threads.reserve(streams);
  std::vector<std::vector<double>> latencies(streams);
  std::vector<std::string> errors(streams);
  std::vector<int> fds;
  // Set up like a WAL segment before the clock starts: created, preallocated, synced, so the
  // fdatasyncs measured below need not log a new file size or inode each time.
  for (std::uint64_t s = 0; s < streams; ++s) {
    const auto path = (dir.path() / fmt::format("raw-{}.log", s)).string();
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("raw: open failed");
    fds.push_back(fd);
    const std::uint64_t mine = syncs / streams + 1;
    const auto room = static_cast<off_t>(std::max<std::uint64_t>(std::uint64_t{64} << 20, mine * bytes));
    if (::posix_fallocate(fd, 0, room) != 0 || ::fdatasync(fd) != 0) throw std::runtime_error("raw: prealloc failed");
  }
  // A spinning thread keeps a CPU busy during the raw run, as the runtime's threads do during the
  // WAL's: on a VM whose vCPU halts when idle, an idle process's fdatasync returns late (4.0 ms
  // at the median on the machine of README.md, against 0.2-1.2 ms with a busy core), which would
  // flatter the WAL.
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  const auto start = Clock::now();
  for (std::uint64_t s = 0; s < streams; ++s) {
    threads.emplace_back([&, s] {
      const int fd = fds[s];
      std::vector<std::byte> buffer(bytes, std::byte{0x5a});
      const std::uint64_t mine = syncs / streams + (s < syncs % streams ? 1 : 0);
      std::uint64_t offset = 0;
      for (std::uint64_t i = 0; i < mine; ++i) {
        const auto t0 = Clock::now();
        std::size_t done = 0;
        while (done < buffer.size()) {
          const ssize_t n = ::pwrite(fd, buffer.data() + done, buffer.size() - done, static_cast<off_t>(offset + done));
          if (n < 0 && errno == EINTR) continue;
          if (n < 0) {
            errors[s] = "write failed";
            break;
          }
          done += static_cast<std::size_t>(n);
        }
        offset += buffer.size();
        if (::fdatasync(fd) != 0) errors[s] = "fdatasync failed";
        latencies[s].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  stop.store(true, std::memory_order_relaxed);
  spinner.join();
  for (int fd : fds) ::close(fd);
  for (const auto& e : errors) {
    if (!e.empty()) throw std::runtime_error("raw: " + e);
  }
  Run run;
  run.figure = {seconds, ops};
  for (auto& l : latencies) run.measured.latencies_us.insert(run.measured.latencies_us.end(), l.begin(), l.end());
  run.measured.syncs = syncs;
  run.measured.bytes = bytes * syncs;
  return run;
}

bool run_shape(const std::string& name, Shape shape, const elfin_bench::Options& opts) {
  if (opts.quick) shape.entries = std::max<std::uint64_t>(shape.entries / 8, shape.concurrency * 4);
  // The one-partition run of the same K, record size and concurrency, alternated with this case's
  // runs so that the disk's mood swings hit both alike.
  Shape one = shape;
  one.partitions = 1;
  const bool compare = shape.partitions > 1;
  try {
    const std::uint64_t streams = std::min<std::uint64_t>(shape.partitions, shape.wal_count);
    if (opts.warmup) {
      auto w = run_wal(shape, opts);
      const std::uint64_t per_sync = w.measured.syncs ? w.measured.bytes / w.measured.syncs : 0;
      std::ignore = run_raw(streams, per_sync, w.measured.syncs, w.figure.ops);
      if (compare) std::ignore = run_wal(one, opts);
    }
    std::vector<elfin_bench::Figure> wal_figures, raw_figures, one_figures;
    std::vector<double> wal_lat, raw_lat;
    std::uint64_t syncs = 0, bytes = 0;
    for (unsigned i = 0; i < opts.reps; ++i) {
      if (compare) one_figures.push_back(run_wal(one, opts).figure);
      auto w = run_wal(shape, opts);
      wal_figures.push_back(w.figure);
      wal_lat.insert(wal_lat.end(), w.measured.latencies_us.begin(), w.measured.latencies_us.end());
      syncs += w.measured.syncs;
      bytes += w.measured.bytes;
      const std::uint64_t per_sync = w.measured.syncs ? w.measured.bytes / w.measured.syncs : 0;
      auto r = run_raw(streams, per_sync, w.measured.syncs, w.figure.ops);
      raw_figures.push_back(r.figure);
      raw_lat.insert(raw_lat.end(), r.measured.latencies_us.begin(), r.measured.latencies_us.end());
    }
    const auto ws = elfin_bench::summarize(wal_figures);
    const auto rs = elfin_bench::summarize(raw_figures);
    const double bytes_per_op = static_cast<double>(bytes) / static_cast<double>(ws.ops * opts.reps);
    std::string vs_one = "1.00";
    std::string one_ops = "-";
    if (compare) {
      const auto os = elfin_bench::summarize(one_figures);
      vs_one = fmt::format("{:.2f}", ws.ops_per_s / os.ops_per_s);
      one_ops = fmt::format("{:.0f}", os.ops_per_s);
    }
    fmt::print(
        "bench={} case={} partitions={} wal_count={} record_bytes={} in_flight={} entries_per_request={} "
        "wal_ops_per_s={:.0f} wal_ns_per_op={:.1f} wal_mb_per_s={:.2f} wal_payload_mb_per_s={:.2f} "
        "one_partition_ops_per_s={} vs_one_partition={} raw_mb_per_s={:.2f} raw_ratio={:.2f} bytes_per_sync={} "
        "syncs_per_s={:.0f} wal_p50_us={:.0f} wal_p99_us={:.0f} raw_p50_us={:.0f} raw_p99_us={:.0f} "
        "wal_range={:.0f}..{:.0f} raw_streams={} raw_prealloc=64MiB raw_spinner=1 durability=fdatasync fs={} reps={}\n",
        kBench, name, shape.partitions, shape.wal_count, shape.payload, shape.concurrency,
        shape.concurrency / shape.partitions, ws.ops_per_s, ws.ns_per_op, ws.ops_per_s * bytes_per_op / 1e6,
        ws.ops_per_s * static_cast<double>(shape.payload) / 1e6, one_ops, vs_one, rs.ops_per_s * bytes_per_op / 1e6,
        rs.ops_per_s > 0 ? ws.ops_per_s / rs.ops_per_s : 0.0, syncs ? bytes / syncs : 0,
        static_cast<double>(syncs) / static_cast<double>(opts.reps) / (static_cast<double>(ws.ops) / ws.ops_per_s),
        elfin_bench::percentile(wal_lat, 0.50), elfin_bench::percentile(wal_lat, 0.99),
        elfin_bench::percentile(raw_lat, 0.50), elfin_bench::percentile(raw_lat, 0.99), ws.min_ops_per_s,
        ws.max_ops_per_s, streams, elfin_bench::fs_name(elfin_bench::disk_root()), opts.reps);
    std::fflush(stdout);
    return true;
  } catch (const std::exception& e) {
    fmt::print("bench={} case={} error=\"{}\"\n", kBench, name, e.what());
    std::fflush(stdout);
    return false;
  }
}

std::vector<elfin_bench::Case> cases() {
  std::vector<elfin_bench::Case> out;
  for (std::uint64_t payload : {std::uint64_t{128}, std::uint64_t{4096}}) {
    const std::string size = payload == 128 ? "128" : "4k";
    const std::uint64_t entries = payload == 128 ? 64 * 400 : 64 * 200;
    for (std::uint32_t k : {1u, 2u, 4u, 8u}) {
      for (std::uint64_t p : {std::uint64_t{1}, std::uint64_t{8}, std::uint64_t{64}}) {
        const std::string name = fmt::format("p{}_k{}_{}", p, k, size);
        const Shape shape{p, k, payload, 64, entries};
        out.push_back({name, fmt::format("k{}_{}", k, size),
                       [name, shape](const elfin_bench::Options& o) { return run_shape(name, shape, o); }});
      }
    }
  }
  // 1024 partitions, next to one partition at the same 1024 entries in flight (run alongside).
  for (std::uint32_t k : {1u, 8u}) {
    const std::string name = fmt::format("p1024_k{}_128_c1024", k);
    const Shape shape{1024, k, 128, 1024, std::uint64_t{1024} * 40};
    out.push_back({name, fmt::format("k{}_128_c1024", k),
                   [name, shape](const elfin_bench::Options& o) { return run_shape(name, shape, o); }});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) { return elfin_bench::run_main(kBench, cases(), argc, argv); }
