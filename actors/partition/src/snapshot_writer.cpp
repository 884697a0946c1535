#include "snapshot_writer.hpp"

#include <memory>
#include <mutex>
#include <utility>

#include <elfin/actors/partition/snapshot_file.hpp>

namespace elfin::actors::partition::internal {

namespace {

using Hook = std::function<void(const std::string&, std::uint64_t)>;

std::mutex& hook_mutex() {
  static std::mutex instance;
  return instance;
}
std::shared_ptr<const Hook>& hook_slot() {
  static std::shared_ptr<const Hook> instance;
  return instance;
}

}  // namespace

Result<std::string, std::string> write_snapshot_file(const std::string& dir,
                                                     const protocols::raft::Snapshot& snapshot) {
  std::shared_ptr<const Hook> hook;
  {
    std::lock_guard lock(hook_mutex());
    hook = hook_slot();
  }
  if (hook) (*hook)(dir, snapshot.index);
  return write_snapshot(dir, snapshot);
}

void set_snapshot_write_hook(Hook hook) {
  std::lock_guard lock(hook_mutex());
  hook_slot() = hook ? std::make_shared<const Hook>(std::move(hook)) : nullptr;
}

}  // namespace elfin::actors::partition::internal
