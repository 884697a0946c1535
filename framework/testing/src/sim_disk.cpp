// A simulated node's disk: libs/wal's fault layer over real files, every call under one lock.
#include <elfin/testing/sim_disk.hpp>

#include <filesystem>
#include <mutex>
#include <utility>

#include <elfin/wal/posix_file_system.hpp>

namespace elfin::testing {

namespace lw = elfin::wal;

struct SimDisk::Shared {
  explicit Shared(std::string d) : dir(std::move(d)), fault(real, dir) {}
  std::string dir;
  std::mutex mu;
  lw::PosixFileSystem real;
  lw::FaultFileSystem fault;  // guarded by mu, and so are its files
};

namespace {

/// A file of the disk: each call under the disk's lock.
class LockedFile final : public lw::File {
 public:
  LockedFile(std::shared_ptr<SimDisk::Shared> shared, std::unique_ptr<lw::File> inner)
      : shared_(std::move(shared)), inner_(std::move(inner)) {}
  ~LockedFile() override {
    std::lock_guard lock(shared_->mu);
    inner_.reset();
  }
  lw::IoResult<std::size_t> read_at(std::uint64_t offset, std::span<std::byte> out) override {
    std::lock_guard lock(shared_->mu);
    return inner_->read_at(offset, out);
  }
  lw::IoResult<void> write_at(std::uint64_t offset, std::span<const std::byte> data) override {
    std::lock_guard lock(shared_->mu);
    return inner_->write_at(offset, data);
  }
  lw::IoResult<void> sync() override {
    std::lock_guard lock(shared_->mu);
    return inner_->sync();
  }
  lw::IoResult<void> truncate(std::uint64_t size) override {
    std::lock_guard lock(shared_->mu);
    return inner_->truncate(size);
  }
  lw::IoResult<void> allocate(std::uint64_t size) override {
    std::lock_guard lock(shared_->mu);
    return inner_->allocate(size);
  }
  lw::IoResult<std::uint64_t> size() override {
    std::lock_guard lock(shared_->mu);
    return inner_->size();
  }

 private:
  std::shared_ptr<SimDisk::Shared> shared_;
  std::unique_ptr<lw::File> inner_;
};

/// The disk's file layer, as the WAL actors see it.
class LockedFileSystem final : public lw::FileSystem {
 public:
  explicit LockedFileSystem(std::shared_ptr<SimDisk::Shared> shared) : shared_(std::move(shared)) {}
  lw::IoResult<std::unique_ptr<lw::File>> open(const std::string& path, lw::OpenMode mode) override {
    std::lock_guard lock(shared_->mu);
    auto file = shared_->fault.open(path, mode);
    if (!file) return elfin::Err{file.error()};
    return std::unique_ptr<lw::File>(std::make_unique<LockedFile>(shared_, std::move(*file)));
  }
  lw::IoResult<std::vector<std::string>> list(const std::string& dir) override {
    std::lock_guard lock(shared_->mu);
    return shared_->fault.list(dir);
  }
  lw::IoResult<void> create_dirs(const std::string& dir) override {
    std::lock_guard lock(shared_->mu);
    return shared_->fault.create_dirs(dir);
  }
  lw::IoResult<void> rename(const std::string& from, const std::string& to) override {
    std::lock_guard lock(shared_->mu);
    return shared_->fault.rename(from, to);
  }
  lw::IoResult<void> remove(const std::string& path) override {
    std::lock_guard lock(shared_->mu);
    return shared_->fault.remove(path);
  }
  lw::IoResult<void> sync_dir(const std::string& dir) override {
    std::lock_guard lock(shared_->mu);
    return shared_->fault.sync_dir(dir);
  }

 private:
  std::shared_ptr<SimDisk::Shared> shared_;
};

std::string created(std::string dir) {
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

SimDisk::SimDisk(std::string dir) : shared_(std::make_shared<Shared>(created(std::move(dir)))) {}
SimDisk::~SimDisk() = default;

const std::string& SimDisk::dir() const { return shared_->dir; }

std::shared_ptr<lw::FileSystem> SimDisk::file_system() const { return std::make_shared<LockedFileSystem>(shared_); }

void SimDisk::with_faults(const std::function<void(lw::FaultFileSystem&)>& use) {
  std::lock_guard lock(shared_->mu);
  use(shared_->fault);
}

void SimDisk::cut_power() {
  std::lock_guard lock(shared_->mu);
  shared_->fault.crash_after(0);
}

void SimDisk::power_loss(std::uint64_t torn_bytes) {
  std::lock_guard lock(shared_->mu);
  shared_->fault.power_loss(torn_bytes);
}

}  // namespace elfin::testing
