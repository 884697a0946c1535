// What the in-process multi-node tests ask a node's network battery: its listening addresses and
// peers (GetNetworkInfo), and a poll with a deadline until they show what a test waits for.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>

#include <elfin/network/network.hpp>
#include <elfin/testing/proxy.hpp>

#include "../eventually.hpp"

namespace elfin::network::test {

inline NetworkInfo info(elfin::testing::Proxy& proxy) {
  auto answer = proxy.request_fallible(GetNetworkInfo{}, proxy.system().group_addr("system.network"));
  if (!answer) throw std::runtime_error("GetNetworkInfo failed");
  return *answer;
}

inline bool has_peer(const NetworkInfo& i, std::uint16_t node) {
  for (const auto& p : i.peers) {
    if (p.node_no == node) return true;
  }
  return false;
}

/// Polls until `pred(info)` holds or 10 s pass.
template <class Pred>
bool wait_info(elfin::testing::Proxy& proxy, Pred pred) {
  return elfin::test::eventually([&] { return pred(info(proxy)); }, std::chrono::seconds(10),
                                 std::chrono::milliseconds(5));
}

}  // namespace elfin::network::test
