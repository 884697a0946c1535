#include <elfin/protocols/kv.hpp>

ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::kv::Leave);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::kv::Leaders);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::kv::Put);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::kv::Get);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::kv::Delete);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::kv::Cas);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::kv::DeleteIfVersion);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::kv::Scan);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::kv::ShardRequest);

namespace elfin::protocols::kv {

std::string_view to_string(KvErrorKind kind) noexcept {
  switch (kind) {
    case KvErrorKind::NotLeader:
      return "NotLeader";
    case KvErrorKind::VersionMismatch:
      return "VersionMismatch";
    case KvErrorKind::Timeout:
      return "Timeout";
    case KvErrorKind::Unavailable:
      return "Unavailable";
    case KvErrorKind::BadRequest:
      return "BadRequest";
    case KvErrorKind::Other:
      return "Other";
  }
  return "?";
}

std::string to_string(const KvError& error) {
  std::string out = fmt::format("{} (shard {}", to_string(error.kind), error.shard);
  if (error.kind == KvErrorKind::NotLeader) out += fmt::format(", leader {}", error.leader_hint);
  if (error.kind == KvErrorKind::VersionMismatch) out += fmt::format(", current version {}", error.current_version);
  out += ")";
  if (!error.detail.empty()) out += fmt::format(": {}", error.detail);
  return out;
}

}  // namespace elfin::protocols::kv
