#include <elfin/configurer.hpp>
#include <elfin/logging.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <elfin/actor_group.hpp>
#include <elfin/context.hpp>
#include <elfin/handle.hpp>
#include <elfin/messages.hpp>
#include <elfin/signal.hpp>
#include <elfin/system_config.hpp>
#include <elfin/system_view.hpp>
#include <elfin/task.hpp>

namespace elfin::configurer {

namespace {

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += (out.empty() ? "" : "\n") + line;
  return out;
}

/// What the configurer's Signal sources send it: SIGHUP reloads the changed groups, SIGUSR2 all.
struct SignalledReload {
  bool force = false;
  ELFIN_MESSAGE(configurer, SignalledReload, force);
};

struct Update {
  std::string group;
  Addr addr;
  AnyConfig section;
  bool entrypoint = false;
};

/// Asks each group to validate its section; the objections, one line per group.
Task<std::vector<std::string>> validate(Context<> ctx, std::vector<Update> updates) {
  std::vector<std::string> objections;
  for (auto& update : updates) {
    ValidateConfig request{update.section};
    auto answers = co_await ctx.request_to(update.addr, std::move(request)).all();
    for (const auto& answer : answers) {
      // A discarded request (the default) or a dropped token is no objection; an actor that
      // failed while validating is one.
      if (answer && !answer->empty()) {
        objections.push_back(fmt::format("[{}] rejected the config: {}", update.group, *answer));
      } else if (!answer && answer.error() == RequestError::Failed) {
        objections.push_back(fmt::format("[{}] failed while validating the config", update.group));
      }
    }
  }
  co_return objections;
}

/// Re-reads the config file and, if every check passes, applies it. The file is read with a plain
/// blocking read on the actor's worker: config files are a few kilobytes and reloads are rare, so
/// this costs less than handing it to another thread.
Task<ReloadReport> reload(Context<> ctx, bool force) {
  SystemView view = SystemView::of(ctx);
  ReloadReport report;
  const std::string& path = view.config_path();
  if (path.empty()) {
    report.reason = "the system was not started from a config file (StartOptions::config_path); nothing to reload";
    co_return report;
  }
  auto document = AnyConfig::from_file(path);
  if (!document) {
    report.reason = document.error().message();
    co_return report;
  }

  std::vector<Update> updates;
  std::vector<std::string> names;
  for (const auto& group : view.groups()) names.push_back(group.name);
  ConfigReport shape = check_config_document(*document, names);
  std::vector<std::string> errors = std::move(shape.errors);
  report.warnings = std::move(shape.warnings);
  for (const auto& group : view.groups()) {
    AnyConfig section = document->for_group(group.name);
    ConfigReport checked = view.check_config(group.name, section);
    for (auto& e : checked.errors) errors.push_back(std::move(e));
    for (auto& w : checked.warnings) report.warnings.push_back(std::move(w));
    if (force || !(section == view.applied_config(group.name))) {
      updates.push_back(Update{group.name, group.addr, std::move(section), group.entrypoint});
    }
  }
  if (errors.empty()) errors = co_await validate(ctx, updates);
  if (!errors.empty()) {
    report.reason = join(errors);
    co_return report;
  }

  for (auto& update : updates) {
    if (auto applied = view.apply_config(update.group, update.section); !applied) {
      // check_config passed, so this does not happen; if it did, the other groups still update.
      log::error("[{}]: {}", update.group, applied.error());
      continue;
    }
    UpdateConfig message{std::move(update.section)};
    std::ignore = ctx.unbounded_send_to(update.addr, std::move(message));
    report.updated.push_back(update.group);
  }
  report.accepted = true;
  co_return report;
}

/// The start-up round: the sections are applied already; validate them, then start the groups
/// that are not entrypoints with their UpdateConfig.
Task<> start_up(Context<> ctx) {
  SystemView view = SystemView::of(ctx);
  std::vector<Update> updates;
  for (const auto& group : view.groups()) {
    if (group.name == ctx.group()) continue;
    updates.push_back(Update{group.name, group.addr, view.applied_config(group.name), group.entrypoint});
  }
  auto objections = co_await validate(ctx, updates);
  if (!objections.empty()) {
    const std::string reason = "the config was rejected at start-up:\n" + join(objections);
    log::error("{}", reason);
    view.fail(reason);
    co_return;
  }
  for (auto& update : updates) {
    if (update.entrypoint) continue;  // the system started it already
    UpdateConfig message{std::move(update.section)};
    std::ignore = ctx.unbounded_send_to(update.addr, std::move(message));
  }
}

void log_report(const ReloadReport& report, bool force) {
  for (const auto& warning : report.warnings) log::warn("{}", warning);
  if (report.accepted) {
    log::info("config reloaded{}; updated: {}", force ? " (forced)" : "",
              report.updated.empty() ? "nothing changed" : fmt::format("{}", fmt::join(report.updated, ", ")));
  } else {
    log::error("config reload rejected, the running configs stay:\n{}", report.reason);
  }
}

Task<> configurer(Context<> ctx) {
  // As in elfo: SIGHUP is ReloadConfigs, SIGUSR2 is ReloadConfigs::forcing().
  ctx.attach(Signal(SignalKind::Hangup, SignalledReload{false}));
  ctx.attach(Signal(SignalKind::User2, SignalledReload{true}));
  bool started = false;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        [&](const ConfigUpdated&) -> Task<> {
          if (!std::exchange(started, true)) co_await start_up(ctx);
        },
        [&](const SignalledReload& signalled) -> Task<> {
          ReloadReport report = co_await reload(ctx, signalled.force);
          log_report(report, signalled.force);
        },
        [&](const ReloadConfigs& request, ResponseToken<ReloadConfigs> token) -> Task<> {
          ReloadReport report = co_await reload(ctx, request.force);
          log_report(report, request.force);
          ctx.respond(std::move(token), std::move(report));
        });
  }
}

}  // namespace

Blueprint blueprint() { return ActorGroup().exec(configurer); }

}  // namespace elfin::configurer

ELFIN_INSTANTIATE_MESSAGE(elfin::configurer::ReloadConfigs);
