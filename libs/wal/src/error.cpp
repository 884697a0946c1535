#include <elfin/wal/error.hpp>

#include <cerrno>
#include <cstring>
#include <utility>

namespace elfin::wal {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::NoSpace:
      return "no space";
    case ErrorKind::WriteFailed:
      return "write failed";
    case ErrorKind::SyncFailed:
      return "sync failed";
    case ErrorKind::WriterFailed:
      return "writer failed";
    case ErrorKind::IoFailed:
      return "I/O failed";
    case ErrorKind::ReadFailed:
      return "read failed";
    case ErrorKind::CorruptRecord:
      return "corrupt record";
    case ErrorKind::CorruptHeader:
      return "corrupt segment header";
    case ErrorKind::Gap:
      return "gap";
    case ErrorKind::Mismatch:
      return "mismatch";
    case ErrorKind::UnsupportedVersion:
      return "unsupported version";
    case ErrorKind::RecordTooLarge:
      return "record too large";
    case ErrorKind::InvalidRecord:
      return "invalid record";
    case ErrorKind::NotRepaired:
      return "not repaired";
  }
  return "unknown";
}

std::string_view to_string(IoOp op) {
  switch (op) {
    case IoOp::None:
      return "";
    case IoOp::Open:
      return "open";
    case IoOp::Read:
      return "read";
    case IoOp::Write:
      return "write";
    case IoOp::Sync:
      return "fdatasync";
    case IoOp::SyncDir:
      return "fsync of the directory";
    case IoOp::Truncate:
      return "truncate";
    case IoOp::Allocate:
      return "fallocate";
    case IoOp::Rename:
      return "rename";
    case IoOp::Remove:
      return "remove";
    case IoOp::List:
      return "list";
  }
  return "";
}

namespace {
// strerror is not thread-safe; the GNU strerror_r returns the text (maybe not in `buf`).
std::string errno_text(int value) {
  char buf[128];
#if defined(_GNU_SOURCE)
  return ::strerror_r(value, buf, sizeof buf);
#else
  return ::strerror_r(value, buf, sizeof buf) == 0 ? std::string(buf) : fmt::format("errno {}", value);
#endif
}
}  // namespace

std::string to_string(const Error& error) {
  std::string out(to_string(error.kind));
  if (!error.what.empty()) out += fmt::format(": {}", error.what);
  if (error.kind == ErrorKind::WriterFailed && error.cause) out += fmt::format(" (earlier: {})", *error.cause);
  if (!error.path.empty()) out += fmt::format(" in {} at byte {}", error.path, error.offset);
  if (error.partition) out += fmt::format(", partition {}", *error.partition);
  if (error.kind == ErrorKind::Gap || error.kind == ErrorKind::Mismatch || error.kind == ErrorKind::RecordTooLarge) {
    out += fmt::format(" (expected {}, found {})", error.expected, error.found);
  }
  if (error.op != IoOp::None) out += fmt::format(": {}", to_string(error.op));
  if (error.sys_errno != 0) out += fmt::format(": {}", errno_text(error.sys_errno));
  return out;
}

Error io_error(ErrorKind kind, IoOp op, Errno err, std::string path, std::uint64_t offset) {
  if (err.value == ENOSPC && (op == IoOp::Write || op == IoOp::Allocate)) kind = ErrorKind::NoSpace;
  Error error;
  error.kind = kind;
  error.op = op;
  error.sys_errno = err.value;
  error.path = std::move(path);
  error.offset = offset;
  return error;
}

}  // namespace elfin::wal
