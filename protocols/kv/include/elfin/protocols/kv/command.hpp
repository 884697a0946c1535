// The KV state machine's command and response: what the KV front proposes to (or asks of) a
// shard's partition, as bytes inside protocols::raft's Propose/Read, and what it answers.
//
//   Get              value and version                    (a query, or a command)
//   Put              key = value; version := the entry's log index
//   Delete           removes the key                      ok: it existed
//   Cas              Put if version == expected_version   ok: it matched, else the current
//                    (0: the key must not exist)              value and version
//   DeleteIfVersion  Delete if version == expected_version
//   Scan             keys starting with `key` in order, at most `limit`; `more` if others match
//
// A write may carry a request id (`origin`, `sequence`; origin 0: none). The state machine applies
// a write with an id it applied recently only once: the entry proposed again (the front retrying a
// Put whose first attempt timed out, or a copy of a request the network delivered twice) answers
// what the first application answered and changes nothing, so a retried write is applied once.
//
// Thread safety: plain value types and pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <elfin/evolution.hpp>
#include <elfin/protocols/kv.hpp>

namespace elfin::protocols::kv {

enum class KvOp : std::uint8_t { Get, Put, Delete, Cas, DeleteIfVersion, Scan, Other };
ELFIN_ENUM(KvOp, Get, Put, Delete, Cas, DeleteIfVersion, Scan, ELFIN_OTHER(Other));

struct KvCommand {
  KvOp op = KvOp::Get;
  std::string key;                     ///< Scan: the prefix
  std::string value;                   ///< Put, Cas
  std::uint64_t expected_version = 0;  ///< Cas, DeleteIfVersion
  std::uint32_t limit = 0;             ///< Scan
  std::uint64_t origin = 0;            ///< who asked (a front incarnation); 0: no request id
  std::uint64_t sequence = 0;          ///< the request's number at `origin`
  ELFIN_PART(op, key, ELFIN_DEFAULT(value), ELFIN_DEFAULT(expected_version), ELFIN_DEFAULT(limit),
             ELFIN_DEFAULT(origin), ELFIN_DEFAULT(sequence));
  friend bool operator==(const KvCommand&, const KvCommand&) = default;
};

struct KvResponse {
  bool ok = false;     ///< Put: always; Delete: the key existed; Cas, DeleteIfVersion: it matched;
                       ///< Get: found; Scan: always
  bool found = false;  ///< the key exists (after the command)
  std::string value;   ///< Get; a Cas that did not match: the current value
  std::uint64_t version = 0;
  std::vector<KeyValue> entries{};  ///< Scan
  bool more = false;                ///< Scan: more keys match than `limit`
  ELFIN_PART(ok, found, value, version, ELFIN_DEFAULT(entries), ELFIN_DEFAULT(more));
  friend bool operator==(const KvResponse&, const KvResponse&) = default;
};

/// A command's or query's bytes.
[[nodiscard]] Bytes encode(const KvCommand& command);
/// Throws DecodeError on bytes that are not a KvCommand.
[[nodiscard]] KvCommand decode_kv_command(std::span<const std::uint8_t> bytes);
[[nodiscard]] Bytes encode(const KvResponse& response);
[[nodiscard]] KvResponse decode_kv_response(std::span<const std::uint8_t> bytes);

}  // namespace elfin::protocols::kv
