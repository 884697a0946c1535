// The checker's template body (declared in elfin/linearizability/checker.hpp).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include <elfin/linearizability/check_result.hpp>
#include <elfin/linearizability/history.hpp>
#include <elfin/linearizability/model.hpp>

namespace elfin::linearizability {

namespace detail {

/// The set of placed operations of one key, as a bitset.
class OpSet {
 public:
  explicit OpSet(std::size_t n) : words_((n + 63) / 64, 0) {}
  void set(std::size_t i) { words_[i / 64] |= std::uint64_t{1} << (i % 64); }
  void reset(std::size_t i) { words_[i / 64] &= ~(std::uint64_t{1} << (i % 64)); }
  [[nodiscard]] std::size_t hash() const {
    std::uint64_t h = 0x9E3779B97F4A7C15ull;
    for (std::uint64_t w : words_) h = (h ^ w) * 0x100000001B3ull + (h >> 29);
    return static_cast<std::size_t>(h);
  }
  friend bool operator==(const OpSet&, const OpSet&) = default;

 private:
  std::vector<std::uint64_t> words_;
};

enum class KeyOutcome : std::uint8_t { Ok, Violation, Unknown };

/// One key's search (see checker.hpp for the algorithm).
template <Model M>
class KeySearch {
 public:
  using Op = Operation<typename M::Input, typename M::Output>;
  using State = typename M::State;

  KeySearch(const M& model, const std::vector<Op>& history, std::vector<std::size_t> ops, const CheckOptions& options,
            std::chrono::steady_clock::time_point deadline, bool has_deadline)
      : model_(model),
        history_(history),
        ops_(std::move(ops)),
        options_(options),
        deadline_(deadline),
        has_deadline_(has_deadline) {}

  KeyOutcome run() {
    build();
    if (pending_ == 0) return outcome_of(search(0, kNoBudget));
    // Pending operations make a search long in two ways. Where those that took effect did so
    // soon after their invocation, placing each as soon as it may be finds an order quickly.
    // Where most never took effect (lost with a crashed node), placing them early leads into dead
    // ends far down, and every subset of them placed there is explored again; a search that may
    // place none of them, then a few, finds the order at once. So the two take turns, with a
    // budget of steps that doubles each turn: past the first turn, at most about four times the
    // steps of the better one. Only the first, with every pending operation free, can conclude a
    // violation.
    for (std::uint64_t budget = kFirstBudget + kFirstBudgetPerOp * ops_.size();; budget *= 2) {
      if (const Outcome outcome = search(pending_, budget); outcome != Outcome::OutOfBudget) return outcome_of(outcome);
      std::uint64_t left = budget;
      for (std::size_t limit = 0; limit < pending_; limit = std::max<std::size_t>(1, 2 * limit)) {
        const std::uint64_t before = steps_;
        const Outcome outcome = search(limit, left);
        if (outcome == Outcome::Ok || outcome == Outcome::GaveUp) return outcome_of(outcome);
        if (outcome == Outcome::OutOfBudget) break;
        left -= steps_ - before;  // Violation: not without more of them
      }
    }
  }

  [[nodiscard]] std::uint64_t steps() const { return steps_; }

  [[nodiscard]] Violation violation(const std::string& key) const {
    Violation v;
    v.key = key;
    v.linearized_count = best_.prefix_length;
    for (std::size_t op : best_.prefix) v.linearized.push_back(view(op));
    v.state = best_.state;
    v.blocked = view(best_.blocked);
    for (std::size_t op : best_.candidates) v.candidates.push_back(view(op));
    return v;
  }

 private:
  struct Entry {
    Entry* prev = nullptr;
    Entry* next = nullptr;
    std::size_t op = 0;  // index into ops_
    bool call = true;
    Entry* match = nullptr;  // a call's return entry (null for a pending operation)
  };

  struct Frame {
    std::size_t op = 0;
    State before;                // the state before the operation was placed
    std::vector<State> after;    // the states it may leave
    std::size_t next_after = 0;  // the next of those to try
  };

  struct MemoKey {
    OpSet placed;
    State state;
    friend bool operator==(const MemoKey& a, const MemoKey& b) { return a.placed == b.placed && a.state == b.state; }
  };
  struct MemoHash {
    const M* model;
    std::size_t operator()(const MemoKey& k) const {
      return k.placed.hash() ^ (static_cast<std::size_t>(model->hash(k.state)) * 0x9E3779B97F4A7C15ull);
    }
  };

  struct Best {
    bool set = false;
    std::size_t depth = 0;
    std::size_t prefix_length = 0;
    std::vector<std::size_t> prefix;
    std::string state;
    std::size_t blocked = 0;
    std::vector<std::size_t> candidates;
  };

  /// How one search ended: Ok and Violation as a key's outcome; OutOfBudget when it used the
  /// steps it was given; GaveUp at the key's step limit or the check's deadline.
  enum class Outcome : std::uint8_t { Ok, Violation, OutOfBudget, GaveUp };
  static constexpr std::uint64_t kNoBudget = UINT64_MAX;
  // The first turn's budget: enough for the first search to order the usual key in one turn (a
  // generated history of 10k operations on a key, 16 of them overlapping, takes 20 steps an
  // operation; with a smaller budget the turns cost up to ten times as much as one search).
  static constexpr std::uint64_t kFirstBudget = 1024;
  static constexpr std::uint64_t kFirstBudgetPerOp = 32;

  static KeyOutcome outcome_of(Outcome outcome) {
    switch (outcome) {
      case Outcome::Ok:
        return KeyOutcome::Ok;
      case Outcome::Violation:
        return KeyOutcome::Violation;
      case Outcome::OutOfBudget:
      case Outcome::GaveUp:
        break;
    }
    return KeyOutcome::Unknown;
  }

  /// A search from the start with at most `pending_limit` pending operations placed and at most
  /// `budget` steps. Leaves the list, the sets and the memo as it found them unless it is Ok.
  Outcome search(std::size_t pending_limit, std::uint64_t budget) {
    best_ = {};
    const std::uint64_t stop = budget == kNoBudget ? kNoBudget : steps_ + budget;
    State state = model_.init();
    std::size_t completed_left = completed_;
    Entry* entry = head_.next;
    for (;;) {
      if (completed_left == 0) return Outcome::Ok;
      if (entry != nullptr && entry->call && !completes(entry->op) && pending_placed_ == pending_limit) {
        entry = entry->next;  // no more pending operations in this search
        continue;
      }
      if (entry != nullptr && entry->call) {
        if (steps_ == stop) return abandon(Outcome::OutOfBudget, completed_left);
        if (++steps_ > options_.max_steps_per_key) return abandon(Outcome::GaveUp, completed_left);
        if (has_deadline_ && (steps_ & 1023) == 0 && std::chrono::steady_clock::now() >= deadline_) {
          return abandon(Outcome::GaveUp, completed_left);
        }
        const Op& op = history_[ops_[entry->op]];
        Frame frame{entry->op, state, model_.step(state, op.input, op.output), 0};
        entry = place(frame, state, completed_left) ? head_.next : entry->next;
        continue;
      }
      // A completion reached while its operation is not placed (or the end of the list): this
      // order cannot go on. Remember the deepest such point for the report, then backtrack.
      if (entry != nullptr) note_blocked(*entry, state);
      if (stack_.empty()) {
        memo_.clear();
        return Outcome::Violation;
      }
      Frame& top = stack_.back();
      state = std::move(top.before);
      unplace(top.op, completed_left);
      Frame frame = std::move(top);
      stack_.pop_back();
      frame.before = state;
      entry = place(frame, state, completed_left) ? head_.next : calls_[frame.op]->next;
    }
  }

  /// Takes back every placed operation (in the reverse order, which restores the list).
  Outcome abandon(Outcome outcome, std::size_t& completed_left) {
    while (!stack_.empty()) {
      unplace(stack_.back().op, completed_left);
      stack_.pop_back();
    }
    memo_.clear();
    return outcome;
  }

  [[nodiscard]] bool completes(std::size_t op) const { return calls_[op]->match != nullptr; }

  void build() {
    const std::size_t n = ops_.size();
    entries_.resize(2 * n);
    calls_.resize(n);
    placed_ = OpSet(n);
    struct Event {
      Time time;
      bool call;
      std::size_t op;
    };
    std::vector<Event> events;
    events.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      const Op& op = history_[ops_[i]];
      events.push_back({op.invoke, true, i});
      if (op.complete) {
        ++completed_;
        events.push_back({*op.complete, false, i});
      } else {
        ++pending_;
      }
    }
    // Closed intervals: at one instant, invocations come before completions.
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      if (a.time != b.time) return a.time < b.time;
      if (a.call != b.call) return a.call;
      return a.op < b.op;
    });
    Entry* prev = &head_;
    std::vector<Entry*> returns(n, nullptr);
    for (std::size_t i = 0; i < events.size(); ++i) {
      Entry* e = &entries_[i];
      e->op = events[i].op;
      e->call = events[i].call;
      e->prev = prev;
      prev->next = e;
      prev = e;
      (e->call ? calls_[e->op] : returns[e->op]) = e;
    }
    prev->next = nullptr;
    for (std::size_t i = 0; i < n; ++i) calls_[i]->match = returns[i];
  }

  /// Tries the frame's states from `next_after` on; places the operation with the first one not
  /// explored yet and pushes the frame. `state` is the state before it.
  bool place(Frame& frame, State& state, std::size_t& completed_left) {
    placed_.set(frame.op);
    while (frame.next_after < frame.after.size()) {
      State& candidate = frame.after[frame.next_after++];
      if (!memo_.insert(MemoKey{placed_, candidate}).second) continue;
      state = std::move(candidate);
      lift(frame.op);
      if (completes(frame.op)) {
        --completed_left;
      } else {
        ++pending_placed_;
      }
      stack_.push_back(std::move(frame));
      return true;
    }
    placed_.reset(frame.op);
    return false;
  }

  /// Takes back the operation the last frame placed.
  void unplace(std::size_t op, std::size_t& completed_left) {
    placed_.reset(op);
    unlift(op);
    if (completes(op)) {
      ++completed_left;
    } else {
      --pending_placed_;
    }
  }

  void lift(std::size_t op) {
    Entry* call = calls_[op];
    call->prev->next = call->next;
    if (call->next != nullptr) call->next->prev = call->prev;
    if (Entry* ret = call->match) {
      ret->prev->next = ret->next;
      if (ret->next != nullptr) ret->next->prev = ret->prev;
    }
  }

  void unlift(std::size_t op) {
    Entry* call = calls_[op];
    if (Entry* ret = call->match) {
      ret->prev->next = ret;
      if (ret->next != nullptr) ret->next->prev = ret;
    }
    call->prev->next = call;
    if (call->next != nullptr) call->next->prev = call;
  }

  void note_blocked(const Entry& blocked, const State& state) {
    if (best_.set && stack_.size() <= best_.depth) return;
    best_.set = true;
    best_.depth = stack_.size();
    best_.prefix_length = stack_.size();
    best_.prefix.clear();
    const std::size_t first = stack_.size() > options_.explain_ops ? stack_.size() - options_.explain_ops : 0;
    for (std::size_t i = first; i < stack_.size(); ++i) best_.prefix.push_back(stack_[i].op);
    best_.state = model_.describe(state);
    best_.blocked = blocked.op;
    best_.candidates.clear();
    for (const Entry* e = head_.next; e != nullptr && e != &blocked; e = e->next) {
      if (e->call && e->op != blocked.op && best_.candidates.size() < options_.explain_ops) {
        best_.candidates.push_back(e->op);
      }
    }
  }

  [[nodiscard]] OperationView view(std::size_t op) const {
    const Op& o = history_[ops_[op]];
    return OperationView{ops_[op], o.client, o.invoke, o.complete, model_.describe(o.input, o.output)};
  }

  const M& model_;
  const std::vector<Op>& history_;
  std::vector<std::size_t> ops_;  // this key's operations (indexes into the history)
  const CheckOptions& options_;
  std::chrono::steady_clock::time_point deadline_;
  bool has_deadline_;

  std::vector<Entry> entries_;
  std::vector<Entry*> calls_;
  Entry head_;
  std::size_t completed_ = 0;
  std::size_t pending_ = 0;         // operations without an answer
  std::size_t pending_placed_ = 0;  // how many it has placed
  std::vector<Frame> stack_;
  OpSet placed_{0};
  std::unordered_set<MemoKey, MemoHash> memo_{16, MemoHash{&model_}};
  std::uint64_t steps_ = 0;
  Best best_;
};

}  // namespace detail

template <Model M>
CheckResult check(const M& model, const History<typename M::Input, typename M::Output>& history,
                  const CheckOptions& options) {
  using Op = Operation<typename M::Input, typename M::Output>;
  const std::vector<Op>& ops = history.operations;
  CheckResult result;
  result.operations = ops.size();
  std::map<std::string, std::vector<std::size_t>> by_key;  // ordered: reports come in key order
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.complete.has_value() != op.output.has_value()) {
      throw std::invalid_argument("linearizability: operation #" + std::to_string(i) +
                                  " has a completion time without an answer or the reverse");
    }
    if (op.complete && *op.complete < op.invoke) {
      throw std::invalid_argument("linearizability: operation #" + std::to_string(i) + " completes at " +
                                  std::to_string(*op.complete) + ", before its invocation at " +
                                  std::to_string(op.invoke));
    }
    if (!op.complete) ++result.pending;
    by_key[std::string(model.partition(op.input))].push_back(i);
  }
  result.keys = by_key.size();

  struct Slot {
    const std::string* key = nullptr;
    std::vector<std::size_t>* ops = nullptr;
    detail::KeyOutcome outcome = detail::KeyOutcome::Unknown;
    bool searched = false;
    std::uint64_t steps = 0;
    std::optional<Violation> violation;
  };
  std::vector<Slot> slots;
  slots.reserve(by_key.size());
  for (auto& [key, key_ops] : by_key) {
    Slot& slot = slots.emplace_back();
    slot.key = &key;
    slot.ops = &key_ops;
  }

  const bool has_deadline = options.timeout.count() > 0;
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= slots.size() || stop.load(std::memory_order_relaxed)) return;
      Slot& slot = slots[i];
      if (has_deadline && std::chrono::steady_clock::now() >= deadline) continue;  // left unknown
      detail::KeySearch<M> search(model, ops, *slot.ops, options, deadline, has_deadline);
      slot.outcome = search.run();
      slot.searched = true;
      slot.steps = search.steps();
      if (slot.outcome == detail::KeyOutcome::Violation) {
        slot.violation = search.violation(*slot.key);
        if (options.stop_at_first_violation) stop.store(true, std::memory_order_relaxed);
      }
    }
  };
  const unsigned threads = std::max(1u, std::min<unsigned>(options.threads, static_cast<unsigned>(slots.size())));
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }

  for (Slot& slot : slots) {
    result.steps += slot.steps;
    if (slot.outcome == detail::KeyOutcome::Violation && slot.violation.has_value()) {
      result.violations.push_back(std::move(*slot.violation));
    } else if (slot.outcome == detail::KeyOutcome::Unknown &&
               !(options.stop_at_first_violation && !slot.searched && stop.load(std::memory_order_relaxed))) {
      result.unknown_keys.push_back(*slot.key);
    }
  }
  if (!result.violations.empty()) {
    result.verdict = Verdict::Violation;
  } else if (!result.unknown_keys.empty()) {
    result.verdict = Verdict::Unknown;
  }
  return result;
}

}  // namespace elfin::linearizability
