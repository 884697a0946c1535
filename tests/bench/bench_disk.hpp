// What the disk benchmarks (bench_wal, bench_wal_actors) share: where their files go, which file
// system that is (every line names it: a sync on tmpfs costs nothing), a directory per run, and
// latency percentiles.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace elfin_bench {

/// `$ELFIN_BENCH_WAL_DIR`, else the temporary directory. Call before starting threads (getenv).
[[nodiscard]] std::filesystem::path disk_root();

/// "ext4", "xfs", "btrfs", "tmpfs", "overlayfs", the magic number in hex, or "unknown".
[[nodiscard]] std::string fs_name(const std::filesystem::path& dir);

/// A fresh directory `<disk_root>/<prefix>-XXXXXX` for one run, removed with everything in it.
class RunDir {
 public:
  explicit RunDir(std::string_view prefix);
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;
  ~RunDir();
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// The value at fraction `p` (0..1) of the sorted values, nearest rank; 0 when empty.
[[nodiscard]] double percentile(std::vector<double> values, double p);

}  // namespace elfin_bench
