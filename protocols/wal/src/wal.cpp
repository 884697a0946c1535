#include <elfin/protocols/wal.hpp>

ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::wal::Append);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::wal::AppendBatch);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::wal::TruncateAfter);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::wal::SaveHardState);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::wal::Checkpoint);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::wal::ReadRange);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::wal::Flush);
ELFIN_INSTANTIATE_MESSAGE(elfin::protocols::wal::GetStats);

namespace elfin::protocols::wal {

std::string_view to_string(WalErrorKind kind) {
  switch (kind) {
    case WalErrorKind::NoSpace:
      return "NoSpace";
    case WalErrorKind::WriteFailed:
      return "WriteFailed";
    case WalErrorKind::WalFailed:
      return "WalFailed";
    case WalErrorKind::ShuttingDown:
      return "ShuttingDown";
    case WalErrorKind::StartFailed:
      return "StartFailed";
    case WalErrorKind::OutOfOrder:
      return "OutOfOrder";
    case WalErrorKind::TooLarge:
      return "TooLarge";
  }
  return "?";
}

std::string to_string(const WalError& error) {
  std::string out = fmt::format("{} (partition {})", to_string(error.kind), error.partition);
  if (error.kind == WalErrorKind::OutOfOrder) out += fmt::format(", expected index {}", error.expected_index);
  if (!error.detail.empty()) out += fmt::format(": {}", error.detail);
  return out;
}

}  // namespace elfin::protocols::wal
