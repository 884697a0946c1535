#include <elfin/detail/group_runtime.hpp>

#include <elfin/detail/mailbox.hpp>
#include <elfin/messages.hpp>

namespace elfin::detail {

GroupRuntime::GroupRuntime(GroupInit init, GroupTraits traits)
    : system_(init.system),
      name_(std::move(init.name)),
      group_no_(init.group_no),
      addr_(init.addr),
      entrypoint_(init.entrypoint),
      traits_(traits),
      mailbox_capacity_(traits.mailbox_capacity != 0 ? traits.mailbox_capacity : Mailbox::kDefaultCapacity) {}

GroupRuntime::~GroupRuntime() = default;

bool GroupRuntime::default_is_broadcast(const Envelope& envelope) {
  return envelope.vtable().is_system && !envelope.is<ValidateConfig>();
}

void GroupRuntime::set_mailbox_capacity_from(const AnyConfig& config) {
  if (auto capacity = config.mailbox_capacity()) mailbox_capacity_.store(*capacity, std::memory_order_relaxed);
}

AnyConfig GroupRuntime::applied_config() const {
  std::lock_guard lock(applied_mu_);
  return applied_;
}

void GroupRuntime::set_applied_config(AnyConfig config) {
  std::lock_guard lock(applied_mu_);
  applied_ = std::move(config);
}

}  // namespace elfin::detail
