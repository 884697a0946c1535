// RedisStorage: the shard manager's state in Redis (hiredis), so a standby manager on another
// host finds the map where the last one left it.
//
// One hash per cluster, `<key>`, with two fields: `revision` and `state` (the same msgpack
// encoding as the file). A save is one Lua script, atomic in Redis: it compares the stored
// revision and writes both fields only if the new one is higher (Conflict otherwise). Durability
// is Redis's: with `appendonly yes` and `appendfsync always` a saved map survives a crash of the
// Redis host; with snapshots only, the last seconds may be lost. Every call has a timeout; a
// connection that failed is reopened by the next call.
//
// Thread safety: one actor at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <elfin/actors/shard_manager/storage.hpp>

namespace elfin::actors::shard_manager {

struct RedisOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  std::string key = "elfin:sharding";       ///< the hash holding `revision` and `state`
  std::chrono::milliseconds timeout{1000};  ///< connect and per command
};

class RedisStorage final : public AssignmentStorage {
 public:
  explicit RedisStorage(RedisOptions options);
  ~RedisStorage() override;
  RedisStorage(const RedisStorage&) = delete;
  RedisStorage& operator=(const RedisStorage&) = delete;

  [[nodiscard]] Result<std::optional<StoredState>, StorageError> load() override;
  [[nodiscard]] Result<void, StorageError> save(const StoredState& state) override;
  [[nodiscard]] std::string describe() const override;

 private:
  struct Connection;
  Result<Connection*, StorageError> connection();
  RedisOptions options_;
  std::unique_ptr<Connection> connection_;
};

}  // namespace elfin::actors::shard_manager
