#include <elfin/actors/partition/snapshot_file.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <msgpack.hpp>

#include <elfin/wal/crc32c.hpp>

namespace elfin::actors::partition {

namespace {

namespace fs = std::filesystem;
using protocols::raft::Snapshot;

constexpr char kMagic[8] = {'E', 'L', 'F', 'I', 'N', 'S', 'N', 'P'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 24;

template <class T>
void put(std::uint8_t* out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out[i] = static_cast<std::uint8_t>((value >> (8 * i)) & 0xFF);
}
template <class T>
T get(const std::uint8_t* in) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<T>(in[i]) << (8 * i));
  return value;
}

std::uint32_t crc_of(const std::uint8_t* data, std::size_t size) {
  return elfin::wal::crc32c(std::as_bytes(std::span(data, size)));
}

std::string errno_text(std::string_view op, const std::string& path) {
  return fmt::format("{} {}: {}", op, path, std::generic_category().message(errno));
}

/// Closes the descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Result<void, std::string> sync_dir(const std::string& dir) {
  Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd < 0) return Err{errno_text("open directory", dir)};
  if (::fsync(d.fd) != 0) return Err{errno_text("fsync directory", dir)};
  return {};
}

struct Named {
  std::uint64_t index = 0;
  std::uint64_t term = 0;
  fs::path path;
};

std::optional<Named> parse_name(const fs::path& path) {
  const std::string name = path.filename().string();
  // snapshot-<16 hex>-<16 hex>.snap
  if (name.size() != 9 + 16 + 1 + 16 + 5 || !name.starts_with("snapshot-") || !name.ends_with(".snap")) {
    return std::nullopt;
  }
  Named out;
  out.path = path;
  try {
    std::size_t used = 0;
    out.index = std::stoull(name.substr(9, 16), &used, 16);
    if (used != 16) return std::nullopt;
    out.term = std::stoull(name.substr(26, 16), &used, 16);
    if (used != 16) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return out;
}

std::vector<Named> list(const std::string& dir, bool remove_temporaries) {
  std::vector<Named> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const fs::path& path = entry.path();
    if (path.extension() == ".tmp" && remove_temporaries) {
      fs::remove(path, ec);  // a write that did not finish: it never had its name
      continue;
    }
    if (auto named = parse_name(path)) out.push_back(std::move(*named));
  }
  std::sort(out.begin(), out.end(), [](const Named& a, const Named& b) { return a.index > b.index; });
  return out;
}

}  // namespace

Result<std::string, std::string> write_snapshot(const std::string& dir, const Snapshot& snapshot) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Err{fmt::format("create {}: {}", dir, ec.message())};
  msgpack::sbuffer body;
  msgpack::pack(body, snapshot);
  std::vector<std::uint8_t> bytes(kHeaderBytes + body.size());
  std::memcpy(bytes.data(), kMagic, sizeof(kMagic));
  put<std::uint32_t>(bytes.data() + 8, kVersion);
  std::memcpy(bytes.data() + kHeaderBytes, body.data(), body.size());
  put<std::uint32_t>(bytes.data() + 12, crc_of(bytes.data() + kHeaderBytes, body.size()));
  put<std::uint64_t>(bytes.data() + 16, body.size());

  std::string path =
      (fs::path(dir) / fmt::format("snapshot-{:016x}-{:016x}.snap", snapshot.index, snapshot.term)).string();
  const std::string temp = path + ".tmp";
  {
    Fd file{::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (file.fd < 0) return Err{errno_text("create", temp)};
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(file.fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Err{errno_text("write", temp)};
      done += static_cast<std::size_t>(n);
    }
    if (::fdatasync(file.fd) != 0) return Err{errno_text("fdatasync", temp)};
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) return Err{errno_text("rename", temp)};
  if (auto synced = sync_dir(dir); !synced) return Err{std::move(synced).error()};
  // The new one is durable: the older ones are no longer needed.
  bool removed = false;
  for (const Named& older : list(dir, false)) {
    if (older.index < snapshot.index) removed = fs::remove(older.path, ec) || removed;
  }
  if (removed) {
    if (auto synced = sync_dir(dir); !synced) return Err{std::move(synced).error()};
  }
  return path;
}

Result<std::optional<Snapshot>, std::string> load_latest_snapshot(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return std::optional<Snapshot>{};
  const auto found = list(dir, true);
  if (found.empty()) return std::optional<Snapshot>{};
  const std::string path = found.front().path.string();
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return Err{errno_text("open", path)};
  std::vector<std::uint8_t> bytes;
  std::uint8_t chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(file.fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Err{errno_text("read", path)};
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Err{fmt::format("{}: not a snapshot file (bad magic or shorter than its header)", path)};
  }
  if (get<std::uint32_t>(bytes.data() + 8) != kVersion) {
    return Err{fmt::format("{}: snapshot format version {} (expected {})", path, get<std::uint32_t>(bytes.data() + 8),
                           kVersion)};
  }
  const auto length = get<std::uint64_t>(bytes.data() + 16);
  if (length != bytes.size() - kHeaderBytes) {
    return Err{
        fmt::format("{}: body length {} but {} bytes follow the header", path, length, bytes.size() - kHeaderBytes)};
  }
  if (get<std::uint32_t>(bytes.data() + 12) != crc_of(bytes.data() + kHeaderBytes, length)) {
    return Err{fmt::format("{}: CRC mismatch", path)};
  }
  try {
    msgpack::object_handle handle =
        msgpack::unpack(reinterpret_cast<const char*>(bytes.data() + kHeaderBytes), static_cast<std::size_t>(length));
    Snapshot snapshot = handle.get().as<Snapshot>();
    if (snapshot.index != found.front().index || snapshot.term != found.front().term) {
      return Err{
          fmt::format("{}: holds index {} term {}, not what its name says", path, snapshot.index, snapshot.term)};
    }
    return std::optional<Snapshot>{std::move(snapshot)};
  } catch (const std::exception& e) {
    return Err{fmt::format("{}: undecodable body: {}", path, e.what())};
  }
}

}  // namespace elfin::actors::partition
