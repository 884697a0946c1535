// `elfin wal inspect DIR` and `elfin wal verify DIR`: read a WAL directory without changing it.
//
//   inspect  lists each WAL's segments (number, first sequence, records, bytes, state), the index
//            range of every partition in each segment and after replay, and any damage with its
//            file, byte offset, partition and the check that failed.
//   verify   the same checks, one line per WAL; exit code 1 if anything is damaged or unreadable.
//
// Thread safety: called once, from the main thread.
#pragma once

#include <cstdio>
#include <string_view>
#include <vector>

namespace elfin::cli {

/// Runs `elfin wal <args...>`; returns the exit code (0 clean, 1 damaged or unreadable, 2 usage).
[[nodiscard]] int run_wal_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err);

}  // namespace elfin::cli
