// The KV service's protocol: what a client asks the KV front (`kv` group, on every pod) and what
// it answers. Keys map to one of the front's `shards` (1024) shards, each a Raft group of partition actors;
// the front finds the shard's leader and answers with the typed result.
//
//   Put              key = value                               -> Written (the new version)
//   Get              the value and version, linearizable       -> Found
//                    (`stale = true`: the replica's own state, possibly behind the leader)
//   Delete           removes the key                           -> Deleted
//   Cas              Put only if the key's version is `expected_version` (0: the key must not
//                    exist)                                    -> Written, or VersionMismatch
//   DeleteIfVersion  Delete only if the version matches        -> Deleted, or VersionMismatch
//   Scan             keys starting with `prefix`, in key order, at most `limit`; one `shard`, or
//                    merged across every shard by the front    -> Scanned
//   Leaders          which node leads each shard, as far as the front knows -> LeaderTable
//   Leave            the pod leaves the cluster (with a shard manager): its replicas move to
//                    the other pods while it keeps serving     -> Left
//
// Versions: a key's version is the Raft log index of the entry that last wrote it in its shard.
// It grows with every write of the key, is the same on every replica, and 0 means "absent".
// Versions of keys in different shards are not comparable.
//
// Semantics: a write is acknowledged once its entry is committed (durable on a majority of the
// shard's replicas) and applied on the leader. A request answered Timeout may or may not have
// been applied (the leader changed, or the deadline passed while it was in flight).
//
// Every struct is a msgpack map with named fields (fields added later are ELFIN_DEFAULT; enums
// travel by name), so fronts and clients of different versions understand each other.
//
// Thread safety: plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <elfin/evolution.hpp>
#include <elfin/message.hpp>
#include <elfin/result.hpp>

namespace elfin::protocols::kv {

/// The Raft log index of the key's last write in its shard; 0: the key does not exist.
using Version = std::uint64_t;
using ShardId = std::uint32_t;
using Bytes = std::vector<std::uint8_t>;

/// The number of shards keys hash to, jump(xxh64(key), kShards): the service's (the KV front's
/// `shards` config key, whose default this is).
inline constexpr ShardId kShards = 1024;

// --- errors ----------------------------------------------------------------------------------

/// Why a request was not served, and what the caller can do about it.
enum class KvErrorKind : std::uint8_t {
  NotLeader,        ///< the asked replica does not lead the shard: retry at `leader_hint` (0:
                    ///< unknown). The front retries this itself; clients see it only between fronts
  VersionMismatch,  ///< Cas / DeleteIfVersion: the key's version is `current_version`, not the expected one
  Timeout,          ///< no answer within the deadline: a write may or may not have been applied
  Unavailable,      ///< no replica could serve (no leader, pods down, recovering); nothing was applied
  BadRequest,       ///< a request that makes no sense (an empty key, a limit of 0, a shard out of range)
  Other,            ///< a kind this build does not know (from a newer front); `detail` says what
};
ELFIN_ENUM(KvErrorKind, NotLeader, VersionMismatch, Timeout, Unavailable, BadRequest, ELFIN_OTHER(Other));

struct KvError {
  KvErrorKind kind = KvErrorKind::Unavailable;
  std::uint64_t leader_hint = 0;  ///< NotLeader: the node believed to lead the shard (0: unknown);
                                  ///< VersionMismatch from a front: the node whose replica led it
  Version current_version = 0;    ///< VersionMismatch: the key's version now (0: it does not exist)
  ShardId shard = 0;
  std::string detail;  ///< for people
  ELFIN_PART(kind, leader_hint, current_version, shard, detail);
  friend bool operator==(const KvError&, const KvError&) = default;
};

// --- results ---------------------------------------------------------------------------------

// Where the answer came from, for a client that sends each shard's requests to its leader's pod
// (elfin::kv::Client): `leader`, the node whose replica led the key's shard and served the request
// (0: unknown, as for a stale read), and `shards`, the front's shard count (0: an older front), so
// the client maps keys to shards as the fronts do. They say nothing about the key: == ignores them.

/// A Put or Cas applied: the key's new version.
struct Written {
  Version version = 0;
  std::uint16_t leader = 0;
  ShardId shards = 0;
  ELFIN_PART(version, ELFIN_DEFAULT(leader), ELFIN_DEFAULT(shards));
  friend bool operator==(const Written& a, const Written& b) { return a.version == b.version; }
};

/// A Get's answer.
struct Found {
  bool found = false;
  std::string value;
  Version version = 0;  ///< 0 when not found
  std::uint16_t leader = 0;
  ShardId shards = 0;
  ELFIN_PART(found, value, version, ELFIN_DEFAULT(leader), ELFIN_DEFAULT(shards));
  friend bool operator==(const Found& a, const Found& b) {
    return a.found == b.found && a.value == b.value && a.version == b.version;
  }
};

/// A Delete or DeleteIfVersion applied.
struct Deleted {
  bool existed = false;  ///< the key existed (and is gone now)
  std::uint16_t leader = 0;
  ShardId shards = 0;
  ELFIN_PART(existed, ELFIN_DEFAULT(leader), ELFIN_DEFAULT(shards));
  friend bool operator==(const Deleted& a, const Deleted& b) { return a.existed == b.existed; }
};

struct KeyValue {
  std::string key;
  std::string value;
  Version version = 0;
  ELFIN_PART(key, value, version);
  friend bool operator==(const KeyValue&, const KeyValue&) = default;
};

/// A Scan's answer: the first `limit` matching keys in key order.
struct Scanned {
  std::vector<KeyValue> entries;
  bool more = false;  ///< more keys match than were returned
  ELFIN_PART(entries, more);
  friend bool operator==(const Scanned&, const Scanned&) = default;
};

/// The pod is out of the shard manager's map (as of `epoch`): its replicas are on their way to
/// the other pods.
struct Left {
  std::uint64_t epoch = 0;
  ELFIN_PART(epoch);
  friend bool operator==(const Left&, const Left&) = default;
};

// --- client requests (to the `kv` front) -------------------------------------------------------
//
// Writes may carry a request id (`origin`: the client, unique per client incarnation; `sequence`:
// the request's number there; origin 0: none, the front gives one). A client that sends a write
// again (to another pod, after its pod went away) with the same id has it applied once: the
// shard's state machine answers a repeated id with the first application's answer.

struct Put {
  std::string key;
  std::string value;
  std::uint64_t origin = 0;
  std::uint64_t sequence = 0;
  ELFIN_REQUEST(kv, Put, (elfin::Result<Written, KvError>), key, value, ELFIN_DEFAULT(origin), ELFIN_DEFAULT(sequence));
};

struct Get {
  std::string key;
  bool stale = false;  ///< read the asked replica's state at once, without confirming leadership
  ELFIN_REQUEST(kv, Get, (elfin::Result<Found, KvError>), key, ELFIN_DEFAULT(stale));
};

struct Delete {
  std::string key;
  std::uint64_t origin = 0;
  std::uint64_t sequence = 0;
  ELFIN_REQUEST(kv, Delete, (elfin::Result<Deleted, KvError>), key, ELFIN_DEFAULT(origin), ELFIN_DEFAULT(sequence));
};

struct Cas {
  std::string key;
  std::string value;
  Version expected_version = 0;  ///< 0: the key must not exist
  std::uint64_t origin = 0;
  std::uint64_t sequence = 0;
  ELFIN_REQUEST(kv, Cas, (elfin::Result<Written, KvError>), key, value, expected_version, ELFIN_DEFAULT(origin),
                ELFIN_DEFAULT(sequence));
};

struct DeleteIfVersion {
  std::string key;
  Version expected_version = 0;  ///< 0: the key must not exist (then nothing is deleted)
  std::uint64_t origin = 0;
  std::uint64_t sequence = 0;
  ELFIN_REQUEST(kv, DeleteIfVersion, (elfin::Result<Deleted, KvError>), key, expected_version, ELFIN_DEFAULT(origin),
                ELFIN_DEFAULT(sequence));
};

struct Scan {
  std::string prefix;  ///< "" scans every key
  std::uint32_t limit = 100;
  bool stale = false;
  std::optional<ShardId> shard;  ///< one shard only; unset: every shard, merged in key order
  ELFIN_REQUEST(kv, Scan, (elfin::Result<Scanned, KvError>), prefix, ELFIN_DEFAULT(limit), ELFIN_DEFAULT(stale), shard);
};

// --- between fronts --------------------------------------------------------------------------

/// How a shard request reaches the shard's replica.
enum class ShardMode : std::uint8_t {
  Propose,    ///< through the log (writes); the replica must lead
  Read,       ///< a linearizable read (ReadIndex); the replica must lead
  StaleRead,  ///< the replica's state as it is
  Other,
};
ELFIN_ENUM(ShardMode, Propose, Read, StaleRead, ELFIN_OTHER(Other));

/// The pod whose front receives it leaves the cluster, gracefully (with a shard manager: [kv]
/// manager = true; BadRequest otherwise): the front unregisters the pod from the manager, which
/// gives the pod's replicas to the other pods, and keeps reading the manager's map, so the
/// partitions' leaders move every replica off by membership changes (a leader on this pod hands
/// its leadership over first) while the pod still serves. Answered once the manager took the pod
/// out; stop the pod once it holds no replica (`elfin kv cluster remove` waits for that). Sent
/// again, it is answered at once.
struct Leave {
  ELFIN_REQUEST(kv, Leave, (elfin::Result<Left, KvError>));
};

/// Which node leads each shard, as a front knows it: `leaders[shard]` is the node whose replica
/// last answered it as leader (0: not known there), for the `shards` shards keys map to.
struct LeaderTable {
  ShardId shards = 0;
  std::vector<std::uint16_t> leaders;
  ELFIN_PART(shards, leaders);
};

/// The front's leader table (from its requests' answers and the shard requests its own replicas
/// served as leaders): a client's first guess of where to send each shard's requests, before the
/// answers name the leaders themselves.
struct Leaders {
  ELFIN_REQUEST(kv, Leaders, (elfin::Result<LeaderTable, KvError>));
};

/// The state machine's answer to a shard request (a KvResponse's bytes, see kv/command.hpp).
struct ShardReply {
  std::uint64_t index = 0;  ///< Propose: the entry's index; reads: the replica's applied index
  Bytes response;
  ELFIN_PART(index, response);
};

/// One front asks the front on `node` to run a KvCommand on its replica of `shard` (the KV
/// front's `kv.peers` remote group picks `node` with the "kv.node" selector). Errors are the
/// replica's: NotLeader with a hint, Timeout (outcome unknown), Unavailable.
struct ShardRequest {
  std::uint16_t node = 0;
  ShardId shard = 0;
  ShardMode mode = ShardMode::Propose;
  Bytes command;
  ELFIN_REQUEST(kv, ShardRequest, (elfin::Result<ShardReply, KvError>), node, shard, mode, command);
};

[[nodiscard]] std::string_view to_string(KvErrorKind kind) noexcept;
/// "VersionMismatch (shard 3, current version 17): <detail>".
[[nodiscard]] std::string to_string(const KvError& error);

}  // namespace elfin::protocols::kv

ELFIN_EXTERN_MESSAGE(elfin::protocols::kv::Leave);
ELFIN_EXTERN_MESSAGE(elfin::protocols::kv::Leaders);
ELFIN_EXTERN_MESSAGE(elfin::protocols::kv::Put);
ELFIN_EXTERN_MESSAGE(elfin::protocols::kv::Get);
ELFIN_EXTERN_MESSAGE(elfin::protocols::kv::Delete);
ELFIN_EXTERN_MESSAGE(elfin::protocols::kv::Cas);
ELFIN_EXTERN_MESSAGE(elfin::protocols::kv::DeleteIfVersion);
ELFIN_EXTERN_MESSAGE(elfin::protocols::kv::Scan);
ELFIN_EXTERN_MESSAGE(elfin::protocols::kv::ShardRequest);

template <>
struct fmt::formatter<elfin::protocols::kv::KvError> : fmt::formatter<std::string_view> {
  auto format(const elfin::protocols::kv::KvError& error, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(elfin::protocols::kv::to_string(error), ctx);
  }
};
