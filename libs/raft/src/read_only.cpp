#include "read_only.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "quorum.hpp"

namespace elfin::raft::internal {
namespace {

Bytes encode_id(std::uint64_t id) {
  Bytes out(9);
  out[0] = 'r';  // never equal to an empty or transfer context
  for (int k = 0; k < 8; ++k) {
    out[1 + k] = static_cast<std::uint8_t>(id >> (8 * k));
  }
  return out;
}

std::uint64_t decode_id(const Bytes& context) {
  if (context.size() != 9 || context[0] != 'r') {
    return 0;
  }
  std::uint64_t id = 0;
  for (int k = 0; k < 8; ++k) {
    id |= static_cast<std::uint64_t>(context[1 + k]) << (8 * k);
  }
  return id;
}

}  // namespace

Bytes ReadOnly::add(Index index, Bytes context, NodeId from) {
  const std::uint64_t id = next_id_++;
  pending_.push_back(ReadRequest{index, std::move(context), from, id, {}});
  return encode_id(id);
}

std::vector<ReadRequest> ReadOnly::ack(const Bytes& context, NodeId from, NodeId self, const ConfState& conf) {
  std::vector<ReadRequest> released;
  const std::uint64_t id = decode_id(context);
  if (id == 0) {
    return released;
  }
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const ReadRequest& r) { return r.id == id; });
  if (it == pending_.end()) {
    return released;
  }
  if (std::find(it->acks.begin(), it->acks.end(), from) == it->acks.end()) {
    it->acks.push_back(from);
  }
  const auto acked = [&](NodeId voter) -> std::optional<bool> {
    if (voter == self || std::find(it->acks.begin(), it->acks.end(), voter) != it->acks.end()) {
      return true;
    }
    return std::nullopt;
  };
  if (quorum_vote(conf, acked) != VoteResult::Won) {
    return released;
  }
  // A quorum confirmed leadership after every older read arrived too.
  const auto end = std::next(it);
  for (auto r = pending_.begin(); r != end; ++r) {
    released.push_back(std::move(*r));
  }
  pending_.erase(pending_.begin(), end);
  return released;
}

Bytes ReadOnly::last_context() const { return pending_.empty() ? Bytes{} : encode_id(pending_.back().id); }

std::vector<ReadRequest> ReadOnly::take_all() {
  std::vector<ReadRequest> all;
  all.reserve(waiting_.size() + pending_.size());
  for (auto& r : waiting_) {
    all.push_back(std::move(r));
  }
  for (auto& r : pending_) {
    all.push_back(std::move(r));
  }
  waiting_.clear();
  pending_.clear();
  return all;
}

}  // namespace elfin::raft::internal
