// The versioned key-value register's sequential rules (see elfin/linearizability/kv_model.hpp).
#include <elfin/linearizability/kv_model.hpp>

#include <functional>

namespace elfin::linearizability {

namespace {

using States = std::vector<KvState>;

/// The state once a write of `value` took effect with version `version` (0: unobserved).
KvState written(const std::string& value, std::uint64_t floor, std::uint64_t version) {
  if (version == 0) return KvState{true, value, floor, false};
  return KvState{true, value, version, true};
}

/// Can the key's current version be `v`? Rule 2 (exact) or 3 (above the floor).
bool may_be(const KvState& s, std::uint64_t v) { return s.exact ? s.version == v : v > s.version; }

/// Does the key exist with version `expected` (or not exist, for expected 0)?
bool may_match(const KvState& s, std::uint64_t expected) {
  if (expected == 0) return !s.exists;
  return s.exists && may_be(s, expected);
}

/// `s` with its current version observed to be `v` (callers checked may_be).
KvState pinned(KvState s, std::uint64_t v) {
  s.version = v;
  s.exact = true;
  return s;
}

KvState deleted(KvState s) {
  s.exists = false;
  s.value.clear();
  return s;
}

/// A mismatch answer (current value and version; version 0: absent) in state `s`, for `expected`.
States mismatch(const KvState& s, std::uint64_t expected, const KvOutput& out) {
  if (out.version == 0) {
    if (s.exists || expected == 0) return {};
    return {s};
  }
  if (!s.exists || (out.value_known && out.value != s.value) || out.version == expected || !may_be(s, out.version))
    return {};
  return {pinned(s, out.version)};
}

}  // namespace

std::vector<KvState> KvModel::step(const KvState& s, const KvInput& in, const std::optional<KvOutput>& out) const {
  switch (in.call) {
    case KvCall::Put:
      if (!out) return {written(in.value, s.version, 0)};
      // Rule 1: above the current version (or above the floor when it is unknown).
      if (out->status != KvStatus::Ok || out->version <= s.version) return {};
      return {written(in.value, s.version, out->version)};

    case KvCall::Get:
      if (!out) return {s};
      if (out->status == KvStatus::NotFound) return s.exists ? States{} : States{s};
      if (out->status != KvStatus::Ok || !s.exists || out->value != s.value || !may_be(s, out->version)) return {};
      return {pinned(s, out->version)};

    case KvCall::Delete:
      if (!out) return {s.exists ? deleted(s) : s};
      if (out->status == KvStatus::Ok) return s.exists ? States{deleted(s)} : States{};
      if (out->status == KvStatus::NotFound) return s.exists ? States{} : States{s};
      return {};

    case KvCall::Cas: {
      if (!out) {
        if (!may_match(s, in.expected_version)) return {};  // took no effect: as if never placed
        const std::uint64_t floor = in.expected_version == 0 ? s.version : in.expected_version;
        return {written(in.value, floor, 0)};
      }
      if (out->status == KvStatus::Mismatch) return mismatch(s, in.expected_version, *out);
      if (out->status != KvStatus::Ok || !may_match(s, in.expected_version)) return {};
      const std::uint64_t floor = in.expected_version == 0 ? s.version : in.expected_version;
      if (out->version <= floor || out->version <= s.version) return {};
      return {written(in.value, floor, out->version)};
    }

    case KvCall::DeleteIfVersion: {
      const bool matches = in.expected_version != 0 && may_match(s, in.expected_version);
      if (!out) return matches ? States{deleted(pinned(s, in.expected_version))} : States{};
      if (out->status == KvStatus::Mismatch) return mismatch(s, in.expected_version, *out);
      if (out->status != KvStatus::Ok || !matches) return {};
      return {deleted(pinned(s, in.expected_version))};
    }
  }
  return {};
}

std::size_t KvModel::hash(const KvState& s) const {
  std::size_t h = std::hash<std::string>{}(s.value);
  h ^= (s.version * 0x9E3779B97F4A7C15ull) + (h << 6) + (h >> 2);
  return h ^ (static_cast<std::size_t>(s.exists) << 1) ^ static_cast<std::size_t>(s.exact);
}

namespace {

std::string version_text(std::uint64_t v) { return "v" + std::to_string(v); }

std::string output_text(const std::optional<KvOutput>& out) {
  if (!out) return "no answer";
  switch (out->status) {
    case KvStatus::Ok:
      if (!out->value.empty()) return "found '" + out->value + "' " + version_text(out->version);
      return out->version == 0 ? "ok" : "ok " + version_text(out->version);
    case KvStatus::NotFound:
      return "not found";
    case KvStatus::Mismatch:
      if (out->version == 0) return "mismatch (absent)";
      if (!out->value_known) return "mismatch (current " + version_text(out->version) + ")";
      return "mismatch (current '" + out->value + "' " + version_text(out->version) + ")";
  }
  return "?";
}

}  // namespace

std::string KvModel::describe(const KvInput& in, const std::optional<KvOutput>& out) const {
  std::string call;
  switch (in.call) {
    case KvCall::Put:
      call = "put '" + in.value + "'";
      break;
    case KvCall::Get:
      call = "get";
      // A get that found an empty value reads "ok"; say what it is.
      if (out && out->status == KvStatus::Ok) return "get -> found '" + out->value + "' " + version_text(out->version);
      break;
    case KvCall::Delete:
      call = "delete";
      break;
    case KvCall::Cas:
      call = "cas(" + (in.expected_version == 0 ? std::string("absent") : version_text(in.expected_version)) + ", '" +
             in.value + "')";
      break;
    case KvCall::DeleteIfVersion:
      call = "delete_if_version(" + version_text(in.expected_version) + ")";
      break;
  }
  return call + " -> " + output_text(out);
}

std::string KvModel::describe(const KvState& s) const {
  const std::string version = s.exact ? version_text(s.version) : "above " + version_text(s.version);
  if (!s.exists) return s.version == 0 && s.exact ? "absent (never written)" : "absent (last version " + version + ")";
  return "'" + s.value + "' " + version;
}

}  // namespace elfin::linearizability
