#include <elfin/raft/conf_change.hpp>

#include <algorithm>

namespace elfin::raft {
namespace {

// Layout: version (1), kind (1), node (8, little endian); then, when the resulting configuration
// is written, three lists (voters, learners, voters_outgoing), each a count (4) and ids (8 each).
constexpr std::uint8_t kVersion = 1;

void put_u64(Bytes& out, std::uint64_t v) {
  for (int k = 0; k < 8; ++k) {
    out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  }
}
void put_u32(Bytes& out, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) {
    out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  }
}

struct Reader {
  std::span<const std::uint8_t> data;
  std::size_t at = 0;
  bool ok = true;

  std::uint64_t get(int bytes) {
    if (data.size() - at < static_cast<std::size_t>(bytes)) {
      ok = false;
      return 0;
    }
    std::uint64_t v = 0;
    for (int k = 0; k < bytes; ++k) {
      v |= static_cast<std::uint64_t>(data[at + k]) << (8 * k);
    }
    at += bytes;
    return v;
  }
  std::vector<NodeId> list() {
    const std::uint64_t count = get(4);
    std::vector<NodeId> ids;
    if (!ok || count > (data.size() - at) / 8) {
      ok = false;
      return ids;
    }
    ids.reserve(count);
    for (std::uint64_t k = 0; k < count; ++k) {
      ids.push_back(get(8));
    }
    return ids;
  }
};

void put_list(Bytes& out, const std::vector<NodeId>& ids) {
  put_u32(out, static_cast<std::uint32_t>(ids.size()));
  for (NodeId id : ids) {
    put_u64(out, id);
  }
}

void erase(std::vector<NodeId>& ids, NodeId id) { std::erase(ids, id); }

void insert(std::vector<NodeId>& ids, NodeId id) {
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
    ids.insert(std::lower_bound(ids.begin(), ids.end(), id), id);
  }
}

}  // namespace

std::string_view to_string(ConfChangeKind kind) noexcept {
  switch (kind) {
    case ConfChangeKind::AddVoter:
      return "AddVoter";
    case ConfChangeKind::AddLearner:
      return "AddLearner";
    case ConfChangeKind::RemoveNode:
      return "RemoveNode";
  }
  return "?";
}

Bytes encode_conf_change(const ConfChange& change) {
  Bytes out;
  out.reserve(10);
  out.push_back(kVersion);
  out.push_back(static_cast<std::uint8_t>(change.kind));
  put_u64(out, change.node);
  return out;
}

Bytes encode_conf_change(const ConfChange& change, const ConfState& resulting) {
  Bytes out = encode_conf_change(change);
  put_list(out, resulting.voters);
  put_list(out, resulting.learners);
  put_list(out, resulting.voters_outgoing);
  return out;
}

std::optional<ConfChange> decode_conf_change(std::span<const std::uint8_t> data) {
  Reader r{data};
  if (r.get(1) != kVersion) {
    return std::nullopt;
  }
  const std::uint64_t kind = r.get(1);
  const NodeId node = r.get(8);
  if (!r.ok || kind > static_cast<std::uint8_t>(ConfChangeKind::RemoveNode)) {
    return std::nullopt;
  }
  return ConfChange{static_cast<ConfChangeKind>(kind), node};
}

std::optional<ConfState> decode_conf_result(std::span<const std::uint8_t> data) {
  if (!decode_conf_change(data) || data.size() == 10) {
    return std::nullopt;
  }
  Reader r{data, 10};
  ConfState conf;
  conf.voters = r.list();
  conf.learners = r.list();
  conf.voters_outgoing = r.list();
  if (!r.ok || r.at != data.size()) {
    return std::nullopt;
  }
  return conf;
}

ConfState apply_conf_change(ConfState conf, const ConfChange& change) {
  switch (change.kind) {
    case ConfChangeKind::AddVoter:
      erase(conf.learners, change.node);
      insert(conf.voters, change.node);
      break;
    case ConfChangeKind::AddLearner:
      erase(conf.voters, change.node);
      insert(conf.learners, change.node);
      break;
    case ConfChangeKind::RemoveNode:
      erase(conf.voters, change.node);
      erase(conf.learners, change.node);
      break;
  }
  return conf;
}

}  // namespace elfin::raft
