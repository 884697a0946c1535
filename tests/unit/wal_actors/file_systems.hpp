// File layers for the WAL actors' tests, wrapped around libs/wal's real and fault-injecting ones:
//
//   LockedFaultFs  libs/wal's FaultFileSystem (power loss, EIO, ENOSPC) behind a mutex, so the
//                  test thread may inject faults while a WAL actor's I/O thread uses it
//   HookFs         counts fdatasyncs, and can hold the I/O thread inside sync() or list() until
//                  the test releases it (to see what is, and is not, answered meanwhile)
//
// Thread safety: every member from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <elfin/wal/fault_file_system.hpp>
#include <elfin/wal/posix_file_system.hpp>

namespace wal_test {

namespace lw = elfin::wal;

/// A FileSystem whose calls all take `mu`: wraps `inner`'s files too.
class LockedFs : public lw::FileSystem {
 public:
  LockedFs(lw::FileSystem& inner, std::mutex& mu) : inner_(&inner), mu_(&mu) {}

  class LockedFile final : public lw::File {
   public:
    LockedFile(std::unique_ptr<lw::File> f, std::mutex& mu) : f_(std::move(f)), mu_(&mu) {}
    ~LockedFile() override {
      std::lock_guard lock(*mu_);
      f_.reset();
    }
    lw::IoResult<std::size_t> read_at(std::uint64_t o, std::span<std::byte> out) override {
      std::lock_guard lock(*mu_);
      return f_->read_at(o, out);
    }
    lw::IoResult<void> write_at(std::uint64_t o, std::span<const std::byte> d) override {
      std::lock_guard lock(*mu_);
      return f_->write_at(o, d);
    }
    lw::IoResult<void> sync() override {
      std::lock_guard lock(*mu_);
      return f_->sync();
    }
    lw::IoResult<void> truncate(std::uint64_t s) override {
      std::lock_guard lock(*mu_);
      return f_->truncate(s);
    }
    lw::IoResult<void> allocate(std::uint64_t s) override {
      std::lock_guard lock(*mu_);
      return f_->allocate(s);
    }
    lw::IoResult<std::uint64_t> size() override {
      std::lock_guard lock(*mu_);
      return f_->size();
    }

   private:
    std::unique_ptr<lw::File> f_;
    std::mutex* mu_;
  };

  lw::IoResult<std::unique_ptr<lw::File>> open(const std::string& path, lw::OpenMode mode) override {
    std::lock_guard lock(*mu_);
    auto f = inner_->open(path, mode);
    if (!f) return elfin::Err{f.error()};
    return std::unique_ptr<lw::File>(std::make_unique<LockedFile>(std::move(*f), *mu_));
  }
  lw::IoResult<std::vector<std::string>> list(const std::string& dir) override {
    std::lock_guard lock(*mu_);
    return inner_->list(dir);
  }
  lw::IoResult<void> create_dirs(const std::string& dir) override {
    std::lock_guard lock(*mu_);
    return inner_->create_dirs(dir);
  }
  lw::IoResult<void> rename(const std::string& from, const std::string& to) override {
    std::lock_guard lock(*mu_);
    return inner_->rename(from, to);
  }
  lw::IoResult<void> remove(const std::string& path) override {
    std::lock_guard lock(*mu_);
    return inner_->remove(path);
  }
  lw::IoResult<void> sync_dir(const std::string& dir) override {
    std::lock_guard lock(*mu_);
    return inner_->sync_dir(dir);
  }

 private:
  lw::FileSystem* inner_;
  std::mutex* mu_;
};

/// The fault model of one directory, shared by a WAL actor's I/O thread and the test.
class LockedFaultFs {
 public:
  explicit LockedFaultFs(const std::string& dir)
      : fault_(posix_, dir), locked_(std::make_shared<LockedFs>(fault_, mu_)) {}
  /// The file layer to give the WAL group (destroy the group before power_loss).
  [[nodiscard]] std::shared_ptr<lw::FileSystem> fs() const { return locked_; }
  /// Runs `f` on the fault model under the lock.
  template <class F>
  auto with(F f) {
    std::lock_guard lock(mu_);
    return f(fault_);
  }

 private:
  std::mutex mu_;
  lw::PosixFileSystem posix_;
  lw::FaultFileSystem fault_;
  std::shared_ptr<LockedFs> locked_;
};

/// Counts fdatasyncs and holds sync() or list() at a gate while the test wants.
class HookFs : public lw::FileSystem {
 public:
  explicit HookFs(std::shared_ptr<lw::FileSystem> inner) : inner_(std::move(inner)) {}

  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool closed = false;
    int waiting = 0;

    void pass() {
      std::unique_lock lock(mu);
      ++waiting;
      cv.notify_all();
      cv.wait(lock, [&] { return !closed; });
      --waiting;
    }
    void close() {
      std::lock_guard lock(mu);
      closed = true;
    }
    void open() {
      {
        std::lock_guard lock(mu);
        closed = false;
      }
      cv.notify_all();
    }
    /// Waits until a thread is held at the gate.
    bool wait_held(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
      std::unique_lock lock(mu);
      return cv.wait_for(lock, timeout, [&] { return waiting > 0; });
    }
  };

  class HookFile final : public lw::File {
   public:
    HookFile(std::unique_ptr<lw::File> f, HookFs& fs) : f_(std::move(f)), fs_(&fs) {}
    lw::IoResult<std::size_t> read_at(std::uint64_t o, std::span<std::byte> out) override {
      return f_->read_at(o, out);
    }
    lw::IoResult<void> write_at(std::uint64_t o, std::span<const std::byte> d) override { return f_->write_at(o, d); }
    lw::IoResult<void> sync() override {
      fs_->sync_gate.pass();
      auto r = f_->sync();
      fs_->syncs.fetch_add(1, std::memory_order_relaxed);
      return r;
    }
    lw::IoResult<void> truncate(std::uint64_t s) override { return f_->truncate(s); }
    lw::IoResult<void> allocate(std::uint64_t s) override { return f_->allocate(s); }
    lw::IoResult<std::uint64_t> size() override { return f_->size(); }

   private:
    std::unique_ptr<lw::File> f_;
    HookFs* fs_;
  };

  lw::IoResult<std::unique_ptr<lw::File>> open(const std::string& path, lw::OpenMode mode) override {
    auto f = inner_->open(path, mode);
    if (!f) return elfin::Err{f.error()};
    return std::unique_ptr<lw::File>(std::make_unique<HookFile>(std::move(*f), *this));
  }
  lw::IoResult<std::vector<std::string>> list(const std::string& dir) override {
    list_gate.pass();
    return inner_->list(dir);
  }
  lw::IoResult<void> create_dirs(const std::string& dir) override { return inner_->create_dirs(dir); }
  lw::IoResult<void> rename(const std::string& from, const std::string& to) override {
    return inner_->rename(from, to);
  }
  lw::IoResult<void> remove(const std::string& path) override { return inner_->remove(path); }
  lw::IoResult<void> sync_dir(const std::string& dir) override { return inner_->sync_dir(dir); }

  std::atomic<std::uint64_t> syncs{0};  ///< File::sync calls (fdatasync of segments)
  Gate sync_gate;
  Gate list_gate;

 private:
  std::shared_ptr<lw::FileSystem> inner_;
};

}  // namespace wal_test
