// Starting the WAL group (with the test clients) for one test, and reading partitions back.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/actors/wal.hpp>
#include <elfin/system.hpp>
#include <elfin/testing/proxy.hpp>

#include "wal_clients.hpp"

namespace wal_test {

/// The config section of the group `wal`.
inline std::string config(const std::string& dir, std::uint32_t wal_count = 1, std::string extra = {}) {
  return fmt::format("[wal]\ndir = \"{}\"\nwal_count = {}\n{}\n", dir, wal_count, extra);
}

/// A running system: the WAL group `wal` (the proxy's subject) and the test clients.
struct Running {
  elfin::testing::Proxy proxy;
  elfin::Addr clients;

  void run(Run r) { proxy.send_to(clients, r); }

  elfin::Result<pw::Appended, pw::WalError> append(std::uint64_t partition, std::uint64_t index, std::uint64_t term = 1,
                                                   std::size_t bytes = 32) {
    return proxy.request(pw::Append{partition, term, index, payload_of(partition, index, bytes)});
  }
  pw::Range read(std::uint64_t partition) {
    auto range = proxy.request(pw::ReadRange{partition, 0, UINT64_MAX, 0});
    if (!range) FAIL("ReadRange: " << pw::to_string(range.error()));
    return std::move(*range);
  }
};

inline Running start(elfin::actors::wal::Options options, std::string config_toml) {
  elfin::StartOptions start;
  start.config_toml = std::move(config_toml);
  elfin::testing::ProxyOptions proxy_options;
  proxy_options.timeout = std::chrono::milliseconds(20000);
  auto proxy = elfin::testing::proxy(topology(elfin::actors::wal::blueprint(std::move(options))), "wal",
                                     std::move(start), proxy_options);
  const elfin::Addr clients = proxy.system().group_addr("clients");
  sink().reset();
  return Running{std::move(proxy), clients};
}

/// Every entry of `range` is (partition, index)'s payload of `bytes`, indexes first..last in order.
inline void check_entries(const pw::Range& range, std::uint64_t first, std::uint64_t last, std::size_t bytes = 32) {
  REQUIRE(range.entries.size() == (last >= first ? last - first + 1 : 0));
  for (std::size_t i = 0; i < range.entries.size(); ++i) {
    const auto& e = range.entries[i];
    REQUIRE(e.index == first + i);
    REQUIRE(e.payload == payload_of(range.partition, e.index, bytes));
  }
}

}  // namespace wal_test
