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

std::string_view to_string(SendError e) {
  switch (e) {
    case SendError::NoRoute:
      return "no recipient: no route or router accepted the message";
    case SendError::Closed:
      return "closed: the recipient's mailbox is closed";
    case SendError::Full:
      return "full: the recipient's mailbox is full";
    case SendError::UnknownAddr:
      return "unknown address: no group or actor lives there";
  }
  return "unknown send error";
}

std::string_view to_string(RequestError e) {
  switch (e) {
    case RequestError::Failed:
      return "failed: the request reached no one, or its recipient finished before answering";
    case RequestError::Ignored:
      return "ignored: the recipient dropped the request without answering";
  }
  return "unknown request error";
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
