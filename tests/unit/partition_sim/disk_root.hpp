// DiskRoot: a directory for the simulated nodes' disks, removed with everything in it at the end;
// on tmpfs when there is one, since the simulated disk models power loss itself and real
// fdatasyncs would only slow a run down.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace psim {

class DiskRoot {
 public:
  /// `name` starts the directory's name (e.g. "elfin-partition-sim").
  explicit DiskRoot(std::string_view name) {
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm")
                                           ? std::filesystem::path("/dev/shm")
                                           : std::filesystem::temp_directory_path();
    std::string pattern = (base / (std::string(name) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  DiskRoot(const DiskRoot&) = delete;
  DiskRoot& operator=(const DiskRoot&) = delete;
  ~DiskRoot() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace psim
