// The storage contract's shared pieces: error names and the encoding both backends store.
#include <elfin/actors/shard_manager/storage.hpp>

#include <exception>

#include <msgpack.hpp>

namespace elfin::actors::shard_manager {

std::string_view to_string(StorageErrorKind kind) noexcept {
  switch (kind) {
    case StorageErrorKind::Io:
      return "i/o error";
    case StorageErrorKind::Corrupt:
      return "corrupt state";
    case StorageErrorKind::Conflict:
      return "conflict";
    case StorageErrorKind::Unavailable:
      return "unavailable";
  }
  return "storage error";
}

std::string encode_state(const StoredState& state) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, state);
  return std::string(buffer.data(), buffer.size());
}

Result<StoredState, StorageError> decode_state(std::string_view bytes) {
  try {
    msgpack::object_handle handle = msgpack::unpack(bytes.data(), bytes.size());
    StoredState state = handle.get().as<StoredState>();
    const auto& a = state.assignments;
    for (std::int32_t index : a.owners) {
      if (index < -1 || (index >= 0 && static_cast<std::size_t>(index) >= a.pods.size())) {
        return Err{
            StorageError{StorageErrorKind::Corrupt, fmt::format("an owner index {} of {} pods", index, a.pods.size())}};
      }
    }
    return state;
  } catch (const std::exception& e) {
    return Err{StorageError{StorageErrorKind::Corrupt, fmt::format("undecodable state: {}", e.what())}};
  }
}

}  // namespace elfin::actors::shard_manager
