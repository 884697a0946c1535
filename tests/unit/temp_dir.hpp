// A temporary directory for tests that need real files (configs, topologies, simulated disks);
// removed with everything in it.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace elfin::test {

class TempDir {
 public:
  /// Where the directory goes. `memory`: on tmpfs when there is one (/dev/shm), for files whose
  /// durability the test models itself (a simulated disk) and whose real fdatasyncs would only
  /// slow it down; else the temporary directory.
  enum class Base { temp, memory };

  /// `name` starts the directory's name.
  explicit TempDir(std::string_view name = "elfin-test", Base base = Base::temp) {
    const bool memory = base == Base::memory && std::filesystem::is_directory("/dev/shm");
    const std::filesystem::path root = memory ? "/dev/shm" : std::filesystem::temp_directory_path();
    std::string pattern = (root / (std::string(name) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  /// Writes (or overwrites) `name` with `text`; returns its path.
  std::string write(std::string_view name, std::string_view text) const {
    const auto file = path_ / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out << text;
    return file.string();
  }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  /// The path of `name` inside the directory (not created).
  [[nodiscard]] std::string file(std::string_view name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// The whole contents of `file` ("" if it cannot be read).
[[nodiscard]] inline std::string read_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace elfin::test
