#include "log.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace elfin::raft::internal {

std::optional<Term> RaftLog::term(Index index) const noexcept {
  if (index == snapshot_index_) {
    return snapshot_term_;
  }
  if (index < snapshot_index_ || index > last_index()) {
    return std::nullopt;
  }
  return at(index).term;
}

bool RaftLog::matches(Index index, Term term) const noexcept {
  auto held = this->term(index);
  return held && *held == term;
}

bool RaftLog::is_up_to_date(Index index, Term term) const noexcept {
  return term > last_term() || (term == last_term() && index >= last_index());
}

void RaftLog::append(Entry entry) {
  assert(entry.index == last_index() + 1);
  entries_.push_back(std::move(entry));
}

Index RaftLog::append_after(Index prev, std::vector<Entry>&& entries) {
  Index truncated = 0;
  std::size_t k = 0;
  // Skip what is already held with the same term (a duplicate or reordered Append).
  for (; k < entries.size(); ++k) {
    const Index index = prev + 1 + k;
    if (index <= snapshot_index_) {
      continue;
    }
    if (index > last_index()) {
      break;
    }
    if (at(index).term != entries[k].term) {
      truncate_from(index);
      truncated = index;
      break;
    }
  }
  for (; k < entries.size(); ++k) {
    if (entries[k].index > snapshot_index_) {
      entries_.push_back(std::move(entries[k]));
    }
  }
  return truncated;
}

void RaftLog::truncate_from(Index index) {
  assert(index > snapshot_index_ && index <= last_index());
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(index - first_index()), entries_.end());
  unstable_from_ = std::min(unstable_from_, index);
  persisted_ = std::min(persisted_, index - 1);
}

Index RaftLog::find_conflict_by_term(Index index, Term term) const noexcept {
  index = std::min(index, last_index());
  while (index > snapshot_index_ && at(index).term > term) {
    --index;
  }
  return std::max(index, snapshot_index_);
}

std::vector<Entry> RaftLog::slice(Index lo, std::uint64_t max_bytes) const {
  std::vector<Entry> out;
  std::uint64_t bytes = 0;
  for (Index index = std::max(lo, first_index()); index <= last_index(); ++index) {
    const Entry& entry = at(index);
    bytes += entry_size(entry);
    if (!out.empty() && bytes > max_bytes) {
      break;
    }
    out.push_back(entry);
  }
  return out;
}

void RaftLog::compact(Index index) {
  assert(index > snapshot_index_ && index <= last_index());
  const Term term = at(index).term;
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(index - snapshot_index_));
  snapshot_index_ = index;
  snapshot_term_ = term;
  unstable_from_ = std::max(unstable_from_, index + 1);
}

void RaftLog::restore(Index index, Term term) {
  entries_.clear();
  snapshot_index_ = index;
  snapshot_term_ = term;
  unstable_from_ = index + 1;
  // The snapshot itself becomes durable with the ready that carries it.
  persisted_ = std::min(persisted_, index);
}

std::vector<Entry> RaftLog::take_unstable() {
  std::vector<Entry> out;
  const Index lo = std::max(unstable_from_, first_index());
  if (lo <= last_index()) {
    out.reserve(last_index() - lo + 1);
    for (Index index = lo; index <= last_index(); ++index) {
      out.push_back(at(index));
    }
  }
  unstable_from_ = last_index() + 1;
  return out;
}

void RaftLog::mark_all_durable() noexcept {
  unstable_from_ = last_index() + 1;
  persisted_ = last_index();
}

void RaftLog::persisted_up_to(Index index) noexcept {
  persisted_ = std::max(persisted_, std::min(index, last_index()));
}

}  // namespace elfin::raft::internal
