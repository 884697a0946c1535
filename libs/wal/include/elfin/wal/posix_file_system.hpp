// The real file layer: open/pread/pwrite/fdatasync/ftruncate/posix_fallocate/rename/unlink and
// fsync of a directory, retried on EINTR and on short transfers.
//
// Thread safety: the file system is stateless and may be shared; each File by one thread at a time.
#pragma once

#include <elfin/wal/file_system.hpp>

namespace elfin::wal {

class PosixFileSystem final : public FileSystem {
 public:
  [[nodiscard]] IoResult<std::unique_ptr<File>> open(const std::string& path, OpenMode mode) override;
  [[nodiscard]] IoResult<std::vector<std::string>> list(const std::string& dir) override;
  [[nodiscard]] IoResult<void> create_dirs(const std::string& dir) override;
  [[nodiscard]] IoResult<void> rename(const std::string& from, const std::string& to) override;
  [[nodiscard]] IoResult<void> remove(const std::string& path) override;
  [[nodiscard]] IoResult<void> sync_dir(const std::string& dir) override;
};

}  // namespace elfin::wal
