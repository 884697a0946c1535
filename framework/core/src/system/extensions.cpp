#include "system/extensions.hpp"

namespace elfin::detail {

std::shared_ptr<void> Extensions::get(std::string_view name, const std::function<std::shared_ptr<void>()>& make) {
  std::lock_guard lock(mu_);
  for (const auto& [n, state] : state_) {
    if (n == name) return state;
  }
  return state_.emplace_back(std::string(name), make()).second;
}

void Extensions::add_shutdown_hook(std::function<void()> hook) {
  std::lock_guard lock(mu_);
  shutdown_hooks_.push_back(std::move(hook));
}

void Extensions::run_shutdown_hooks() {
  std::vector<std::function<void()>> hooks;
  {
    std::lock_guard lock(mu_);
    hooks.swap(shutdown_hooks_);
  }
  for (auto it = hooks.rbegin(); it != hooks.rend(); ++it) (*it)();
}

void Extensions::add_scrape_collector(ScrapeCollector collect) {
  std::lock_guard lock(collectors_mu_);
  collectors_.push_back(std::move(collect));
}

std::vector<ScrapeCollector> Extensions::scrape_collectors() const {
  std::lock_guard lock(collectors_mu_);
  return collectors_;
}

}  // namespace elfin::detail
