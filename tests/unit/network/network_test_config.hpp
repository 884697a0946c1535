// The `[system.network]` section the in-process multi-node tests give each node: quick redials and
// pings, so that a test's nodes find each other (and notice a loss) well within its deadlines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace elfin::network::test {

inline std::string network_config(std::string_view listen, const std::vector<std::string>& peers,
                                  std::string_view secret = "s3cret") {
  std::string list;
  for (const auto& p : peers) list += fmt::format("{}\"tcp://{}\"", list.empty() ? "" : ", ", p);
  return fmt::format(R"([system.network]
listen = ["tcp://{}"]
discovery.predefined = [{}]
discovery.attempt_interval = "200ms"
ping_interval = "1s"
idle_timeout = "10s"
secret = "{}"
)",
                     listen, list, secret);
}

}  // namespace elfin::network::test
