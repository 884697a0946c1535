#include "sim_cluster.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace elfin::raft::sim {
namespace {

Bytes encode_u64(std::uint64_t v) {
  Bytes out(8);
  for (int k = 0; k < 8; ++k) {
    out[k] = static_cast<std::uint8_t>(v >> (8 * k));
  }
  return out;
}

std::uint64_t decode_u64(const Bytes& data, std::size_t at = 0) {
  std::uint64_t v = 0;
  for (int k = 0; k < 8; ++k) {
    v |= static_cast<std::uint64_t>(data[at + k]) << (8 * k);
  }
  return v;
}

}  // namespace

struct Cluster::Replica {
  struct Write {
    std::uint64_t at = 0;
    std::uint64_t ready_id = 0;
    std::optional<HardState> hard_state;
    std::optional<Snapshot> snapshot;
    std::vector<Entry> entries;
    std::vector<Message> after;
  };

  NodeId id = 0;
  bool initial = false;
  std::unique_ptr<Node> node;
  Storage storage;
  std::deque<Write> writes;
  std::vector<std::uint64_t> sm;
  std::set<std::uint64_t> sm_set;
  Index applied = 0;
  std::vector<ReadState> reads;
  std::map<Index, std::pair<Term, std::uint64_t>> proposed;
  Index last_commit = 0;
  Term leader_term = 0;
  Index leader_last = 0;
  Term leader_last_term = 0;
  double clock_rate = 1;
  double clock = 0;
};

Cluster::Cluster(Options options) : options_(std::move(options)), rng_(options_.seed) {
  for (NodeId id = 1; id <= options_.nodes; ++id) {
    initial_conf_.voters.push_back(id);
  }
  for (NodeId id = 1; id <= options_.nodes; ++id) {
    auto r = std::make_unique<Replica>();
    r->id = id;
    r->initial = true;
    r->clock_rate = 1 + std::uniform_real_distribution<double>(0, options_.max_clock_drift)(rng_);
    replicas_.emplace(id, std::move(r));
    Recovered recovered;
    recovered.conf = initial_conf_;
    start(id, std::move(recovered));
  }
}

Cluster::~Cluster() = default;

Cluster::Replica& Cluster::replica(NodeId id) {
  auto it = replicas_.find(id);
  if (it == replicas_.end()) {
    throw std::out_of_range("sim: no node " + std::to_string(id));
  }
  return *it->second;
}

const Cluster::Replica& Cluster::replica(NodeId id) const {
  return const_cast<Cluster*>(this)->replica(id);  // NOLINT: same lookup
}

void Cluster::fail(std::string what) {
  if (failure_.empty()) {
    std::ostringstream out;
    out << "seed " << options_.seed << ", step " << now_ << ": " << what;
    failure_ = out.str();
  }
}

void Cluster::start(NodeId id, Recovered recovered) {
  Replica& r = replica(id);
  Config config = options_.config;
  config.id = id;
  config.seed = options_.seed * 1000003 + id;
  Replica* rp = &r;
  r.node = std::make_unique<Node>(config, std::move(recovered), [rp]() { return rp->storage.snapshot; });
  r.last_commit = r.node->commit();
}

Node& Cluster::node(NodeId id) {
  Replica& r = replica(id);
  if (!r.node) {
    throw std::logic_error("sim: node " + std::to_string(id) + " is down");
  }
  return *r.node;
}

bool Cluster::alive(NodeId id) const {
  auto it = replicas_.find(id);
  return it != replicas_.end() && it->second->node != nullptr;
}

std::vector<NodeId> Cluster::ids() const {
  std::vector<NodeId> out;
  for (const auto& [id, r] : replicas_) {
    out.push_back(id);
  }
  return out;
}

NodeId Cluster::leader() const {
  NodeId best = 0;
  Term best_term = 0;
  for (const auto& [id, r] : replicas_) {
    if (r->node && r->node->role() == Role::Leader && r->node->term() >= best_term) {
      best = id;
      best_term = r->node->term();
    }
  }
  return best;
}

void Cluster::crash(NodeId id) {
  Replica& r = replica(id);
  r.node.reset();
  r.writes.clear();  // not acknowledged durable: lost
  r.sm.clear();
  r.sm_set.clear();
  r.applied = 0;
  r.reads.clear();
  r.proposed.clear();
  r.leader_term = 0;
}

void Cluster::restart(NodeId id) {
  Replica& r = replica(id);
  if (r.node) {
    return;
  }
  Recovered recovered;
  recovered.hard_state = r.storage.hard_state;
  recovered.entries = r.storage.entries;
  if (r.storage.snapshot) {
    recovered.snapshot = r.storage.snapshot->meta;
    recovered.applied = r.storage.snapshot->meta.index;
    const Bytes& data = r.storage.snapshot->data;
    for (std::size_t at = 0; at + 8 <= data.size(); at += 8) {
      r.sm.push_back(decode_u64(data, at));
    }
    r.sm_set.insert(r.sm.begin(), r.sm.end());
    r.applied = recovered.applied;
  }
  if (r.initial) {
    recovered.conf = initial_conf_;
  }
  start(id, std::move(recovered));
  pump(r);
}

void Cluster::spawn(NodeId id) {
  if (replicas_.contains(id)) {
    return;
  }
  auto r = std::make_unique<Replica>();
  r->id = id;
  r->clock_rate = 1 + std::uniform_real_distribution<double>(0, options_.max_clock_drift)(rng_);
  replicas_.emplace(id, std::move(r));
  start(id, Recovered{});
}

void Cluster::elect(NodeId id) {
  node(id).campaign();
  pump(replica(id));
  settle();
}

ProposeResult Cluster::propose(NodeId id) {
  Replica& r = replica(id);
  const std::uint64_t payload = next_payload_++;
  ProposeResult result = node(id).propose(encode_u64(payload));
  if (result) {
    r.proposed[*result] = {r.node->term(), payload};
  }
  pump(r);
  return result;
}

const std::vector<std::uint64_t>& Cluster::applied_ids(NodeId id) const { return replica(id).sm; }
Index Cluster::applied_index(NodeId id) const { return replica(id).applied; }
const std::vector<ReadState>& Cluster::reads(NodeId id) const { return replica(id).reads; }
const Storage& Cluster::storage(NodeId id) const { return replica(id).storage; }

void Cluster::read(NodeId id) {
  const std::uint64_t read_id = next_read_++;
  read_floor_[read_id] = max_committed();
  node(id).read_index(encode_u64(read_id));
  pump(replica(id));
}

void Cluster::snapshot_and_compact(NodeId id, Index keep) {
  Replica& r = replica(id);
  if (!r.node || r.applied == 0 || r.applied <= r.node->first_index() - 1) {
    return;
  }
  Snapshot snapshot;
  snapshot.meta.index = r.applied;
  snapshot.meta.term = r.node->term_at(r.applied).value_or(0);
  snapshot.meta.conf = r.node->conf();
  snapshot.data.reserve(r.sm.size() * 8);
  for (std::uint64_t v : r.sm) {
    Bytes b = encode_u64(v);
    snapshot.data.insert(snapshot.data.end(), b.begin(), b.end());
  }
  // The snapshot file is written and synced before the log is compacted.
  r.storage.snapshot = std::move(snapshot);
  const Index upto = r.applied > keep ? r.applied - keep : 0;
  r.node->compact(upto);
  std::erase_if(r.storage.entries, [&](const Entry& e) { return e.index <= upto; });
}

// --- network ---------------------------------------------------------------------------------

void Cluster::partition(const std::vector<std::vector<NodeId>>& groups) {
  group_.clear();
  int g = 0;
  for (const auto& group : groups) {
    for (NodeId id : group) {
      group_[id] = g;
    }
    ++g;
  }
}

void Cluster::isolate(NodeId id) {
  std::vector<NodeId> rest;
  for (const auto& [other, r] : replicas_) {
    if (other != id) {
      rest.push_back(other);
    }
  }
  partition({rest, {id}});
}

void Cluster::heal() { group_.clear(); }

bool Cluster::linked(NodeId a, NodeId b) const {
  if (group_.empty()) {
    return true;
  }
  auto ia = group_.find(a);
  auto ib = group_.find(b);
  return ia != group_.end() && ib != group_.end() && ia->second == ib->second;
}

void Cluster::send(Message&& m) {
  sent_[static_cast<std::size_t>(m.type)]++;
  if (filter_ && filter_(m)) {
    return;
  }
  const Faults& f = options_.faults;
  std::uniform_real_distribution<double> coin(0, 1);
  if (f.drop > 0 && coin(rng_) < f.drop) {
    return;
  }
  std::uniform_int_distribution<int> delay(f.min_delay, std::max(f.min_delay, f.max_delay));
  if (f.duplicate > 0 && coin(rng_) < f.duplicate) {
    network_.emplace(std::pair{now_ + delay(rng_), seq_++}, m);
  }
  network_.emplace(std::pair{now_ + delay(rng_), seq_++}, std::move(m));
}

void Cluster::deliver_due() {
  while (!network_.empty() && network_.begin()->first.first <= now_) {
    Message m = std::move(network_.begin()->second);
    network_.erase(network_.begin());
    if (!alive(m.to) || !linked(m.from, m.to)) {
      continue;
    }
    Replica& r = replica(m.to);
    r.node->step(std::move(m));
    pump(r);
  }
}

// --- the application loop --------------------------------------------------------------------

void Cluster::apply(Replica& r, const Entry& e) {
  if (e.index != r.applied + 1) {
    fail("node " + std::to_string(r.id) + " applied index " + std::to_string(e.index) + " after " +
         std::to_string(r.applied));
  }
  r.applied = e.index;
  if (e.kind != EntryKind::Normal || e.data.empty()) {
    return;
  }
  const std::uint64_t payload = decode_u64(e.data);
  if (!r.sm_set.insert(payload).second) {
    fail("node " + std::to_string(r.id) + " applied payload " + std::to_string(payload) + " twice");
  }
  r.sm.push_back(payload);
  auto it = r.proposed.find(e.index);
  if (it != r.proposed.end() && it->second == std::pair{e.term, payload}) {
    acknowledged_.insert(payload);
  }
}

void Cluster::check_ready(Replica& r, const Ready& ready) {
  Node& n = *r.node;
  if (ready.role == Role::Leader) {
    auto [it, inserted] = leaders_.try_emplace(ready.term, r.id);
    if (it->second != r.id) {
      fail("election safety: nodes " + std::to_string(it->second) + " and " + std::to_string(r.id) +
           " both lead term " + std::to_string(ready.term));
    }
    if (inserted) {
      // Leader completeness: every entry committed so far is in the new leader's log.
      for (const auto& [index, c] : committed_) {
        if (index < n.first_index()) {
          continue;
        }
        if (index > n.last_index() || n.term_at(index) != c.term) {
          fail("leader completeness: leader " + std::to_string(r.id) + " of term " + std::to_string(ready.term) +
               " lacks committed index " + std::to_string(index));
          break;
        }
      }
    }
  }
  if (n.commit() < r.last_commit) {
    fail("commit of node " + std::to_string(r.id) + " went back");
  }
  r.last_commit = n.commit();
}

void Cluster::pump(Replica& r) {
  while (r.node && r.node->has_ready()) {
    Ready ready = r.node->ready();
    check_ready(r, ready);
    if (ready.snapshot) {
      r.sm.clear();
      const Bytes& data = ready.snapshot->data;
      for (std::size_t at = 0; at + 8 <= data.size(); at += 8) {
        r.sm.push_back(decode_u64(data, at));
      }
      r.sm_set.clear();
      r.sm_set.insert(r.sm.begin(), r.sm.end());
      r.applied = ready.snapshot->meta.index;
    }
    for (const Entry& e : ready.committed) {
      // State machine safety: one entry per index, whoever applies it.
      auto [it, inserted] = committed_.try_emplace(e.index, Committed{e.term, e.kind, e.data});
      if (!inserted && (it->second.term != e.term || it->second.kind != e.kind || it->second.data != e.data)) {
        fail("state machine safety: node " + std::to_string(r.id) + " applies a different entry at index " +
             std::to_string(e.index));
      }
      apply(r, e);
    }
    for (ReadState& read : ready.reads) {
      if (!read.rejected && read.context.size() == 8) {
        const std::uint64_t read_id = decode_u64(read.context);
        auto floor = read_floor_.find(read_id);
        if (floor != read_floor_.end() && read.index < floor->second) {
          fail("stale read on node " + std::to_string(r.id) + ": index " + std::to_string(read.index) +
               " misses committed index " + std::to_string(floor->second));
        }
      }
      r.reads.push_back(std::move(read));
    }
    for (Message& m : ready.messages) {
      send(std::move(m));
    }
    std::uniform_int_distribution<int> disk(0, std::max(0, options_.faults.max_disk_delay));
    std::uint64_t at = now_ + static_cast<std::uint64_t>(disk(rng_));
    if (!r.writes.empty()) {
      at = std::max(at, r.writes.back().at);  // a disk completes writes in order
    }
    r.writes.push_back(Replica::Write{at, ready.id, std::move(ready.hard_state), std::move(ready.snapshot),
                                      std::move(ready.entries), std::move(ready.messages_after_persist)});
    complete_writes(r, false);
  }
  if (r.node) {
    Node& n = *r.node;
    // Leader append-only: while it leads a term, a leader's log only grows.
    if (n.role() == Role::Leader) {
      if (r.leader_term == n.term()) {
        auto term = n.term_at(r.leader_last);
        if (n.last_index() < r.leader_last || (term && *term != r.leader_last_term)) {
          fail("leader append-only: leader " + std::to_string(r.id) + " lost index " + std::to_string(r.leader_last));
        }
      }
      r.leader_term = n.term();
      r.leader_last = n.last_index();
      r.leader_last_term = n.term_at(n.last_index()).value_or(0);
    } else {
      r.leader_term = 0;
    }
  }
}

void Cluster::complete_writes(Replica& r, bool all_due) {
  (void)all_due;
  while (r.node && !r.writes.empty() && r.writes.front().at <= now_) {
    Replica::Write w = std::move(r.writes.front());
    r.writes.pop_front();
    Storage& s = r.storage;
    if (w.hard_state) {
      if (w.hard_state->term < s.hard_state.term ||
          (w.hard_state->term == s.hard_state.term && s.hard_state.vote != 0 &&
           w.hard_state->vote != s.hard_state.vote)) {
        fail("node " + std::to_string(r.id) + " persisted term/vote going back");
      }
      s.hard_state = *w.hard_state;
    }
    if (w.snapshot) {
      s.snapshot = std::move(w.snapshot);
      s.entries.clear();
    }
    if (!w.entries.empty()) {
      const Index first = w.entries.front().index;
      std::erase_if(s.entries, [&](const Entry& e) { return e.index >= first; });
      const Index base = s.entries.empty() ? (s.snapshot ? s.snapshot->meta.index : 0) : s.entries.back().index;
      if (!s.entries.empty() && first != base + 1) {
        fail("node " + std::to_string(r.id) + " storage gap before index " + std::to_string(first));
      }
      for (Entry& e : w.entries) {
        s.entries.push_back(std::move(e));
      }
    }
    r.node->advance(w.ready_id);
    for (Message& m : w.after) {
      if (m.type == MessageType::AppendResponse && !m.reject && m.index > 0) {
        // Durable before counted: the acknowledged entries are in this node's storage.
        const Index stored =
            std::max(s.entries.empty() ? 0 : s.entries.back().index, s.snapshot ? s.snapshot->meta.index : 0);
        if (stored < m.index) {
          fail("node " + std::to_string(r.id) + " acknowledged index " + std::to_string(m.index) + " with only " +
               std::to_string(stored) + " stored");
        }
      }
      send(std::move(m));
    }
  }
}

// --- time --------------------------------------------------------------------------------------

void Cluster::tick(NodeId id) {
  Replica& r = replica(id);
  if (r.node) {
    r.node->tick();
    pump(r);
  }
}

void Cluster::report_liveness() {
  for (auto& [id, r] : replicas_) {
    if (!r->node) {
      continue;
    }
    for (const auto& [other, o] : replicas_) {
      if (other != id && (!o->node || !linked(other, id))) {
        r->node->report_node_down(other);
        pump(*r);
      }
    }
  }
}

void Cluster::tick_all() {
  for (auto& [id, r] : replicas_) {
    if (r->node) {
      r->node->tick();
      pump(*r);
    }
  }
}

void Cluster::run(int steps) {
  for (int k = 0; k < steps; ++k) {
    ++now_;
    deliver_due();
    for (auto& [id, r] : replicas_) {
      complete_writes(*r, true);
      pump(*r);
    }
    if (options_.auto_tick && now_ % static_cast<std::uint64_t>(options_.steps_per_tick) == 0) {
      for (auto& [id, r] : replicas_) {
        for (r->clock += r->clock_rate; r->clock >= 1 && r->node; r->clock -= 1) {
          r->node->tick();
          pump(*r);
        }
      }
      report_liveness();
      if ((now_ / static_cast<std::uint64_t>(options_.steps_per_tick)) % 10 == 0) {
        check_logs();
      }
    }
  }
}

bool Cluster::run_until(const std::function<bool()>& done, int max_steps) {
  for (int k = 0; k < max_steps; ++k) {
    if (done()) {
      return true;
    }
    run(1);
  }
  return done();
}

void Cluster::settle(int max_steps) {
  const bool auto_tick = options_.auto_tick;
  options_.auto_tick = false;
  for (int k = 0; k < max_steps; ++k) {
    bool pending = !network_.empty();
    for (const auto& [id, r] : replicas_) {
      pending = pending || (r->node && (!r->writes.empty() || r->node->has_ready()));
    }
    if (!pending) {
      break;
    }
    run(1);
  }
  options_.auto_tick = auto_tick;
}

void Cluster::check_logs() {
  std::vector<Replica*> live;
  for (auto& [id, r] : replicas_) {
    if (r->node) {
      live.push_back(r.get());
    }
  }
  for (std::size_t a = 0; a < live.size(); ++a) {
    for (std::size_t b = a + 1; b < live.size(); ++b) {
      const Node& x = *live[a]->node;
      const Node& y = *live[b]->node;
      const Index lo = std::max(x.first_index(), y.first_index()) - 1;
      const Index hi = std::min(x.last_index(), y.last_index());
      // Log matching: below the highest index where both hold the same term, all terms agree.
      bool matched = false;
      for (Index i = hi; i >= lo && i > 0; --i) {
        const auto tx = x.term_at(i);
        const auto ty = y.term_at(i);
        if (!matched) {
          matched = tx == ty;
        } else if (tx != ty) {
          fail("log matching: nodes " + std::to_string(live[a]->id) + " and " + std::to_string(live[b]->id) +
               " differ at index " + std::to_string(i) + " below a matching entry");
          return;
        }
        if (i == 0) {
          break;
        }
      }
    }
  }
}

}  // namespace elfin::raft::sim
