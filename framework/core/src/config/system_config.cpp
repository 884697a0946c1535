#include <elfin/system_config.hpp>

#include <elfin/dumping.hpp>
#include <elfin/logging.hpp>
#include <elfin/telemetry.hpp>

#include <fmt/format.h>

namespace elfin {

ConfigReport check_system_config(const AnyConfig& section, std::string_view scope) {
  ConfigReport report;
  if (section.keys().empty()) return report;
  bool has_system = false;
  for (const auto& key : section.keys()) has_system = has_system || key == "system";
  if (!has_system) return report;
  AnyConfig system = section.section("system");
  // section() yields an empty table for a `system` that is not a table; say so.
  if (system.empty()) {
    auto handle = msgpack::unpack(section.msgpack().data(), section.msgpack().size());
    if (const auto* value = detail::config_lookup(handle.get(), "system");
        value != nullptr && value->type != msgpack::type::MAP) {
      report.errors.push_back(fmt::format("{}{} system: expected a table, got {}", section.where("system"), scope,
                                          detail::describe_config_value(*value)));
    }
    return report;
  }
  // Locations of the system table's keys are relative to it; the scope names the whole path
  // ("[counters] system." + "mailbox.capacity").
  auto config = system.decode_reporting<SystemConfig>(report, fmt::format("{} system.", scope));
  std::ignore =
      system.section("dumping").decode_reporting<DumpingConfig>(report, fmt::format("{} system.dumping.", scope));
  std::ignore =
      system.section("telemetry").decode_reporting<TelemetryConfig>(report, fmt::format("{} system.telemetry.", scope));
  std::ignore =
      system.section("logging").decode_reporting<LoggingConfig>(report, fmt::format("{} system.logging.", scope));
  if (config.mailbox.capacity == 0 && system.section("mailbox").keys().size() == 1 &&
      system.section("mailbox").keys().front() == "capacity") {
    report.errors.push_back(fmt::format("{}{} system.mailbox.capacity: expected a positive integer, got 0",
                                        system.where("mailbox.capacity"), scope));
  }
  return report;
}

namespace {
void find_unused(const AnyConfig& document, const std::vector<std::string>& groups, const std::string& prefix,
                 const AnyConfig& table, ConfigReport& report) {
  auto& warnings = report.warnings;
  auto handle = msgpack::unpack(table.msgpack().data(), table.msgpack().size());
  for (const auto& key : table.keys()) {
    const std::string path = prefix.empty() ? key : fmt::format("{}.{}", prefix, key);
    const msgpack::object* value = detail::config_lookup(handle.get(), key);
    const bool is_table = value != nullptr && value->type == msgpack::type::MAP;
    bool is_group = path == "common" || path == "system.runtime";
    for (const auto& group : groups) is_group = is_group || group == path;
    if (is_group && !is_table) {
      report.errors.push_back(fmt::format("{}[{}]: expected a table, got {}", document.where(path), path,
                                          detail::describe_config_value(*value)));
      continue;
    }
    if (path == "common" || path == "system.runtime") continue;
    bool is_prefix = path == "system";  // holds [system.runtime]
    for (const auto& group : groups) is_prefix = is_prefix || group.starts_with(path + ".");
    if (is_group) continue;
    if (is_prefix && is_table) {
      find_unused(document, groups, path, table.section(key), report);
      continue;
    }
    warnings.push_back(fmt::format("{}[{}]: no group of the topology is named `{}`; the section is not used",
                                   document.where(path), path, path));
  }
}
}  // namespace

ConfigReport check_config_document(const AnyConfig& document, const std::vector<std::string>& groups) {
  ConfigReport report;
  find_unused(document, groups, "", document, report);
  return report;
}

}  // namespace elfin
