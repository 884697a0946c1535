#include "bench_disk.hpp"

#include <sys/statfs.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace elfin_bench {

std::filesystem::path disk_root() {
  const char* dir = std::getenv("ELFIN_BENCH_WAL_DIR");  // NOLINT(concurrency-mt-unsafe): before any thread
  if (dir != nullptr && *dir != '\0') return dir;
  return std::filesystem::temp_directory_path();
}

std::string fs_name(const std::filesystem::path& dir) {
  struct statfs st{};
  if (::statfs(dir.c_str(), &st) != 0) return "unknown";
  switch (static_cast<unsigned long>(st.f_type)) {
    case 0xEF53:
      return "ext4";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x01021994:
      return "tmpfs";
    case 0x794c7630:
      return "overlayfs";
    default:
      return fmt::format("0x{:x}", static_cast<unsigned long>(st.f_type));
  }
}

RunDir::RunDir(std::string_view prefix) {
  const auto root = disk_root();
  std::string pattern = (root / fmt::format("{}-XXXXXX", prefix)).string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed in " + root.string());
  path_ = pattern;
}

RunDir::~RunDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto at = static_cast<std::size_t>(std::llround(p * static_cast<double>(values.size() - 1)));
  return values[std::min(at, values.size() - 1)];
}

}  // namespace elfin_bench
