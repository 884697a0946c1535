// The dumper (`system.dumpers`): writes every message actors receive and send to a dump file.
//
// Mount it and the runtime starts recording (see elfin/dumping.hpp for the per-group controls):
//
//   topology.local("system.dumpers").mount(elfin::dumper::blueprint());
//
//   [system.dumpers]
//   path = "/var/log/app/app.dump"   # required; appended to, one JSON object per line; a relative
//                                    # path is relative to the config file's directory
//   write_interval = "500ms"         # how often recorded dumps are drained and written (sooner
//                                    # when 16 chunks of 1024 dumps wait)
//   max_body_size = "64KiB"          # longer message bodies are cut and marked
//
// Every `write_interval`, and whenever 16 full chunks of dumps wait, the dumper's writer thread
// takes what threads recorded (a swap per shard), formats and appends; actor threads never wait
// for the disk. SIGHUP or a
// `ReopenDumpFile` message reopens the file after rotation (logrotate: move the file, then signal).
// On termination (the dumper stops after user groups) the last dumps are written before it exits.
//
// Counters: `elfin_written_dumps_total` and `elfin_lost_written_dumps_total` (batches the file did
// not take), besides the runtime's `elfin_{emitted,limited,lost}_dumps_total`.
//
// Thread safety: the blueprint is a value; the group runs one actor.
#pragma once

#include <chrono>
#include <string>

#include <elfin/blueprint.hpp>
#include <elfin/config.hpp>
#include <elfin/duration.hpp>
#include <elfin/message.hpp>

namespace elfin::dumper {

struct Config {
  std::string path;
  std::chrono::milliseconds write_interval{500};
  ByteSize max_body_size{std::uint64_t{64} * 1024};
  ELFIN_CONFIG(path, write_interval, max_body_size);
};

/// Reopens the dump file (after it was moved away by rotation).
struct ReopenDumpFile {
  ELFIN_MESSAGE(dumper, ReopenDumpFile);
};

/// Writes everything recorded so far and answers once it is in the file (tests, orderly handovers).
struct FlushDumps {
  ELFIN_REQUEST(dumper, FlushDumps, std::uint64_t);  // answers the number of dumps written so far
};

[[nodiscard]] Blueprint blueprint();

}  // namespace elfin::dumper

// Compiled once, in src/dumper.cpp.
ELFIN_EXTERN_MESSAGE(elfin::dumper::ReopenDumpFile);
ELFIN_EXTERN_MESSAGE(elfin::dumper::FlushDumps);
