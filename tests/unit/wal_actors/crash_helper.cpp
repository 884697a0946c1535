// The process the kill -9 test kills: a WAL group (real files) and one client per partition
// appending as fast as the WAL acknowledges, each acknowledgement printed as "partition index"
// on stdout and flushed before the next can be.
//
//   wal_actors_crash_helper DIR PARTITIONS WAL_COUNT PAYLOAD_BYTES
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "wal_actors_test_support.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s DIR PARTITIONS WAL_COUNT PAYLOAD_BYTES\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const std::uint64_t partitions = std::strtoull(argv[2], nullptr, 10);
  const auto wal_count = static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10));
  const std::uint64_t payload = std::strtoull(argv[4], nullptr, 10);
  wal_test::sink().set_on_ack([](std::uint64_t p, std::uint64_t i) {
    std::printf("%llu %llu\n", static_cast<unsigned long long>(p), static_cast<unsigned long long>(i));
    std::fflush(stdout);
  });
  wal_test::Running group = wal_test::start({}, wal_test::config(dir, wal_count));
  for (std::uint64_t p = 0; p < partitions; ++p) group.run(wal_test::Run{p, 1, 1u << 30, 1, payload});
  for (;;) ::pause();  // until killed
}
