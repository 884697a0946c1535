// KvStateMachine: a key-value map with a version per key, the state machine the KV service
// replicates (the partition group's default). Commands and queries are protocols::kv
// `KvCommand`s; responses are `KvResponse`s (elfin/protocols/kv/command.hpp says what each does).
//
// Versions are log indexes: a write sets the key's version to its entry's index, so versions
// only grow and are the same on every replica. A snapshot holds every key with its version, so a
// replica restored from one continues with the same versions.
//
// Writes with a request id (KvCommand's `origin` and `sequence`) are applied once: the response of
// each of the last `kRecentWrites` such writes is kept (in the snapshot too), and a command with
// one of those ids answers that response again and changes nothing. Every replica keeps the same
// ids, in apply order, so they all answer alike. A retry must therefore come before that many other
// identified writes reached the shard (a front retries within its request_timeout).
//
// Thread safety: as StateMachine (one actor).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <utility>

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

  /// How many identified writes' responses are kept for retries.
  static constexpr std::size_t kRecentWrites = 16384;

  /// An identified write applied recently: its id and response.
  struct RecentWrite {
    std::uint64_t origin = 0;
    std::uint64_t sequence = 0;
    Bytes response;
    ELFIN_PART(origin, sequence, response);
  };

 private:
  [[nodiscard]] protocols::kv::KvResponse get(const std::string& key) const;
  [[nodiscard]] protocols::kv::KvResponse scan(const std::string& prefix, std::uint32_t limit) const;
  /// The response of a read-only command (Get, Scan); anything else is no query.
  [[nodiscard]] protocols::kv::KvResponse read(const protocols::kv::KvCommand& command) const;
  /// Applies `command` (no id check).
  [[nodiscard]] Bytes apply_once(std::uint64_t index, protocols::kv::KvCommand command);
  void remember(std::uint64_t origin, std::uint64_t sequence, const Bytes& response);

  std::map<std::string, Value> data_;
  std::deque<RecentWrite> recent_;                                               ///< oldest first
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> recent_index_;  ///< id -> position + evicted_
  std::size_t evicted_ = 0;  ///< identified writes dropped from the front of `recent_` so far
};

}  // namespace elfin::actors::partition
