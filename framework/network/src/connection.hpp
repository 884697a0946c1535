// Connection: one TCP connection to a peer node — handshake, Welcome, then frames both ways.
//
// Reading, handshake, timers and frame dispatch run on the network's I/O thread. Writing is open
// to every thread: a frame is appended to the outgoing buffer under a mutex. Someone waits for a
// request and for a response, so when no write is under way (and the buffer is small, up to
// 16 KiB) the thread appending one writes the buffer itself, at once, with a non-blocking send:
// no wake-up of the I/O thread on the way out. Control frames (credit, pong) go the same way.
// Frames queued by others meanwhile go with its next send. Plain messages (a stream nobody waits
// for frame by frame) go to the I/O thread, which writes whatever has accumulated in one call
// while the forwarder encodes the next batch: fewer, larger writes. While a write is under
// way, frames only queue and leave with it, so many small frames leave in one write. When the socket takes no more (its
// buffer is full) the I/O thread takes over and writes asynchronously until the buffer is empty.
// One writer at a time keeps frames in the order they were queued.
//
// Requests sent over the connection wait in `pending_` for their Response; when the connection
// closes, every one of them fails (Failed), so no requester waits forever.
//
// Traffic is counted into the peer's PeerTraffic (see peer_traffic.hpp) once the handshake admitted
// the peer; bytes before that are kept here and handed over then. A Ping leaves when the
// connection opens and then every `ping_interval`; its Pong gives `rtt_ns()`.
//
// "The I/O thread" here is whichever thread runs the network's event loop at the moment: an idle
// worker or the network's own I/O thread, one at a time (see reactor.hpp), so what belongs to it
// is never touched by two threads at once.
//
// Thread safety: as said per member; `close` from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <asio/buffer.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <elfin/detail/request_ops.hpp>
#include <elfin/envelope.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/network/frame.hpp>
#include <elfin/network/handshake.hpp>
#include <elfin/result.hpp>

#include "flows.hpp"
#include "out_queue.hpp"
#include "peer_traffic.hpp"

namespace elfin::network::detail {

class NetworkState;

class Connection : public std::enable_shared_from_this<Connection>, public elfin::detail::RunEndFlush {
 public:
  Connection(NetworkState& net, asio::ip::tcp::socket socket, bool outgoing);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() override;

  /// I/O thread: sends Hello and starts reading.
  void start();
  /// Any thread: closes the connection (once); `bye` sends a Bye frame with the reason first.
  void close(std::string reason, bool bye = false);
  [[nodiscard]] bool closed() const { return closed_.load(std::memory_order_acquire); }
  /// Handshake and Welcome done: frames may flow.
  [[nodiscard]] bool open() const { return open_.load(std::memory_order_acquire); }

  // Known once the handshake is done (written by the I/O thread before `open()` turns true).
  [[nodiscard]] std::uint16_t node_no() const { return peer_.node_no; }
  [[nodiscard]] std::uint64_t launch_id() const { return peer_.launch_id; }
  [[nodiscard]] const std::string& node_name() const { return peer_.node_name; }
  [[nodiscard]] const std::string& address() const { return address_; }
  [[nodiscard]] bool outgoing() const { return outgoing_; }
  /// The peer's group number for `name` (0: the peer has no such group). Valid once open.
  [[nodiscard]] std::uint8_t peer_group(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> peer_group_names() const;

  /// Any thread: a new sender-side flow on this connection.
  [[nodiscard]] std::shared_ptr<TxFlow> open_flow();
  /// Any thread: the flow of what Callers' threads write themselves (the direct sink), made on
  /// first use and shared by every Caller from then on, as a forwarder's flow is by its senders.
  [[nodiscard]] std::shared_ptr<TxFlow> callers_flow();
  /// Any thread: appends `envelope` to `out` as a Message frame on `flow` (the caller holds one
  /// credit), for `send_encoded`. `group_no` routes it through that group of the peer; 0 sends it to
  /// `block()->recipient`. A request the envelope obliges to answer is tracked from here until its
  /// Response arrives (or the connection closes).
  [[nodiscard]] Result<void, std::string> encode_envelope(Envelope& envelope, const TxFlow& flow, std::uint8_t group_no,
                                                          std::string& out);
  /// Any thread: queues frames made by `encode_envelope`, `messages` of them (taking the buffer's
  /// contents; `frames` is left empty, its capacity perhaps swapped for another's). `awaited`: a
  /// request among them, which someone waits for: written at once by the calling thread if the
  /// connection is idle; otherwise the I/O thread writes them, coalescing a stream's batches.
  void send_encoded(std::string& frames, std::uint64_t messages, bool awaited);
  /// Any thread: appends one frame to the outgoing buffer.
  void send_frame(const Frame& frame);
  /// Any thread: a Credit frame for an inbound flow.
  void send_credit(std::uint32_t flow_id, std::uint32_t delta) { send_frame(Credit{flow_id, delta}); }
  /// Any thread: the last Ping's round trip in nanoseconds, or nullopt before the first Pong.
  [[nodiscard]] std::optional<std::int64_t> rtt_ns() const {
    const std::int64_t ns = rtt_ns_.load(std::memory_order_relaxed);
    return ns < 0 ? std::nullopt : std::optional{ns};
  }

 private:
  enum class Phase : std::uint8_t { Handshake, AwaitWelcome, Open };
  struct Pending {
    std::shared_ptr<elfin::detail::RequestStateBase> state;
    const elfin::detail::RequestOps* ops = nullptr;
  };

  // I/O thread only.
  void read_some();
  void on_read(std::size_t n);
  /// False once the connection should stop reading (closed).
  bool dispatch(const Frame& frame);
  void on_bad_frame(const FrameError& error);
  void on_message(const MessageFrame& frame);
  void on_response(const ResponseFrame& frame);
  void on_credit(const Credit& credit);
  void on_handshake_step(Handshake::Step step);
  void start_timer();
  void on_timer();
  void write_now(std::string bytes);
  /// Any thread, `lock` holding out_mu_: writes what is queued unless a writer is at work; by the
  /// calling thread if `direct` (and the bytes are few), else by the I/O thread.
  void start_writing(std::unique_lock<std::mutex>& lock, bool direct = true);
  /// The Direct writer's loop (`lock` held on entry and on return; released around each send).
  void write_directly(std::unique_lock<std::mutex>& lock);
  /// out_mu_ held: the I/O thread becomes the writer (asynchronous writes until out_ is empty).
  void hand_to_io_thread();
  /// I/O thread, the Io writer: writes out_ until it is empty.
  void do_write();
  void finish_close(const std::string& reason);
  /// An inbound flow's state (created on its first message).
  RxFlow& rx_flow(std::uint32_t id);
  void answer_failed(std::uint64_t request_id, std::uint64_t trace_id, std::string_view reason);
  /// Any thread (once open): a Response frame, counted as a sent message. From an actor's run it
  /// is written when the run ends, with the run's other answers on this connection.
  void send_response(const ResponseFrame& response);
  /// The worker, after the run that queued answers: writes them (RunEndFlush).
  void flush_after_run() override;
  void send_ping();
  void on_pong(const Pong& pong);
  /// Bytes moved on the socket: to the peer's counters once it is known, kept here until then.
  void count_written(std::size_t bytes);
  void count_read(std::size_t bytes, std::uint64_t messages);
  /// Fails a request registered in `pending_` whose frame never left.
  void fail_pending(std::uint64_t request_id);
  /// flows_mu_ held: a new sender-side flow.
  std::shared_ptr<TxFlow> open_flow_locked();
  /// Counts a message of flow `id` as handled; sends credit when due.
  void acknowledge(std::uint32_t flow_id);

  NetworkState& net_;
  asio::ip::tcp::socket socket_;
  asio::steady_timer timer_;
  const bool outgoing_;
  std::string address_;
  Handshake handshake_;
  FrameReader reader_;
  Phase phase_ = Phase::Handshake;
  Hello peer_;
  std::map<std::string, std::uint8_t, std::less<>> peer_groups_;  // written before open_
  std::chrono::steady_clock::time_point last_received_;
  std::chrono::steady_clock::time_point opened_at_;
  std::unordered_map<std::uint32_t, std::shared_ptr<RxFlow>> rx_flows_;  // never erased while open
  RxFlow* last_rx_flow_ = nullptr;                                       // the last one rx_flow returned
  OutQueue write_buf_;                                                   // being written
  std::vector<asio::const_buffer> write_iov_;                            // write_buf_'s buffers
  // Set on admission, before the connection is published as open (so threads that find it open
  // see it); null for a connection never admitted.
  std::shared_ptr<PeerTraffic> traffic_;
  std::uint64_t unattributed_written_ = 0;  // bytes before traffic_ was set
  std::uint64_t unattributed_read_ = 0;     // likewise
  std::uint64_t unattributed_writes_ = 0;   // likewise
  std::uint64_t received_in_read_ = 0;      // messages of the read being dispatched
  std::uint64_t first_ping_ = 0;            // tokens (send times, ns) of the first and last Ping
  std::uint64_t last_ping_ = 0;

  std::atomic<bool> open_{false};
  std::atomic<bool> closed_{false};
  std::atomic<std::int64_t> rtt_ns_{-1};  // written by the I/O thread, read by scrapes (relaxed: a lone value)

  // Who writes to the socket: nobody, a thread writing directly (write_directly), or the I/O
  // thread (do_write). One at a time, so frames leave in the order they were queued in out_.
  enum class Writer : std::uint8_t { None, Direct, Io };
  std::mutex out_mu_;
  OutQueue out_;                  // guarded by out_mu_
  Writer writer_ = Writer::None;  // guarded by out_mu_
  bool out_closed_ = false;       // guarded by out_mu_
  bool flush_pending_ = false;    // guarded by out_mu_: a worker writes out_ when its actor's run ends
  OutQueue direct_buf_;           // the Direct writer's (taken from out_)
  // Held by a direct writer around its send and by finish_close around marking the descriptor
  // closed, so a direct write never meets a closed (or reused) descriptor.
  std::mutex fd_mu_;
  bool fd_closed_ = false;  // guarded by fd_mu_
  int fd_ = -1;             // the socket's descriptor, set at construction

  std::mutex flows_mu_;
  std::unordered_map<std::uint32_t, std::shared_ptr<TxFlow>> tx_flows_;  // guarded by flows_mu_
  std::shared_ptr<TxFlow> callers_flow_;                                 // guarded by flows_mu_
  std::uint32_t next_flow_ = 1;                                          // guarded by flows_mu_

  std::mutex pending_mu_;
  std::unordered_map<std::uint64_t, Pending> pending_;  // guarded by pending_mu_
  std::uint64_t next_request_ = 1;                      // guarded by pending_mu_
  bool pending_closed_ = false;                         // guarded by pending_mu_
};

}  // namespace elfin::network::detail
