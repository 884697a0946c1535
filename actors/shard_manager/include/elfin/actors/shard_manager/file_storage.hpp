// FileStorage: the shard manager's state in one local file, replaced atomically — written to
// `<path>.tmp`, fsync'd, renamed over `<path>`, and the directory fsync'd so the rename itself
// survives a power loss. A crash at any point leaves either the old file or the new one.
//
// The file is `ELFINSM1` followed by the state's msgpack encoding; anything else is Corrupt.
// One manager per file: the revision check (Conflict) reads the file before each save, which
// fences an old instance that kept running, but two managers racing on one file are not
// supported (use Redis to share a store).
//
// Thread safety: one actor at a time.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <elfin/actors/shard_manager/storage.hpp>

namespace elfin::actors::shard_manager {

class FileStorage final : public AssignmentStorage {
 public:
  explicit FileStorage(std::filesystem::path path) : path_(std::move(path)) {}

  [[nodiscard]] Result<std::optional<StoredState>, StorageError> load() override;
  [[nodiscard]] Result<void, StorageError> save(const StoredState& state) override;
  [[nodiscard]] std::string describe() const override;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace elfin::actors::shard_manager
