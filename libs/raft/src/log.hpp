// The in-memory Raft log of one replica: the entries after the compaction point, which of them
// were handed out for persistence (`unstable_from`) and which are known durable (`persisted`).
// The whole uncompacted log stays in memory because a leader replicates from it; the durable
// copy is the application's (its WAL), written from Ready::entries.
//
// Thread safety: owned by one Core.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <elfin/raft/entry.hpp>

namespace elfin::raft::internal {

class RaftLog {
 public:
  /// Index and term of the entry the log starts after (the last compacted or snapshotted one).
  [[nodiscard]] Index snapshot_index() const noexcept { return snapshot_index_; }
  [[nodiscard]] Term snapshot_term() const noexcept { return snapshot_term_; }
  [[nodiscard]] Index first_index() const noexcept { return snapshot_index_ + 1; }
  [[nodiscard]] Index last_index() const noexcept { return snapshot_index_ + entries_.size(); }
  [[nodiscard]] Term last_term() const noexcept { return entries_.empty() ? snapshot_term_ : entries_.back().term; }
  /// The term at `index` when known: the compaction point or an entry held.
  [[nodiscard]] std::optional<Term> term(Index index) const noexcept;
  [[nodiscard]] bool matches(Index index, Term term) const noexcept;
  /// The entry at `index`, first_index() <= index <= last_index().
  [[nodiscard]] const Entry& at(Index index) const noexcept { return entries_[index - first_index()]; }
  /// Raft's up-to-date rule: a log ending at (index, term) is at least as up to date as this one.
  [[nodiscard]] bool is_up_to_date(Index index, Term term) const noexcept;

  /// Appends one entry after the last (a leader's own proposal or a recovered entry).
  void append(Entry entry);
  /// A follower's append of `entries` following `prev` (which matches): entries already held are
  /// skipped, the first conflicting one truncates the log from its index. Returns the index the
  /// log was truncated at (0: none).
  Index append_after(Index prev, std::vector<Entry>&& entries);
  /// The largest index <= `index` whose term is <= `term` (at least the compaction point): where a
  /// conflicting log can agree with one whose entry at `index` has term `term`.
  [[nodiscard]] Index find_conflict_by_term(Index index, Term term) const noexcept;
  /// Copies of the entries from `lo` to the last, stopping before `max_bytes` (at least one).
  [[nodiscard]] std::vector<Entry> slice(Index lo, std::uint64_t max_bytes) const;
  /// Drops entries up to `index` (snapshot_index() < index <= last_index()).
  void compact(Index index);
  /// Replaces the whole log by a snapshot point.
  void restore(Index index, Term term);

  /// Entries not yet handed out for persistence; marks them handed out.
  [[nodiscard]] std::vector<Entry> take_unstable();
  [[nodiscard]] bool has_unstable() const noexcept { return unstable_from_ <= last_index(); }
  /// Everything held counts as handed out and durable (recovery).
  void mark_all_durable() noexcept;
  [[nodiscard]] Index persisted() const noexcept { return persisted_; }
  /// Entries up to `index` are durable (clamped to what the log holds).
  void persisted_up_to(Index index) noexcept;

 private:
  void truncate_from(Index index);

  Index snapshot_index_ = 0;
  Term snapshot_term_ = 0;
  std::vector<Entry> entries_;  // entries_[k] has index snapshot_index_ + 1 + k
  Index unstable_from_ = 1;
  Index persisted_ = 0;
};

}  // namespace elfin::raft::internal
