#include <elfin/actors/partition/kv_state_machine.hpp>

#include <stdexcept>
#include <utility>
#include <vector>

#include <msgpack.hpp>

namespace elfin::actors::partition {

namespace {

namespace pk = protocols::kv;

/// The snapshot's form: the map as a msgpack map of key -> {value, version}.
struct KvSnapshot {
  std::map<std::string, KvStateMachine::Value> data;
  std::vector<KvStateMachine::RecentWrite> recent{};  ///< oldest first
  ELFIN_PART(data, ELFIN_DEFAULT(recent));
};

Bytes pack(const KvSnapshot& snapshot) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, snapshot);
  const auto* data = reinterpret_cast<const std::uint8_t*>(buffer.data());
  return Bytes(data, data + buffer.size());
}

pk::KvResponse written(std::uint64_t index) { return pk::KvResponse{true, true, {}, index, {}, false}; }

}  // namespace

pk::KvResponse KvStateMachine::get(const std::string& key) const {
  const auto it = data_.find(key);
  if (it == data_.end()) return pk::KvResponse{};
  return pk::KvResponse{true, true, it->second.value, it->second.version, {}, false};
}

pk::KvResponse KvStateMachine::scan(const std::string& prefix, std::uint32_t limit) const {
  pk::KvResponse response;
  response.ok = true;
  for (auto it = data_.lower_bound(prefix); it != data_.end() && it->first.starts_with(prefix); ++it) {
    if (response.entries.size() == limit) {
      response.more = true;
      break;
    }
    response.entries.push_back(pk::KeyValue{it->first, it->second.value, it->second.version});
  }
  return response;
}

pk::KvResponse KvStateMachine::read(const pk::KvCommand& command) const {
  if (command.op == pk::KvOp::Scan) return scan(command.key, command.limit);
  return get(command.key);
}

Bytes KvStateMachine::apply(std::uint64_t index, std::span<const std::uint8_t> bytes) {
  pk::KvCommand command = pk::decode_kv_command(bytes);
  const bool writes = command.op != pk::KvOp::Get && command.op != pk::KvOp::Scan && command.op != pk::KvOp::Other;
  if (!writes || command.origin == 0) return apply_once(index, std::move(command));
  if (auto it = recent_index_.find({command.origin, command.sequence}); it != recent_index_.end()) {
    return recent_.at(it->second - evicted_).response;  // applied already: the same answer again
  }
  const std::uint64_t origin = command.origin;
  const std::uint64_t sequence = command.sequence;
  Bytes response = apply_once(index, std::move(command));
  remember(origin, sequence, response);
  return response;
}

void KvStateMachine::remember(std::uint64_t origin, std::uint64_t sequence, const Bytes& response) {
  recent_index_[{origin, sequence}] = evicted_ + recent_.size();
  recent_.push_back(RecentWrite{origin, sequence, response});
  if (recent_.size() > kRecentWrites) {
    recent_index_.erase({recent_.front().origin, recent_.front().sequence});
    recent_.pop_front();
    ++evicted_;
  }
}

Bytes KvStateMachine::apply_once(std::uint64_t index, pk::KvCommand command) {
  pk::KvResponse response;
  // One descent of the map per command: the position found serves the version check and the
  // write (a put of a new key is inserted there).
  const auto it = data_.lower_bound(command.key);
  const bool found = it != data_.end() && it->first == command.key;
  const std::uint64_t current = found ? it->second.version : 0;
  const auto store = [&] {
    if (found) {
      it->second = Value{std::move(command.value), index};
    } else {
      data_.emplace_hint(it, std::move(command.key), Value{std::move(command.value), index});
    }
  };
  switch (command.op) {
    case pk::KvOp::Get:
    case pk::KvOp::Scan:
    case pk::KvOp::Other:  // a newer front's op: answered as a read, changes nothing
      response = read(command);
      break;
    case pk::KvOp::Put:
      store();
      response = written(index);
      break;
    case pk::KvOp::Delete:
      response.ok = found;
      if (found) data_.erase(it);
      break;
    case pk::KvOp::Cas:
      if (current != command.expected_version) {
        response = get(command.key);
        response.ok = false;
        break;
      }
      store();
      response = written(index);
      break;
    case pk::KvOp::DeleteIfVersion:
      if (current != command.expected_version) {
        response = get(command.key);
        response.ok = false;
        break;
      }
      // found = false afterwards; `version` says what was deleted (0: nothing existed).
      response.ok = true;
      response.version = current;
      if (found) data_.erase(it);
      break;
  }
  return encode(response);
}

Bytes KvStateMachine::query(std::span<const std::uint8_t> bytes) const {
  return encode(read(pk::decode_kv_command(bytes)));
}

Bytes KvStateMachine::snapshot() const { return pack(KvSnapshot{data_, {recent_.begin(), recent_.end()}}); }

void KvStateMachine::restore(std::span<const std::uint8_t> bytes) {
  msgpack::object_handle handle = msgpack::unpack(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  KvSnapshot snapshot = handle.get().as<KvSnapshot>();
  data_ = std::move(snapshot.data);
  recent_.clear();
  recent_index_.clear();
  evicted_ = 0;
  for (auto& write : snapshot.recent) remember(write.origin, write.sequence, write.response);
}

}  // namespace elfin::actors::partition
