#include <elfin/actors/partition/kv_state_machine.hpp>

#include <utility>

#include <msgpack.hpp>

namespace elfin::actors::partition {

namespace {

template <class T>
Bytes pack(const T& value) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, value);
  const auto* data = reinterpret_cast<const std::uint8_t*>(buffer.data());
  return Bytes(data, data + buffer.size());
}

template <class T>
T unpack(std::span<const std::uint8_t> bytes) {
  msgpack::object_handle handle = msgpack::unpack(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return handle.get().as<T>();
}

/// The snapshot's form: the map as a msgpack map of key -> {value, version}.
struct KvSnapshot {
  std::map<std::string, KvStateMachine::Value> data;
  ELFIN_PART(data);
};

}  // namespace

Bytes encode(const KvCommand& command) { return pack(command); }
KvCommand decode_kv_command(std::span<const std::uint8_t> bytes) { return unpack<KvCommand>(bytes); }
Bytes encode(const KvResponse& response) { return pack(response); }
KvResponse decode_kv_response(std::span<const std::uint8_t> bytes) { return unpack<KvResponse>(bytes); }

KvResponse KvStateMachine::get(const std::string& key) const {
  const auto it = data_.find(key);
  if (it == data_.end()) return KvResponse{};
  return KvResponse{true, true, it->second.value, it->second.version};
}

Bytes KvStateMachine::apply(std::uint64_t index, std::span<const std::uint8_t> bytes) {
  KvCommand command = decode_kv_command(bytes);
  KvResponse response;
  switch (command.op) {
    case KvOp::Get:
      response = get(command.key);
      break;
    case KvOp::Put:
      data_[command.key] = Value{std::move(command.value), index};
      response = KvResponse{true, true, {}, index};
      break;
    case KvOp::Delete:
      response.ok = data_.erase(command.key) > 0;
      break;
    case KvOp::Cas: {
      const auto it = data_.find(command.key);
      const std::uint64_t current = it == data_.end() ? 0 : it->second.version;
      if (current != command.expected_version) {
        response = get(command.key);
        response.ok = false;
        break;
      }
      data_[command.key] = Value{std::move(command.value), index};
      response = KvResponse{true, true, {}, index};
      break;
    }
  }
  return encode(response);
}

Bytes KvStateMachine::query(std::span<const std::uint8_t> bytes) const {
  const KvCommand command = decode_kv_command(bytes);
  return encode(get(command.key));
}

Bytes KvStateMachine::snapshot() const { return pack(KvSnapshot{data_}); }

void KvStateMachine::restore(std::span<const std::uint8_t> bytes) { data_ = unpack<KvSnapshot>(bytes).data; }

}  // namespace elfin::actors::partition
