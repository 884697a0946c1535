// The default health check: the manager's own ping decides (see health_check.hpp).
#include <elfin/actors/shard_manager/health_check.hpp>

namespace elfin::actors::shard_manager {

Health DirectPingHealthCheck::check(const protocols::sharding::PodEntry&, PingOutcome ping) {
  switch (ping) {
    case PingOutcome::Answered:
      return Health::Alive;
    case PingOutcome::OtherIncarnation:
    case PingOutcome::Unreachable:
      return Health::Dead;
    case PingOutcome::NoAnswer:
      return Health::Unknown;
  }
  return Health::Unknown;
}

std::string_view to_string(PingOutcome outcome) noexcept {
  switch (outcome) {
    case PingOutcome::Answered:
      return "answered";
    case PingOutcome::OtherIncarnation:
      return "another incarnation answered";
    case PingOutcome::Unreachable:
      return "unreachable";
    case PingOutcome::NoAnswer:
      return "no answer";
  }
  return "?";
}

std::string_view to_string(Health health) noexcept {
  switch (health) {
    case Health::Alive:
      return "alive";
    case Health::Dead:
      return "dead";
    case Health::Unknown:
      return "unknown";
  }
  return "?";
}

}  // namespace elfin::actors::shard_manager
