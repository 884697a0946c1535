#include <elfin/protocols/raft.hpp>

ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::raft::RaftMessage);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::raft::Propose);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::raft::Read);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::raft::GetPartitionStatus);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::raft::AddReplica);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::raft::RemoveReplica);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::raft::TransferLeader);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::raft::Placement);

namespace elfin::protocols::raft {

std::string_view to_string(RaftErrorKind kind) noexcept {
  switch (kind) {
    case RaftErrorKind::NotLeader:
      return "NotLeader";
    case RaftErrorKind::Dropped:
      return "Dropped";
    case RaftErrorKind::Timeout:
      return "Timeout";
    case RaftErrorKind::ShuttingDown:
      return "ShuttingDown";
    case RaftErrorKind::Unavailable:
      return "Unavailable";
    case RaftErrorKind::BadRequest:
      return "BadRequest";
    case RaftErrorKind::Other:
      return "Other";
  }
  return "?";
}

std::string to_string(const RaftError& error) {
  std::string out = fmt::format("{} (partition {}", to_string(error.kind), error.partition);
  if (error.kind == RaftErrorKind::NotLeader) out += fmt::format(", leader {}", error.leader_hint);
  out += ")";
  if (!error.detail.empty()) out += fmt::format(": {}", error.detail);
  return out;
}

}  // namespace elfin::protocols::raft
