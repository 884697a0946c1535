// FileStorage (see file_storage.hpp): temp file, fsync, rename, fsync the directory.
#include <elfin/actors/shard_manager/file_storage.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

namespace elfin::actors::shard_manager {

namespace {

constexpr std::string_view kMagic = "ELFINSM1";

StorageError io_error(std::string_view what, const std::filesystem::path& path, int error) {
  return StorageError{StorageErrorKind::Io,
                      fmt::format("{} {}: {}", what, path.string(), std::generic_category().message(error))};
}

/// Closes the descriptor when the scope ends, whatever path it takes.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Result<void, StorageError> write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Err{io_error("write", path, errno)};
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

}  // namespace

Result<std::optional<StoredState>, StorageError> FileStorage::load() {
  Fd file{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) {
    if (errno == ENOENT) return std::optional<StoredState>{};
    return Err{io_error("open", path_, errno)};
  }
  std::string bytes;
  char chunk[16384];
  for (;;) {
    const ssize_t n = ::read(file.fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Err{io_error("read", path_, errno)};
    }
    if (n == 0) break;
    bytes.append(chunk, static_cast<std::size_t>(n));
  }
  if (!std::string_view{bytes}.starts_with(kMagic)) {
    return Err{
        StorageError{StorageErrorKind::Corrupt, fmt::format("{}: not a shard manager state file", path_.string())}};
  }
  auto state = decode_state(std::string_view{bytes}.substr(kMagic.size()));
  if (!state) {
    return Err{StorageError{state.error().kind, fmt::format("{}: {}", path_.string(), state.error().detail)}};
  }
  return std::optional<StoredState>{std::move(state).value()};
}

Result<void, StorageError> FileStorage::save(const StoredState& state) {
  // The revision check: refuse to go back (or sideways) in history.
  auto current = load();
  if (!current) return Err{current.error()};  // a damaged file is kept for a person to look at
  if (const std::optional<StoredState>& stored = current.value();
      stored.has_value() && stored.value().revision >= state.revision) {
    return Err{
        StorageError{StorageErrorKind::Conflict, fmt::format("{} holds revision {}, not older than {}", path_.string(),
                                                             stored.value().revision, state.revision)}};
  }

  std::filesystem::path temp = path_;
  temp += ".tmp";
  std::string bytes(kMagic);
  bytes += encode_state(state);
  {
    Fd file{::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (file.fd < 0) return Err{io_error("create", temp, errno)};
    if (auto written = write_all(file.fd, bytes, temp); !written) return written;
    if (::fsync(file.fd) != 0) return Err{io_error("fsync", temp, errno)};
    const int fd = file.fd;
    file.fd = -1;
    if (::close(fd) != 0) return Err{io_error("close", temp, errno)};
  }
  if (::rename(temp.c_str(), path_.c_str()) != 0) return Err{io_error("rename to", path_, errno)};
  // The rename is durable only once the directory is.
  std::filesystem::path dir = path_.parent_path();
  if (dir.empty()) dir = ".";
  Fd directory{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (directory.fd < 0) return Err{io_error("open directory", dir, errno)};
  if (::fsync(directory.fd) != 0) return Err{io_error("fsync directory", dir, errno)};
  return {};
}

std::string FileStorage::describe() const { return fmt::format("file {}", path_.string()); }

}  // namespace elfin::actors::shard_manager
