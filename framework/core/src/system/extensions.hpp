// Extensions: what batteries keep per system (system_hooks.hpp) — their state by name, the hooks
// that stop their threads when the system is dropped, and the series they add to every scrape.
//
// Thread safety: every member from any thread. State and hooks share a mutex; the collectors have
// their own, since a scrape holds only a const system.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <elfin/internal/system_hooks.hpp>

namespace elfin::detail {

class Extensions {
 public:
  /// The state named `name`, made by `make` on first use.
  [[nodiscard]] std::shared_ptr<void> get(std::string_view name, const std::function<std::shared_ptr<void>()>& make);

  void add_shutdown_hook(std::function<void()> hook);
  /// Runs the shutdown hooks once, newest first.
  void run_shutdown_hooks();

  void add_scrape_collector(ScrapeCollector collect);
  /// A copy: collectors run without the lock, so one may be added meanwhile.
  [[nodiscard]] std::vector<ScrapeCollector> scrape_collectors() const;

 private:
  std::mutex mu_;
  std::vector<std::pair<std::string, std::shared_ptr<void>>> state_;  // guarded by mu_
  std::vector<std::function<void()>> shutdown_hooks_;                 // guarded by mu_
  mutable std::mutex collectors_mu_;
  std::vector<ScrapeCollector> collectors_;  // guarded by collectors_mu_
};

}  // namespace elfin::detail
