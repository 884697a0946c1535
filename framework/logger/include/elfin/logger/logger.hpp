// The logger (`system.loggers`): writes the log records of every actor and of the runtime, one
// line each, to stderr, stdout or a file.
//
//   topology.local("system.loggers").mount(elfin::logger::blueprint());
//
//   [system.loggers]
//   sink = "file"                  # "stderr" (default), "stdout" or "file"
//   path = "/var/log/shop/shop.log"  # for sink = "file"; appended to; relative to the config file
//
// Lines look like `2026-11-22T10:00:00.123Z INFO [7226239398017728512] counters/42 - text`.
// SIGHUP (or a `ReopenLogFile` message) reopens the file after rotation. The logger counts what it
// wrote as `elfin_written_events_total`; the runtime counts emitted, limited and lost records.
//
// Thread safety: the blueprint is a value; the group runs one actor.
#pragma once

#include <string>

#include <elfin/blueprint.hpp>
#include <elfin/config.hpp>
#include <elfin/message.hpp>

namespace elfin::logger {

struct Config {
  std::string sink = "stderr";
  std::string path;
  ELFIN_CONFIG(sink, path);
};

/// Reopens the log file (after it was moved away by rotation).
struct ReopenLogFile {
  ELFIN_MESSAGE(logger, ReopenLogFile);
};

[[nodiscard]] Blueprint blueprint();

}  // namespace elfin::logger

ELFIN_EXTERN_MESSAGE(elfin::logger::ReopenLogFile);  // compiled once, in src/logger.cpp
