// The outcome of Node::propose and Node::propose_conf_change: the index the entry got, or why it
// was refused. A refused proposal is not in the log; an accepted one may still be lost (leader
// change before commit): the application learns its fate by watching Ready::committed for that
// index and term, and re-proposes after a timeout (with its own dedup id if it must apply once).
//
//   NotLeader  this replica is not the leader; leader_hint names the one it knows (0: none).
//   Dropped    the leader is busy: transferring leadership, over max_uncommitted_bytes, or a
//              previous membership change / its term's first entry is not committed yet.
//   Invalid    a membership change that makes no sense (add an existing voter, remove a
//              non-member, remove the last voter).
//
// Thread safety: plain value types.
#pragma once

#include <cassert>
#include <cstdint>
#include <string_view>
#include <variant>

#include <elfin/raft/entry.hpp>

namespace elfin::raft {

enum class ProposeError : std::uint8_t { NotLeader, Dropped, Invalid };

[[nodiscard]] std::string_view to_string(ProposeError error) noexcept;

struct ProposeRejected {
  ProposeError error = ProposeError::NotLeader;
  NodeId leader_hint = 0;

  friend bool operator==(const ProposeRejected&, const ProposeRejected&) = default;
};

/// The index a proposal got, or a ProposeRejected (elfin::Result's shape, without the dependency).
class [[nodiscard]] ProposeResult {
 public:
  ProposeResult(Index index) : value_(index) {}                  // NOLINT: implicit on purpose
  ProposeResult(ProposeRejected rejected) : value_(rejected) {}  // NOLINT: implicit on purpose

  [[nodiscard]] bool ok() const noexcept { return value_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  [[nodiscard]] Index value() const { return assert(ok()), std::get<0>(value_); }
  [[nodiscard]] Index operator*() const { return value(); }
  [[nodiscard]] const ProposeRejected& error() const { return assert(!ok()), std::get<1>(value_); }

 private:
  std::variant<Index, ProposeRejected> value_;
};

}  // namespace elfin::raft
