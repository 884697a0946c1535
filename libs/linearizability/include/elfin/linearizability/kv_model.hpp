// KvModel: a key-value map where every key carries a version, the model of elfin's KV service
// (and of any store with versioned keys: etcd's mod_revision, a log index per write). Each key is
// an independent register, so histories are checked key by key.
//
//   put(k, v)                      -> ok(version)               the new version of k
//   get(k)                         -> found(value, version) | not_found
//   delete(k)                      -> ok | not_found            ok: k existed and is gone
//   cas(k, expected, v)            -> ok(version) | mismatch(current value, current version)
//   delete_if_version(k, expected) -> ok | mismatch(current value, current version)
//
// `expected = 0` in cas means "k must not exist" (create if absent); a mismatch on an absent key
// reports version 0. Versions are greater than 0.
//
// The rules for versions. The store assigns versions; the model does not predict them, it checks
// that what clients saw could come from one sequential run:
//   1. Every write that takes effect (put, a cas that matched) gives its key a version greater
//      than every version the key had before, deletes included: a key re-created after a delete
//      gets a version above the one it had (true of stores whose versions are log indexes or
//      global revisions).
//   2. A version a client observes (a write's answer, a get, a mismatch's current version) is the
//      key's current version at that point; so the same version never names two different values.
//   3. A write whose version nobody observed (a pending put that took effect) leaves the version
//      unknown but above the previous one; the next observation pins it, and must be above that.
// Versions are opaque: only their order matters, and nothing is assumed about gaps (a store may
// skip numbers, as log indexes of other keys do).
//
// One approximation, on the permissive side: when a key's version is unknown (rule 3) a pending
// cas or delete_if_version that did not match leaves no trace in the state, so the model forgets
// "the version is not `expected`". A history can only be accepted wrongly through it when two
// unanswered operations on a key are followed by an answer that contradicts exactly that.
//
// Thread safety: stateless; every member from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace elfin::linearizability {

enum class KvCall : std::uint8_t { Put, Get, Delete, Cas, DeleteIfVersion };

struct KvInput {
  KvCall call = KvCall::Get;
  std::string key;
  std::string value;                   ///< put, cas
  std::uint64_t expected_version = 0;  ///< cas (0: must not exist), delete_if_version

  [[nodiscard]] static KvInput put(std::string key, std::string value) {
    return {KvCall::Put, std::move(key), std::move(value), 0};
  }
  [[nodiscard]] static KvInput get(std::string key) { return {KvCall::Get, std::move(key), {}, 0}; }
  [[nodiscard]] static KvInput del(std::string key) { return {KvCall::Delete, std::move(key), {}, 0}; }
  [[nodiscard]] static KvInput cas(std::string key, std::uint64_t expected, std::string value) {
    return {KvCall::Cas, std::move(key), std::move(value), expected};
  }
  [[nodiscard]] static KvInput delete_if_version(std::string key, std::uint64_t expected) {
    return {KvCall::DeleteIfVersion, std::move(key), {}, expected};
  }
  friend bool operator==(const KvInput&, const KvInput&) = default;
};

enum class KvStatus : std::uint8_t { Ok, NotFound, Mismatch };

struct KvOutput {
  KvStatus status = KvStatus::Ok;
  std::string value;          ///< get: the value; mismatch: the current value
  std::uint64_t version = 0;  ///< put, cas: the new version; get: the version; mismatch: current (0: absent)
  /// mismatch: `value` is the current value; false when the store reports only the current
  /// version (elfin's KV front does), and then any value is accepted.
  bool value_known = true;

  /// put / cas that matched: the new version; delete / delete_if_version that took effect: 0.
  [[nodiscard]] static KvOutput ok(std::uint64_t version = 0) { return {KvStatus::Ok, {}, version}; }
  [[nodiscard]] static KvOutput found(std::string value, std::uint64_t version) {
    return {KvStatus::Ok, std::move(value), version};
  }
  [[nodiscard]] static KvOutput not_found() { return {KvStatus::NotFound, {}, 0}; }
  /// cas / delete_if_version that did not match; version 0: the key does not exist.
  [[nodiscard]] static KvOutput mismatch(std::string current_value, std::uint64_t current_version) {
    return {KvStatus::Mismatch, std::move(current_value), current_version};
  }
  /// A mismatch that reports the current version only.
  [[nodiscard]] static KvOutput mismatch_version(std::uint64_t current_version) {
    return {KvStatus::Mismatch, {}, current_version, false};
  }
  friend bool operator==(const KvOutput&, const KvOutput&) = default;
};

/// One key's register as the model sees it.
struct KvState {
  bool exists = false;
  std::string value;
  /// exact: the current version (the last one, when the key does not exist; 0: never written);
  /// otherwise the version is unknown and greater than this.
  std::uint64_t version = 0;
  bool exact = true;
  friend bool operator==(const KvState&, const KvState&) = default;
};

class KvModel {
 public:
  using Input = KvInput;
  using Output = KvOutput;
  using State = KvState;

  [[nodiscard]] State init() const { return {}; }
  [[nodiscard]] const std::string& partition(const Input& input) const { return input.key; }
  [[nodiscard]] std::vector<State> step(const State& state, const Input& input,
                                        const std::optional<Output>& output) const;
  [[nodiscard]] std::size_t hash(const State& state) const;
  [[nodiscard]] std::string describe(const Input& input, const std::optional<Output>& output) const;
  [[nodiscard]] std::string describe(const State& state) const;
};

}  // namespace elfin::linearizability
