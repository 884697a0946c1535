#include <elfin/raft/node.hpp>

#include <utility>

#include "core.hpp"

namespace elfin::raft {

Node::Node(Config config, Recovered recovered, std::function<std::optional<Snapshot>()> snapshot_source)
    : core_(std::make_unique<internal::Core>(config, std::move(recovered), std::move(snapshot_source))) {}
Node::Node(Node&&) noexcept = default;
Node& Node::operator=(Node&&) noexcept = default;
Node::~Node() = default;

void Node::tick() { core_->tick(); }
void Node::step(const Message& message) { core_->step(Message(message)); }
void Node::step(Message&& message) { core_->step(std::move(message)); }
void Node::campaign() { core_->campaign_now(); }
ProposeResult Node::propose(Bytes data) { return core_->propose(std::move(data)); }
ProposeResult Node::propose_conf_change(ConfChange change) { return core_->propose_conf_change(change); }
void Node::read_index(Bytes context) { core_->read_index(std::move(context)); }
void Node::transfer_leadership(NodeId to) { core_->transfer_leadership(to); }
void Node::compact(Index index) { core_->compact(index); }
void Node::report_unreachable(NodeId node) { core_->report_unreachable(node); }
void Node::report_snapshot(NodeId node, bool ok) { core_->report_snapshot(node, ok); }
void Node::report_node_down(NodeId node) { core_->report_node_down(node); }
void Node::report_node_up(NodeId node) { core_->report_node_up(node); }
void Node::wake() { core_->wake(); }
bool Node::quiesced() const noexcept { return core_->quiesced(); }
bool Node::has_ready() const { return core_->has_ready(); }
Ready Node::ready() { return core_->ready(); }
void Node::advance(std::uint64_t ready_id) { core_->advance(ready_id); }

NodeId Node::id() const noexcept { return core_->id(); }
Role Node::role() const noexcept { return core_->role(); }
NodeId Node::leader() const noexcept { return core_->leader(); }
Term Node::term() const noexcept { return core_->term(); }
NodeId Node::vote() const noexcept { return core_->vote(); }
Index Node::commit() const noexcept { return core_->commit(); }
Index Node::applied() const noexcept { return core_->applied(); }
Index Node::first_index() const noexcept { return core_->log().first_index(); }
Index Node::last_index() const noexcept { return core_->log().last_index(); }
Index Node::persisted_index() const noexcept { return core_->log().persisted(); }
std::optional<Term> Node::term_at(Index index) const { return core_->log().term(index); }
const ConfState& Node::conf() const noexcept { return core_->conf(); }
NodeId Node::transferee() const noexcept { return core_->transferee(); }
std::optional<Index> Node::match(NodeId node) const {
  if (core_->role() != Role::Leader) return std::nullopt;
  return core_->match_of(node);
}

}  // namespace elfin::raft
