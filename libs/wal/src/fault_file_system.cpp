#include <elfin/wal/fault_file_system.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

namespace elfin::wal {

struct FaultFileSystem::Node {
  std::vector<std::byte> data;     ///< what the file holds now (page cache)
  std::vector<std::byte> durable;  ///< what it held at its last successful fdatasync
};

namespace {
constexpr Errno kCrashed{EIO};
}  // namespace

// A file of the model: every call goes to the real file and is mirrored in the node.
class FaultFile final : public File {
 public:
  FaultFile(FaultFileSystem& fs, std::shared_ptr<FaultFileSystem::Node> node, std::unique_ptr<File> real)
      : fs_(&fs), node_(std::move(node)), real_(std::move(real)) {}

  IoResult<std::size_t> read_at(std::uint64_t offset, std::span<std::byte> out) override {
    if (fs_->read_error_) return Err{*fs_->read_error_};
    return real_->read_at(offset, out);
  }

  IoResult<void> write_at(std::uint64_t offset, std::span<const std::byte> data) override {
    if (!fs_->admit()) return Err{kCrashed};
    if (fs_->write_error_) return Err{*fs_->write_error_};
    auto& bytes = node_->data;
    const std::uint64_t end = offset + data.size();
    const std::uint64_t growth = end > bytes.size() ? end - bytes.size() : 0;
    const std::uint64_t granted = fs_->take_space(growth);
    std::size_t n = data.size();
    if (granted < growth) {
      const std::uint64_t allowed_end = bytes.size() + granted;
      n = static_cast<std::size_t>(allowed_end > offset ? allowed_end - offset : 0);
    }
    if (n > 0) {
      if (auto w = real_->write_at(offset, data.first(n)); !w) return w;
      if (bytes.size() < offset + n) bytes.resize(offset + n);
      std::memcpy(bytes.data() + offset, data.data(), n);
    }
    if (n < data.size()) return Err{Errno{ENOSPC}};
    return {};
  }

  IoResult<void> sync() override {
    if (!fs_->admit()) return Err{kCrashed};
    ++fs_->syncs_;
    // A failed fdatasync leaves the durable image as it was: nothing since the last good one is
    // known to be on disk.
    if (fs_->sync_error_) return Err{*fs_->sync_error_};
    if (auto s = real_->sync(); !s) return s;
    node_->durable = node_->data;
    return {};
  }

  IoResult<void> truncate(std::uint64_t size) override {
    if (!fs_->admit()) return Err{kCrashed};
    const std::uint64_t growth = size > node_->data.size() ? size - node_->data.size() : 0;
    if (fs_->take_space(growth) < growth) return Err{Errno{ENOSPC}};
    if (auto t = real_->truncate(size); !t) return t;
    node_->data.resize(size);
    return {};
  }

  IoResult<void> allocate(std::uint64_t size) override {
    if (!fs_->admit()) return Err{kCrashed};
    if (fs_->write_error_) return Err{*fs_->write_error_};
    const std::uint64_t growth = size > node_->data.size() ? size - node_->data.size() : 0;
    if (fs_->take_space(growth) < growth) return Err{Errno{ENOSPC}};  // posix_fallocate is all or nothing
    if (auto a = real_->allocate(size); !a) return a;
    if (node_->data.size() < size) node_->data.resize(size);
    return {};
  }

  IoResult<std::uint64_t> size() override { return real_->size(); }

 private:
  FaultFileSystem* fs_;
  std::shared_ptr<FaultFileSystem::Node> node_;
  std::unique_ptr<File> real_;
};

FaultFileSystem::FaultFileSystem(FileSystem& real, std::string dir) : real_(&real), dir_(std::move(dir)) {
  auto names = real_->list(dir_);
  if (!names) return;  // an empty (or not yet created) directory
  for (const auto& name : *names) std::ignore = node_for(join_path(dir_, name));
}

FaultFileSystem::~FaultFileSystem() = default;

bool FaultFileSystem::in_dir(const std::string& path) const {
  return path.size() > dir_.size() && path.compare(0, dir_.size(), dir_) == 0 &&
         path.find('/', dir_.size() + 1) == std::string::npos;
}

std::shared_ptr<FaultFileSystem::Node> FaultFileSystem::node_for(const std::string& path) {
  if (auto it = names_.find(path); it != names_.end()) return it->second;
  // A file the model has not seen: it was there before, so it is durable as it is.
  auto node = std::make_shared<Node>();
  if (auto file = real_->open(path, OpenMode::Read)) {
    if (auto size = (*file)->size()) {
      node->data.resize(*size);
      if (auto n = (*file)->read_at(0, node->data)) node->data.resize(*n);
    }
  }
  node->durable = node->data;
  names_[path] = node;
  durable_names_[path] = node;
  return node;
}

bool FaultFileSystem::admit() {
  if (crashed_) return false;
  if (crash_after_ && mutating_calls_ >= *crash_after_) {
    crashed_ = true;
    return false;
  }
  ++mutating_calls_;
  return true;
}

std::uint64_t FaultFileSystem::take_space(std::uint64_t growth) {
  if (!space_left_) return growth;
  const std::uint64_t granted = std::min(growth, *space_left_);
  *space_left_ -= granted;
  return granted;
}

void FaultFileSystem::clear_faults() {
  sync_error_.reset();
  write_error_.reset();
  read_error_.reset();
  space_left_.reset();
  crash_after_.reset();
  crashed_ = false;
}

IoResult<std::unique_ptr<File>> FaultFileSystem::open(const std::string& path, OpenMode mode) {
  const bool creates = mode == OpenMode::CreateNew || mode == OpenMode::CreateTrunc;
  if (!in_dir(path)) return real_->open(path, mode);
  if (creates && !admit()) return Err{kCrashed};
  const bool existed = names_.contains(path);
  if (!existed && !creates) std::ignore = node_for(path);  // there before, outside the model
  auto real = real_->open(path, mode);
  if (!real) return Err{real.error()};
  std::shared_ptr<Node> node;
  if (existed || !creates) {
    node = names_.at(path);
    if (mode == OpenMode::CreateTrunc) node->data.clear();  // the same inode, emptied (not yet durably)
  } else {
    node = std::make_shared<Node>();  // a new inode; its name is durable after sync_dir
    names_[path] = node;
  }
  return std::unique_ptr<File>(std::make_unique<FaultFile>(*this, std::move(node), std::move(*real)));
}

IoResult<std::vector<std::string>> FaultFileSystem::list(const std::string& dir) { return real_->list(dir); }

IoResult<void> FaultFileSystem::create_dirs(const std::string& dir) { return real_->create_dirs(dir); }

IoResult<void> FaultFileSystem::rename(const std::string& from, const std::string& to) {
  if (!admit()) return Err{kCrashed};
  if (auto r = real_->rename(from, to); !r) return r;
  if (in_dir(from) && in_dir(to)) {
    auto node = node_for(from);
    names_.erase(from);
    names_[to] = std::move(node);
  }
  return {};
}

IoResult<void> FaultFileSystem::remove(const std::string& path) {
  if (!admit()) return Err{kCrashed};
  if (in_dir(path)) std::ignore = node_for(path);
  if (auto r = real_->remove(path); !r) return r;
  names_.erase(path);
  return {};
}

IoResult<void> FaultFileSystem::sync_dir(const std::string& dir) {
  if (!admit()) return Err{kCrashed};
  ++syncs_;
  if (sync_error_) return Err{*sync_error_};
  if (auto s = real_->sync_dir(dir); !s) return s;
  if (dir == dir_) durable_names_ = names_;
  return {};
}

void FaultFileSystem::power_loss(std::uint64_t torn_bytes) {
  // What survives of each file: its durable image, plus the first `torn_bytes` of what differs.
  for (auto& [path, node] : durable_names_) {
    if (torn_bytes == 0) continue;
    const auto& data = node->data;
    auto& image = node->durable;
    std::size_t from = 0;
    while (from < data.size() && from < image.size() && data[from] == image[from]) ++from;
    if (from == data.size()) continue;  // nothing unsynced (or only a truncation)
    const std::size_t to = static_cast<std::size_t>(std::min<std::uint64_t>(data.size(), from + torn_bytes));
    if (image.size() < to) image.resize(to);
    std::copy(data.begin() + static_cast<std::ptrdiff_t>(from), data.begin() + static_cast<std::ptrdiff_t>(to),
              image.begin() + static_cast<std::ptrdiff_t>(from));
  }
  // Everything the model knows of goes; then the durable image is written back.
  for (const auto& [path, node] : names_) std::ignore = real_->remove(path);
  for (const auto& [path, node] : durable_names_) std::ignore = real_->remove(path);
  for (const auto& [path, node] : durable_names_) {
    auto file = real_->open(path, OpenMode::CreateTrunc);
    if (!file || !(*file)->write_at(0, node->durable)) {
      throw std::runtime_error("FaultFileSystem::power_loss: cannot rewrite " + path);
    }
  }
  names_ = durable_names_;
  for (auto& [path, node] : names_) node->data = node->durable;
  clear_faults();
}

}  // namespace elfin::wal
