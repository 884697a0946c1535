// The simulated network: links, their faults, and the queue of what is on its way.
#include <elfin/testing/sim_network.hpp>

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include <elfin/message.hpp>

#include "sim_network_state.hpp"

namespace elfin::testing {

namespace {

using Nanos = std::chrono::nanoseconds;

/// FNV-1a: a short fingerprint of a payload for the trace, so two runs compare contents too.
std::uint64_t fingerprint(std::string_view bytes, std::uint64_t h = 0xCBF29CE484222325ull) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

std::uint64_t fingerprint(const SimNetwork::State::Event& e) {
  if (e.kind == SimNetwork::State::Event::Kind::Message) return fingerprint(e.payload);
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (const auto& a : e.answers) {
    h = fingerprint(std::string_view(reinterpret_cast<const char*>(&a.status), 1), h);
    h = fingerprint(a.payload, h);
  }
  return h;
}

thread_local const SimLink* tls_starting = nullptr;

}  // namespace

std::string format_sim_time(Nanos t) {
  const auto ns = t.count();
  return fmt::format("{:>5}.{:06} ms", ns / 1'000'000, ns % 1'000'000);
}

const SimLink* starting_sim_node() { return tls_starting; }
StartingSimNode::StartingSimNode(const SimLink& link) : previous_(tls_starting) { tls_starting = &link; }
StartingSimNode::~StartingSimNode() { tls_starting = previous_; }

SimNetwork::State::State(std::uint64_t seed, std::uint16_t node_count, LinkFaults faults)
    : default_faults(faults), nodes(node_count), random_(seed), node_states_(node_count + 1u) {}

const LinkFaults& SimNetwork::State::faults_locked(std::uint16_t from, std::uint16_t to) const {
  auto it = link_faults.find({from, to});
  return it == link_faults.end() ? default_faults : it->second;
}

bool SimNetwork::State::up_locked(std::uint16_t node) const {
  return node < node_states_.size() && node_states_[node].up;
}

std::vector<std::uint16_t> SimNetwork::State::connected(std::uint16_t self,
                                                        const std::vector<std::uint16_t>& wanted) const {
  std::lock_guard lock(mu);
  std::vector<std::uint16_t> out;
  for (auto n : wanted) {
    if (n != self && up_locked(n) && !cuts.contains({self, n})) out.push_back(n);
  }
  return out;
}

void SimNetwork::State::log_locked(std::string_view text) {
  trace_.push_back(fmt::format("{} {}", format_sim_time(now_), text));
}

void SimNetwork::State::log(std::string_view text) {
  std::lock_guard lock(mu);
  log_locked(text);
}

std::vector<std::string> SimNetwork::State::trace() const {
  std::lock_guard lock(mu);
  return trace_;
}

void SimNetwork::State::route_locked(Event event) {
  const LinkFaults& faults = faults_locked(event.from, event.to);
  ++stats.sent;
  // Every message draws the same three numbers, whatever its fate, so that one fault more or less
  // shifts no later draw of an unrelated message.
  const bool dropped = random_.chance(faults.drop);
  const bool duplicated = random_.chance(faults.duplicate);
  const auto span = static_cast<std::uint64_t>(std::max<Nanos::rep>(0, (faults.max_delay - faults.min_delay).count()));
  const Nanos delay = faults.min_delay + Nanos(static_cast<Nanos::rep>(random_.below(span + 1)));
  if (!up_locked(event.from)) {
    event.lost = fmt::format("node {} is down", event.from);
  } else if (cuts.contains({event.from, event.to})) {
    event.lost = fmt::format("the link {} -> {} is cut", event.from, event.to);
  } else if (!up_locked(event.to)) {
    event.lost = fmt::format("node {} is down", event.to);
  } else if (dropped) {
    event.lost = fmt::format("dropped on the link {} -> {}", event.from, event.to);
  }
  event.at = now_ + delay;
  if (!faults.reorder) {
    Nanos& tail = tail_[{event.from, event.to}];
    event.at = std::max(event.at, tail);
    tail = event.at;
  }
  event.to_incarnation = event.to < node_states_.size() ? node_states_[event.to].incarnation : 0;
  event.seq = next_seq_++;
  const char* kind = event.kind == Event::Kind::Message ? (event.request ? "request" : "send") : "response";
  log_locked(fmt::format("{} {}->{} {} #{} h={:016x} delay={}{}", kind, event.from, event.to, event.what, event.seq,
                         fingerprint(event), format_sim_time(delay),
                         event.lost ? fmt::format(" LOST ({})", *event.lost) : std::string()));
  if (event.lost) ++stats.lost;
  // A lost message is gone; a lost request or response still travels, to fail its requester when
  // it would have arrived.
  if (event.lost && event.kind == Event::Kind::Message && !event.request) return;
  if (duplicated && !event.lost) {
    Event copy = event;
    copy.duplicate = true;
    copy.seq = next_seq_++;
    const Nanos copy_delay = faults.min_delay + Nanos(static_cast<Nanos::rep>(random_.below(span + 1)));
    copy.at = std::max(now_ + copy_delay, event.at);  // a copy never overtakes its original
    ++stats.duplicated;
    log_locked(fmt::format("duplicate {}->{} {} #{} of #{} delay={}", copy.from, copy.to, copy.what, copy.seq,
                           event.seq, format_sim_time(copy.at - now_)));
    queue_.emplace(std::make_pair(copy.at, copy.seq), std::move(copy));
  }
  queue_.emplace(std::make_pair(event.at, event.seq), std::move(event));
}

void SimNetwork::State::send(std::uint16_t from, std::uint16_t to, const std::string& remote_name, Envelope& envelope) {
  const MessageVTable& vtable = envelope.vtable();
  Event event;
  event.kind = Event::Kind::Message;
  event.from = from;
  event.to = to;
  event.what = fmt::format("{}.{}", vtable.protocol, vtable.name);
  event.protocol = vtable.protocol;
  event.name = vtable.name;
  event.sender = envelope.sender();
  event.trace = envelope.trace_id();
  event.remote_name = remote_name;
  auto* block = detail::EnvelopeAccess::block(envelope);
  event.recipient = block->recipient;
  const bool awaited = envelope.kind() == MessageKind::Request && detail::EnvelopeAccess::obligated(envelope) &&
                       block->request && vtable.request_ops != nullptr;
  try {
    vtable.pack(envelope.data(), event.payload);
  } catch (const std::exception& e) {
    if (awaited) {
      detail::EnvelopeAccess::discharge(envelope);
      block->request->fail(
          RequestError{RequestError::Failed, fmt::format("cannot encode {}: {}", event.what, e.what())});
    }
    log(fmt::format("send {}->{} {}: cannot encode: {}", from, to, event.what, e.what()));
    return;
  }
  std::lock_guard lock(mu);
  if (awaited) {
    event.request = true;
    event.request_all = block->request->is_all();
    event.request_id = next_request_++;
    pending_.emplace(event.request_id, Pending{block->request, vtable.request_ops, from, to});
    detail::EnvelopeAccess::discharge(envelope);  // from here on the network owes the answer
  }
  route_locked(std::move(event));
}

void SimNetwork::State::respond(std::uint16_t from, std::uint16_t to, std::uint64_t request_id,
                                std::vector<detail::EncodedAnswer> answers) {
  std::lock_guard lock(mu);
  Event event;
  event.kind = Event::Kind::Response;
  event.from = from;
  event.to = to;
  event.request_id = request_id;
  event.what = fmt::format("answer to request {}", request_id);
  event.answers = std::move(answers);
  route_locked(std::move(event));
}

std::optional<Nanos> SimNetwork::State::next_time() const {
  std::lock_guard lock(mu);
  if (queue_.empty()) return std::nullopt;
  return queue_.begin()->first.first;
}

std::vector<SimNetwork::State::Event> SimNetwork::State::take_due(Nanos t) {
  std::lock_guard lock(mu);
  std::vector<Event> due;
  while (!queue_.empty() && queue_.begin()->first.first <= t) {
    due.push_back(std::move(queue_.begin()->second));
    queue_.erase(queue_.begin());
  }
  return due;
}

std::optional<SimNetwork::State::Pending> SimNetwork::State::take_pending(std::uint64_t request_id) {
  std::lock_guard lock(mu);
  auto it = pending_.find(request_id);
  if (it == pending_.end()) return std::nullopt;
  Pending p = std::move(it->second);
  pending_.erase(it);
  return p;
}

void SimNetwork::State::set_now(Nanos t) {
  std::lock_guard lock(mu);
  now_ = t;
}

std::uint32_t SimNetwork::State::node_up(std::uint16_t node) {
  std::lock_guard lock(mu);
  auto& s = node_states_.at(node);
  s.up = true;
  return ++s.incarnation;
}

std::vector<SimNetwork::State::Failure> SimNetwork::State::node_down(std::uint16_t node, const std::string& why) {
  std::lock_guard lock(mu);
  node_states_.at(node).up = false;
  std::vector<Failure> failures;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.to == node) {
      failures.push_back({it->second.from, std::move(it->second.state), fmt::format("node {} {}", node, why)});
      it = pending_.erase(it);
    } else if (it->second.from == node) {
      it = pending_.erase(it);  // its requester is gone
    } else {
      ++it;
    }
  }
  return failures;
}

bool SimNetwork::State::is_up(std::uint16_t node) const {
  std::lock_guard lock(mu);
  return up_locked(node);
}

std::uint32_t SimNetwork::State::incarnation(std::uint16_t node) const {
  std::lock_guard lock(mu);
  return node < node_states_.size() ? node_states_[node].incarnation : 0;
}

// --- the knobs ---------------------------------------------------------------------------------

void SimNetwork::set_faults(LinkFaults faults) {
  std::lock_guard lock(state_->mu);
  state_->default_faults = faults;
  state_->link_faults.clear();
}

void SimNetwork::set_faults(std::uint16_t from, std::uint16_t to, LinkFaults faults) {
  std::lock_guard lock(state_->mu);
  state_->link_faults[{from, to}] = faults;
}

void SimNetwork::clear_faults() {
  std::lock_guard lock(state_->mu);
  state_->default_faults = LinkFaults{};
  state_->link_faults.clear();
}

void SimNetwork::cut(std::uint16_t from, std::uint16_t to) {
  {
    std::lock_guard lock(state_->mu);
    state_->cuts.insert({from, to});
  }
  state_->log(fmt::format("cut {}->{}", from, to));
}

void SimNetwork::partition(const std::vector<std::uint16_t>& side_a, const std::vector<std::uint16_t>& side_b) {
  for (auto a : side_a) {
    for (auto b : side_b) {
      cut(a, b);
      cut(b, a);
    }
  }
}

void SimNetwork::isolate(std::uint16_t node) {
  for (std::uint16_t other = 1; other <= state_->nodes; ++other) {
    if (other == node) continue;
    cut(node, other);
    cut(other, node);
  }
}

void SimNetwork::heal(std::uint16_t from, std::uint16_t to) {
  {
    std::lock_guard lock(state_->mu);
    state_->cuts.erase({from, to});
  }
  state_->log(fmt::format("heal {}->{}", from, to));
}

void SimNetwork::heal_all() {
  {
    std::lock_guard lock(state_->mu);
    state_->cuts.clear();
  }
  state_->log("heal all");
}

bool SimNetwork::is_cut(std::uint16_t from, std::uint16_t to) const {
  std::lock_guard lock(state_->mu);
  return state_->cuts.contains({from, to});
}

SimNetworkStats SimNetwork::stats() const {
  std::lock_guard lock(state_->mu);
  return state_->stats;
}

}  // namespace elfin::testing
