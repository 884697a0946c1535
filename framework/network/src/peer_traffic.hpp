// PeerTraffic: what the network carried to and from one peer node, for the `elfin_network_*`
// metrics. NetworkState keeps one per peer for the life of the system, and each connection with
// that peer adds to it, so the totals outlive connections: a lost and redialed node's counters
// go on from where they were instead of back to zero (which a Prometheus `rate` would read as a
// counter reset at best).
//
// Counters are relaxed atomics. Their writers are the network's I/O thread (bytes, received
// messages: added once per socket read or write, not per frame) and the sending threads (sent
// messages: once per batch a forwarder hands to the connection, once per Response). The only reader is a scrape,
// which wants each counter's latest value and no order between them, so relaxed is enough; every
// value is monotonic. The tests in tests/unit/network/metrics.test.cpp read them under TSan while
// two nodes exchange messages.
//
// Thread safety: every member from any thread.
#pragma once

#include <atomic>
#include <cstdint>

namespace elfin::network::detail {

struct PeerTraffic {
  /// Message frames (sends and requests) and Response frames queued on a connection with the peer.
  std::atomic<std::uint64_t> sent_messages{0};
  /// Message and Response frames read from the peer (also those then skipped, e.g. of a message
  /// type this node does not know; not frames that fail to parse).
  std::atomic<std::uint64_t> received_messages{0};
  /// Bytes written to / read from the peer's sockets: every frame, the handshake included.
  std::atomic<std::uint64_t> sent_bytes{0};
  std::atomic<std::uint64_t> received_bytes{0};
  /// Writes of queued frames to the peer's sockets, each a batch: sent messages per write is how
  /// well the senders' frames are gathered into one system call.
  std::atomic<std::uint64_t> writes{0};

  void add(std::atomic<std::uint64_t>& counter, std::uint64_t by) {
    if (by != 0) counter.fetch_add(by, std::memory_order_relaxed);
  }
};

}  // namespace elfin::network::detail
