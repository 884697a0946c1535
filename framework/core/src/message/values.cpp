// Printing and small behaviour of the core's value types.
#include <elfin/actor_status.hpp>
#include <elfin/addr.hpp>
#include <elfin/errors.hpp>

#include <fmt/format.h>

namespace elfin {

std::string to_string(Addr addr) {
  if (addr.is_null()) return "null";
  return fmt::format("{}/{}/{}/{}", addr.node_no(), addr.group_no(), addr.generation(), addr.slot());
}

std::string_view to_string(SendErrorKind e) {
  switch (e) {
    case SendErrorKind::NoRoute:
      return "no recipient: no route or router accepted the message";
    case SendErrorKind::Closed:
      return "closed: the recipient's mailbox is closed";
    case SendErrorKind::Full:
      return "full: the recipient's mailbox is full";
    case SendErrorKind::UnknownAddr:
      return "unknown address: no group or actor lives there";
  }
  return "unknown send error";
}

std::string to_string(const RequestError& e) {
  if (e == RequestError::Ignored) return "ignored: the recipient dropped the request without answering";
  if (e == RequestError::TimedOut) return e.reason().empty() ? "timed out" : fmt::format("timed out: {}", e.reason());
  if (e == RequestError::Stopped) return e.reason().empty() ? "stopped" : fmt::format("stopped: {}", e.reason());
  if (e.reason().empty()) return "failed";
  return fmt::format("failed: {}", e.reason());
}

std::string_view to_string(TryRecvError e) { return e == TryRecvError::Empty ? "empty" : "closed"; }

std::string_view to_string(ActorStatusKind kind) {
  switch (kind) {
    case ActorStatusKind::Initializing:
      return "Initializing";
    case ActorStatusKind::Normal:
      return "Normal";
    case ActorStatusKind::Terminating:
      return "Terminating";
    case ActorStatusKind::Terminated:
      return "Terminated";
    case ActorStatusKind::Alarming:
      return "Alarming";
    case ActorStatusKind::Failed:
      return "Failed";
  }
  return "Unknown";
}

const ActorStatus ActorStatus::INITIALIZING{ActorStatusKind::Initializing};
const ActorStatus ActorStatus::NORMAL{ActorStatusKind::Normal};
const ActorStatus ActorStatus::TERMINATING{ActorStatusKind::Terminating};
const ActorStatus ActorStatus::TERMINATED{ActorStatusKind::Terminated};
const ActorStatus ActorStatus::ALARMING{ActorStatusKind::Alarming};
const ActorStatus ActorStatus::FAILED{ActorStatusKind::Failed};

}  // namespace elfin
