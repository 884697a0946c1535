// KvStateMachine: a key-value map with a version per key, the state machine the KV service
// replicates. Commands and queries are msgpack `KvCommand`s; responses are `KvResponse`s.
//
//   Put      key = value; the key's version becomes the command's log index
//   Delete   removes the key (ok = whether it existed)
//   Cas      Put only if the key's version is `expected_version` (0: the key must not exist);
//            otherwise ok = false and the response carries the current value and version
//   Get      (a query, or a command when a read must go through the log) the value and version
//
// Versions are log indexes, so they only grow and are the same on every replica.
//
// Thread safety: as StateMachine (one actor).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include <elfin/actors/partition/state_machine.hpp>
#include <elfin/evolution.hpp>

namespace elfin::actors::partition {

enum class KvOp : std::uint8_t { Get, Put, Delete, Cas };
ELFIN_ENUM(KvOp, Get, Put, Delete, Cas);

struct KvCommand {
  KvOp op = KvOp::Get;
  std::string key;
  std::string value;                   ///< Put, Cas
  std::uint64_t expected_version = 0;  ///< Cas
  ELFIN_PART(op, key, ELFIN_DEFAULT(value), ELFIN_DEFAULT(expected_version));
  friend bool operator==(const KvCommand&, const KvCommand&) = default;
};

struct KvResponse {
  bool ok = false;     ///< Put: always; Delete: the key existed; Cas: it matched; Get: found
  bool found = false;  ///< the key exists (after the command)
  std::string value;   ///< Get; Cas that did not match: the current value
  std::uint64_t version = 0;
  ELFIN_PART(ok, found, value, version);
  friend bool operator==(const KvResponse&, const KvResponse&) = default;
};

/// A command's or query's bytes.
[[nodiscard]] Bytes encode(const KvCommand& command);
/// Throws DecodeError on bytes that are not a KvCommand.
[[nodiscard]] KvCommand decode_kv_command(std::span<const std::uint8_t> bytes);
[[nodiscard]] Bytes encode(const KvResponse& response);
[[nodiscard]] KvResponse decode_kv_response(std::span<const std::uint8_t> bytes);

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
  [[nodiscard]] KvResponse get(const std::string& key) const;
  std::map<std::string, Value> data_;
};

}  // namespace elfin::actors::partition
