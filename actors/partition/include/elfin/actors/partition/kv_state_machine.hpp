// KvStateMachine: a key-value map with a version per key, the state machine the KV service
// replicates (the partition group's default). Commands and queries are protocols::kv
// `KvCommand`s; responses are `KvResponse`s (elfin/protocols/kv/command.hpp says what each does).
//
// Versions are log indexes: a write sets the key's version to its entry's index, so versions
// only grow and are the same on every replica. A snapshot holds every key with its version, so a
// replica restored from one continues with the same versions.
//
// Thread safety: as StateMachine (one actor).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include <elfin/actors/partition/state_machine.hpp>
#include <elfin/evolution.hpp>
#include <elfin/protocols/kv/command.hpp>

namespace elfin::actors::partition {

class KvStateMachine final : public StateMachine {
 public:
  struct Value {
    std::string value;
    std::uint64_t version = 0;
    ELFIN_PART(value, version);
    friend bool operator==(const Value&, const Value&) = default;
  };

  [[nodiscard]] Bytes apply(std::uint64_t index, std::span<const std::uint8_t> command) override;
  [[nodiscard]] Bytes query(std::span<const std::uint8_t> query) const override;
  [[nodiscard]] Bytes snapshot() const override;
  void restore(std::span<const std::uint8_t> snapshot) override;

  [[nodiscard]] const std::map<std::string, Value>& data() const noexcept { return data_; }

 private:
  [[nodiscard]] protocols::kv::KvResponse get(const std::string& key) const;
  [[nodiscard]] protocols::kv::KvResponse scan(const std::string& prefix, std::uint32_t limit) const;
  /// The response of a read-only command (Get, Scan); anything else is no query.
  [[nodiscard]] protocols::kv::KvResponse read(const protocols::kv::KvCommand& command) const;
  std::map<std::string, Value> data_;
};

}  // namespace elfin::actors::partition
