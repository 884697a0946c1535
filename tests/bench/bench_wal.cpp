// bench_wal: the WAL writer (libs/wal) against raw write + fdatasync on the same file system, in
// the same run, at equal bytes per sync.
//
//   wal_128   records of 128 bytes of payload, 64 per commit
//   wal_4k    records of 4 KiB of payload, 16 per commit
//   wal_4k_1m records of 4 KiB of payload, 256 per commit (about 1 MiB per sync: bandwidth)
//
// One op is one record made durable. A run commits `syncs` batches:
//   wal  Writer::append of each record of the batch (encoding: header, CRC-32C, copy of the
//        payload into the batch buffer), then Writer::commit (one pwrite, one fdatasync). The WAL
//        is recovered and its first segment created and preallocated before the clock starts
//        (default writer options: 64 MiB segments, preallocated).
//   raw  the same number of bytes per sync as the WAL writes (payload, headers and padding), built
//        into a buffer by memcpy, then one write(2) appended to a fresh file and one fdatasync.
//        No preallocation, no format, no checksum: the floor any WAL on this file system pays.
// The commit latency of a batch is measured from its first append (raw: its first copy) until the
// fdatasync returned. Runs alternate wal, raw, wal, raw, ... (after one warm-up of each), so load
// from elsewhere hits both alike.
//
// The files go to $ELFIN_BENCH_WAL_DIR (default: the system temporary directory); the line says
// which file system that is. Durability mode: fdatasync before a batch counts as done.
#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include <elfin/wal/format.hpp>
#include <elfin/wal/posix_file_system.hpp>
#include <elfin/wal/recovery.hpp>
#include <elfin/wal/writer.hpp>

#include "bench_common.hpp"
#include "bench_disk.hpp"

namespace {

namespace wal = elfin::wal;
using Clock = std::chrono::steady_clock;
constexpr std::string_view kBench = "wal";

struct Run {
  elfin_bench::Figure figure;
  std::vector<double> latencies_us;  ///< one per commit
  std::uint64_t bytes_per_sync = 0;
};

struct Shape {
  std::size_t payload = 0;
  std::size_t per_sync = 0;
  std::uint64_t syncs = 0;
};

std::string errno_text() { return std::error_code(errno, std::generic_category()).message(); }

double micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

Run run_wal(const Shape& shape) {
  elfin_bench::RunDir dir{"elfin-bench-wal"};
  wal::PosixFileSystem fs;
  wal::RecoveryOptions ro;
  ro.dir = dir.path().string();
  auto recovered = wal::recover(fs, ro);
  if (!recovered) throw std::runtime_error(wal::to_string(recovered.error()));
  auto writer = wal::Writer::open(fs, recovered->log, wal::WriterOptions{});
  if (!writer) throw std::runtime_error(wal::to_string(writer.error()));

  std::vector<std::byte> payload(shape.payload, std::byte{0x5a});
  Run run;
  run.latencies_us.reserve(shape.syncs);
  std::uint64_t index = 0;
  const auto start = Clock::now();
  for (std::uint64_t s = 0; s < shape.syncs; ++s) {
    const auto t0 = Clock::now();
    for (std::size_t r = 0; r < shape.per_sync; ++r) {
      ++index;
      payload[0] = static_cast<std::byte>(index);
      if (!writer->append(wal::Record{1, index % 8, 1, index, payload})) throw std::runtime_error("append failed");
    }
    auto durable = writer->commit();
    if (!durable) throw std::runtime_error(wal::to_string(durable.error()));
    run.latencies_us.push_back(micros(t0, Clock::now()));
    run.bytes_per_sync = durable->bytes;
  }
  run.figure = {std::chrono::duration<double>(Clock::now() - start).count(), shape.syncs * shape.per_sync};
  return run;
}

Run run_raw(const Shape& shape, std::uint64_t bytes_per_sync) {
  elfin_bench::RunDir dir{"elfin-bench-wal"};
  const auto path = (dir.path() / "raw.log").string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("open " + path + ": " + errno_text());
  std::vector<std::byte> payload(shape.payload, std::byte{0x5a});
  std::vector<std::byte> buffer(bytes_per_sync);
  const std::size_t stride = bytes_per_sync / shape.per_sync;
  Run run;
  run.bytes_per_sync = bytes_per_sync;
  run.latencies_us.reserve(shape.syncs);
  const auto start = Clock::now();
  for (std::uint64_t s = 0; s < shape.syncs; ++s) {
    const auto t0 = Clock::now();
    for (std::size_t r = 0; r < shape.per_sync; ++r)
      std::memcpy(buffer.data() + r * stride, payload.data(), payload.size());
    std::size_t done = 0;
    while (done < buffer.size()) {
      const ssize_t n = ::write(fd, buffer.data() + done, buffer.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::runtime_error("write: " + errno_text());
      done += static_cast<std::size_t>(n);
    }
    if (::fdatasync(fd) != 0) throw std::runtime_error("fdatasync: " + errno_text());
    run.latencies_us.push_back(micros(t0, Clock::now()));
  }
  run.figure = {std::chrono::duration<double>(Clock::now() - start).count(), shape.syncs * shape.per_sync};
  ::close(fd);
  return run;
}

bool run_shape(std::string_view name, const Shape& base, const elfin_bench::Options& opts) {
  Shape shape = base;
  if (opts.quick) shape.syncs = std::max<std::uint64_t>(shape.syncs / 10, 20);
  const std::uint64_t bytes_per_sync = shape.per_sync * wal::record_bytes(shape.payload);
  try {
    if (opts.warmup) {
      std::ignore = run_wal(shape);
      std::ignore = run_raw(shape, bytes_per_sync);
    }
    std::vector<elfin_bench::Figure> wal_figures, raw_figures;
    std::vector<double> wal_lat, raw_lat;
    std::uint64_t wal_bytes = 0;
    for (unsigned i = 0; i < opts.reps; ++i) {
      auto w = run_wal(shape);
      wal_figures.push_back(w.figure);
      wal_lat.insert(wal_lat.end(), w.latencies_us.begin(), w.latencies_us.end());
      wal_bytes = w.bytes_per_sync;
      auto r = run_raw(shape, bytes_per_sync);
      raw_figures.push_back(r.figure);
      raw_lat.insert(raw_lat.end(), r.latencies_us.begin(), r.latencies_us.end());
    }
    if (wal_bytes != bytes_per_sync) throw std::runtime_error("the WAL wrote another number of bytes per sync");
    const auto ws = elfin_bench::summarize(wal_figures);
    const auto rs = elfin_bench::summarize(raw_figures);
    auto mb = [&](const elfin_bench::Stats& s, double bytes_per_op) { return s.ops_per_s * bytes_per_op / 1e6; };
    const double disk_per_op = static_cast<double>(bytes_per_sync) / static_cast<double>(shape.per_sync);
    fmt::print(
        "bench={} case={} wal_ops_per_s={:.0f} wal_ns_per_op={:.1f} wal_mb_per_s={:.2f} wal_payload_mb_per_s={:.2f} "
        "raw_ops_per_s={:.0f} raw_ns_per_op={:.1f} raw_mb_per_s={:.2f} ratio={:.2f} bytes_per_sync={} "
        "wal_p50_us={:.0f} wal_p99_us={:.0f} raw_p50_us={:.0f} raw_p99_us={:.0f} wal_range={:.0f}..{:.0f} "
        "raw_range={:.0f}..{:.0f} record_bytes={} records_per_sync={} syncs={} durability=fdatasync "
        "wal_prealloc=64MiB raw_prealloc=none fs={} reps={}\n",
        kBench, name, ws.ops_per_s, ws.ns_per_op, mb(ws, disk_per_op), mb(ws, static_cast<double>(shape.payload)),
        rs.ops_per_s, rs.ns_per_op, mb(rs, disk_per_op), rs.ops_per_s > 0 ? ws.ops_per_s / rs.ops_per_s : 0.0,
        bytes_per_sync, elfin_bench::percentile(wal_lat, 0.50), elfin_bench::percentile(wal_lat, 0.99),
        elfin_bench::percentile(raw_lat, 0.50), elfin_bench::percentile(raw_lat, 0.99), ws.min_ops_per_s,
        ws.max_ops_per_s, rs.min_ops_per_s, rs.max_ops_per_s, shape.payload, shape.per_sync, shape.syncs,
        elfin_bench::fs_name(elfin_bench::disk_root()), opts.reps);
    std::fflush(stdout);
    return true;
  } catch (const std::exception& e) {
    fmt::print("bench={} case={} error=\"{}\"\n", kBench, name, e.what());
    std::fflush(stdout);
    return false;
  }
}

std::vector<elfin_bench::Case> cases() {
  return {
      {"wal_128", "wal", [](const elfin_bench::Options& o) { return run_shape("wal_128", {128, 64, 1000}, o); }},
      {"wal_4k", "wal", [](const elfin_bench::Options& o) { return run_shape("wal_4k", {4096, 16, 1000}, o); }},
      {"wal_4k_1m", "wal", [](const elfin_bench::Options& o) { return run_shape("wal_4k_1m", {4096, 256, 200}, o); }},
  };
}

}  // namespace

int main(int argc, char** argv) { return elfin_bench::run_main(kBench, cases(), argc, argv); }
