#include <elfin/detail/group_runtime.hpp>

#include <utility>

#include <elfin/detail/actor_cell.hpp>
#include <elfin/internal/mailbox.hpp>
#include <elfin/messages.hpp>

#include "config/group_config.hpp"
#include "supervision/group_restarts.hpp"
#include "supervision/status_subscriptions.hpp"

namespace elfin::detail {

GroupRuntime::GroupRuntime(GroupInit init, GroupTraits traits)
    : system_(init.system),
      name_(std::move(init.name)),
      group_no_(init.group_no),
      addr_(init.addr),
      entrypoint_(init.entrypoint),
      traits_(traits),
      restarts_(std::make_unique<GroupRestarts>(*system_, traits_.restart, traits_.external,
                                                [this](ActorCell& cell) { return make_task(cell); })),
      group_config_(std::make_unique<GroupConfig>(
          GroupConfig::Targets{dumping_, logging_, telemetry_, *restarts_},
          traits_.mailbox_capacity != 0 ? traits_.mailbox_capacity : Mailbox::kDefaultCapacity)),
      status_subscriptions_(std::make_unique<StatusSubscriptions>()) {}

GroupRuntime::~GroupRuntime() = default;

bool GroupRuntime::default_is_broadcast(const Envelope& envelope) {
  return envelope.vtable().is_system && !envelope.is<ValidateConfig>();
}

Result<void, ConfigError> GroupRuntime::apply_runtime_config(const AnyConfig& config, const Commit& commit) {
  return group_config_->apply(config, commit);
}

void GroupRuntime::check_runtime_config(const AnyConfig& config, ConfigReport& report) const {
  group_config_->check(config, scope(), report);
}

AnyConfig GroupRuntime::applied_config() const { return group_config_->applied(); }

std::size_t GroupRuntime::mailbox_capacity() const { return group_config_->mailbox_capacity(); }

std::size_t GroupRuntime::restarting_actors() const { return restarts_->waiting(); }

void GroupRuntime::abandon_restarts() { restarts_->abandon(); }

void GroupRuntime::subscribe_statuses(Addr subscriber) {
  status_subscriptions_->subscribe(*system_, addr_, subscriber,
                                   [this](const std::function<void(ActorCell&)>& f) { for_each_actor(f); });
}

}  // namespace elfin::detail
