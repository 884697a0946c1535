#include <elfin/protocols/kv/command.hpp>

#include <msgpack.hpp>

namespace elfin::protocols::kv {

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

}  // namespace

Bytes encode(const KvCommand& command) { return pack(command); }
KvCommand decode_kv_command(std::span<const std::uint8_t> bytes) { return unpack<KvCommand>(bytes); }
Bytes encode(const KvResponse& response) { return pack(response); }
KvResponse decode_kv_response(std::span<const std::uint8_t> bytes) { return unpack<KvResponse>(bytes); }

}  // namespace elfin::protocols::kv
