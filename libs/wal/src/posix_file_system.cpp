#include <elfin/wal/posix_file_system.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

namespace elfin::wal {

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

namespace {

Err<Errno> last_error() { return Err{Errno{errno}}; }

class PosixFile final : public File {
 public:
  explicit PosixFile(int fd) : fd_(fd) {}
  ~PosixFile() override { ::close(fd_); }

  IoResult<std::size_t> read_at(std::uint64_t offset, std::span<std::byte> out) override {
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return last_error();
      }
      if (n == 0) break;  // end of file
      done += static_cast<std::size_t>(n);
    }
    return done;
  }

  IoResult<void> write_at(std::uint64_t offset, std::span<const std::byte> data) override {
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        return last_error();
      }
      done += static_cast<std::size_t>(n);  // a short write is retried; the retry reports the error
    }
    return {};
  }

  IoResult<void> sync() override {
    // No retry on EINTR or anything else: a failed fdatasync is final (see error.hpp, SyncFailed).
    if (::fdatasync(fd_) != 0) return last_error();
    return {};
  }

  IoResult<void> truncate(std::uint64_t size) override {
    while (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      if (errno != EINTR) return last_error();
    }
    return {};
  }

  IoResult<void> allocate(std::uint64_t size) override {
    // posix_fallocate returns the error instead of setting errno. glibc emulates it by writing
    // zeros where the file system has no fallocate, which is slower but has the same effect.
    const int rc = ::posix_fallocate(fd_, 0, static_cast<off_t>(size));
    if (rc != 0) return Err{Errno{rc}};
    return {};
  }

  IoResult<std::uint64_t> size() override {
    struct stat st{};
    if (::fstat(fd_, &st) != 0) return last_error();
    return static_cast<std::uint64_t>(st.st_size);
  }

 private:
  int fd_;
};

int open_flags(OpenMode mode) {
  switch (mode) {
    case OpenMode::Read:
      return O_RDONLY;
    case OpenMode::ReadWrite:
      return O_RDWR;
    case OpenMode::CreateNew:
      return O_RDWR | O_CREAT | O_EXCL;
    case OpenMode::CreateTrunc:
      return O_RDWR | O_CREAT | O_TRUNC;
  }
  return O_RDONLY;
}

}  // namespace

IoResult<std::unique_ptr<File>> PosixFileSystem::open(const std::string& path, OpenMode mode) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), open_flags(mode) | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return last_error();
  return std::unique_ptr<File>(std::make_unique<PosixFile>(fd));
}

IoResult<std::vector<std::string>> PosixFileSystem::list(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec)) names.push_back(it->path().filename().string());
  }
  if (ec) return Err{Errno{ec.value()}};
  std::sort(names.begin(), names.end());
  return names;
}

IoResult<void> PosixFileSystem::create_dirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Err{Errno{ec.value()}};
  return {};
}

IoResult<void> PosixFileSystem::rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return last_error();
  return {};
}

IoResult<void> PosixFileSystem::remove(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return last_error();
  return {};
}

IoResult<void> PosixFileSystem::sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return last_error();
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Err{Errno{err}};
  return {};
}

}  // namespace elfin::wal
