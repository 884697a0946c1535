// AssignmentStorage: where the shard manager keeps the registered pods and the assignment map,
// behind one contract with two implementations — a local file (FileStorage, the default) and
// Redis (RedisStorage, a store several manager hosts can share).
//
// The contract, which tests/unit/shard_manager runs against both:
//   - `save` replaces the whole state at once: a later `load` sees all of it or none of it, never
//     a mix of two saves, also across a crash of the manager in the middle of a save;
//   - `save` succeeds only if the stored revision is lower than the state's (Conflict otherwise):
//     a manager that lost its place (an old instance still running) cannot overwrite a newer map;
//   - `save` returns only once the state is durable as far as the backend makes it (fsync for the
//     file; Redis's own persistence settings for Redis);
//   - `load` of an empty store is `std::nullopt`; of a damaged one, `Corrupt` (never a guess).
// The manager persists every change before it acknowledges or assigns anything, so a storage that
// fails stops acknowledgements and never loses or forks a map.
//
// Thread safety: used by the manager's actor only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include <elfin/message.hpp>
#include <elfin/protocols/sharding/assignments.hpp>
#include <elfin/result.hpp>

namespace elfin::actors::shard_manager {

/// Everything the manager persists. `assignments` holds the pods (in registration order), the
/// map with its epoch and the cluster's shard function.
struct StoredState {
  std::uint64_t revision = 0;  ///< grows by one with every save
  protocols::sharding::Assignments assignments;
  ELFIN_PART(revision, assignments);

  friend bool operator==(const StoredState&, const StoredState&) = default;
};

enum class StorageErrorKind : std::uint8_t {
  Io,           ///< reading or writing failed (file system, connection)
  Corrupt,      ///< what is stored cannot be read back
  Conflict,     ///< the store holds the same or a newer revision: someone else wrote it
  Unavailable,  ///< the backend cannot be reached right now
};

struct StorageError {
  StorageErrorKind kind = StorageErrorKind::Io;
  std::string detail;

  friend bool operator==(const StorageError&, const StorageError&) = default;
};

class AssignmentStorage {
 public:
  virtual ~AssignmentStorage() = default;
  /// The last saved state, or nullopt if nothing was ever saved.
  [[nodiscard]] virtual Result<std::optional<StoredState>, StorageError> load() = 0;
  /// Replaces the stored state with `state` if `state.revision` is higher than the stored one.
  [[nodiscard]] virtual Result<void, StorageError> save(const StoredState& state) = 0;
  /// `file /var/lib/elfin/shards.state`, `redis 127.0.0.1:6379 key elfin:sharding`.
  [[nodiscard]] virtual std::string describe() const = 0;
};

[[nodiscard]] std::string_view to_string(StorageErrorKind kind) noexcept;

/// The msgpack encoding both implementations store.
[[nodiscard]] std::string encode_state(const StoredState& state);
[[nodiscard]] Result<StoredState, StorageError> decode_state(std::string_view bytes);

}  // namespace elfin::actors::shard_manager

template <>
struct fmt::formatter<elfin::actors::shard_manager::StorageError> : fmt::formatter<std::string_view> {
  auto format(const elfin::actors::shard_manager::StorageError& e, fmt::format_context& ctx) const {
    return fmt::format_to(ctx.out(), "{}: {}", elfin::actors::shard_manager::to_string(e.kind), e.detail);
  }
};
