// bench_network: the network's throughput, next to a raw TCP loopback pump that does the same
// framing work with nothing else (the peer figure the network battery is judged against).
//
//   raw_tcp_small   32-byte frames over one loopback TCP connection; ops = frames (msgs/s)
//   raw_tcp_64k     64 KiB frames, the same; ops = frames, and MB/s of payload
//   remote_small    elfin: a driver on node 1 sends messages with a 32-byte field to a group on
//                   node 2 (another process) over the network battery, with flow control;
//                   the clock stops when node 2 answers a request sent after the last message
//                   (FIFO per sender: it has counted them all). Next to raw_tcp_small.
//   remote_64k      the same with a 64 KiB field; next to raw_tcp_64k
//   remote_rtt      request/response round trips to node 2, one at a time; next to a raw TCP
//                   ping-pong of 8 bytes on the same kind of connection. Every round trip is
//                   timed too: the line adds p50/p99 of both sides (`*_p50_us`, `*_p99_us`,
//                   over all measured runs together)
//   light_rtt_1     a light node (elfin::network::LightNode: a plain thread, no actor) requests
//                   Echo from node 2, one at a time; next to the raw ping-pong
//   light_rtt_16    the same with 16 requests in flight (a ring of futures: each answer taken
//                   sends the next request); next to a raw ping-pong keeping 16 frames in flight
//
// The thread hand-offs of one remote_rtt round trip (a wake-up of a thread that may be asleep;
// the raw ping-pong has two, one per direction, each a socket waking its reader):
//   1. requester's worker -> the remote group's forwarder actor (a mailbox push; the scheduler
//      runs it on the same worker once the requester waits)
//   2. forwarder -> socket -> node 2's idle worker waiting in the network's event loop (epoll
//      wakes it); it reads the request and runs the sink actor next, on the same thread
//   3. sink (the response) -> socket -> node 1's idle worker waiting in the event loop, which
//      reads the response and runs the requester next
// Two wake-ups, as raw TCP. The writes in 2 and 3 are made by the worker itself when nothing
// else is being written on the connection (Connection::write_directly). Were the event loop run
// by a thread of its own, 2 and 3 would each take a second wake-up (that thread, then a worker):
// five hand-offs; seven with every write posted to that thread too.
//
// Node 2 is this binary started again with `--serve PORT` (its own process, as in production);
// it lives as long as its stdin is open.
//
// The pump: a sender thread writes length-prefixed frames (u32 little-endian length, then the
// payload, whose first 8 bytes are the frame's sequence number) into a 64 KiB buffer and writes
// the buffer to the socket whenever it is full, as a real framer batches; a 64 KiB frame spans
// buffers. The receiver (the calling thread) reads into a buffer of its own, parses every frame,
// checks its length and sequence number, and stops the clock at the last one. Both sockets have
// TCP_NODELAY, as a framer that cares about latency sets it. Connection set-up is not timed.
//
// The elfin cases (remote_small, remote_64k, remote_rtt: a node pair over the network battery)
// join `cases()` with `network_case(..., elfin, raw)`: the line then carries elfin's figure and
// the raw pump's of the same frame size from the same run, runs alternating, and
// `ratio = elfin / raw`. Lines follow bench_common's shape with the peer named `raw`:
//
//   bench=network case=raw_tcp_64k elfin_ops_per_s=n/a ... raw_ops_per_s=... raw_mb_per_s=... ratio=n/a ...
//
// MB are 10^6 bytes of payload (the 4-byte length prefixes are not counted).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/elfin.hpp>
#include <elfin/network/light_node.hpp>
#include <elfin/network/network.hpp>

#include "bench_common.hpp"

namespace {

using elfin_bench::Figure;
using elfin_bench::Options;
using elfin_bench::Stats;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kBench = "network";

/// Per-round-trip times (ns) of the runs being measured: remote_rtt's on the driver's worker,
/// raw_ping_pong's on the calling thread; read between runs only.
struct RoundTrips {
  std::vector<std::uint64_t> elfin_ns;
  std::vector<std::uint64_t> raw_ns;
};
RoundTrips& round_trips() {
  static RoundTrips trips;
  return trips;
}
std::uint64_t ns_between(Clock::time_point from, Clock::time_point to) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count());
}
/// The `q` quantile (0..1) in microseconds, nearest rank.
double quantile_us(std::vector<std::uint64_t> ns, double q) {
  if (ns.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::lround(q * static_cast<double>(ns.size() - 1)));
  std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(rank), ns.end());
  return static_cast<double>(ns[rank]) / 1e3;
}
constexpr std::size_t kBatchBytes = std::size_t{64} * 1024;  // the sender's write buffer
constexpr std::size_t kReadBytes = std::size_t{256} * 1024;  // the receiver's read buffer (a 64 KiB frame and more)
constexpr std::size_t kHeaderBytes = 4;
constexpr std::size_t kSmallFrame = 32;
constexpr std::size_t kLargeFrame = std::size_t{64} * 1024;

struct Sizes {
  std::uint64_t small_frames;
  std::uint64_t large_frames;
};
Sizes sizes(const Options& o) { return o.quick ? Sizes{1'000'000, 2'000} : Sizes{10'000'000, 20'000}; }

// --- the raw pump -------------------------------------------------------------------------------

std::runtime_error socket_error(std::string_view what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::system_category().message(errno)));
}

/// A socket descriptor, closed with its owner.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&&) = delete;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

sockaddr* as_sockaddr(sockaddr_in& address) { return reinterpret_cast<sockaddr*>(&address); }  // the BSD API's types

void no_delay(const Fd& fd) {
  const int one = 1;
  if (::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) throw socket_error("TCP_NODELAY");
}

/// A connected pair of loopback TCP sockets: {sender's end, receiver's end}.
std::pair<Fd, Fd> loopback_connection() {
  Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) throw socket_error("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (::bind(listener.get(), as_sockaddr(address), sizeof(address)) != 0) throw socket_error("bind");
  if (::listen(listener.get(), 1) != 0) throw socket_error("listen");
  if (::getsockname(listener.get(), as_sockaddr(address), &length) != 0) throw socket_error("getsockname");
  Fd sender(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (sender.get() < 0) throw socket_error("socket");
  if (::connect(sender.get(), as_sockaddr(address), sizeof(address)) != 0) throw socket_error("connect");
  Fd receiver(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (receiver.get() < 0) throw socket_error("accept");
  no_delay(sender);
  no_delay(receiver);
  return {std::move(sender), std::move(receiver)};
}

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw socket_error("send");
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void put_u32(char* at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
std::uint32_t get_u32(const char* at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= std::uint32_t{static_cast<unsigned char>(at[i])} << (8 * i);
  return value;
}

/// The framer's side: `frames` frames of `frame_bytes` into 64 KiB batches. Returns an error
/// text, or empty (it runs on its own thread; the receiver reports).
std::string send_frames(int fd, std::size_t frame_bytes, std::uint64_t frames) {
  try {
    std::vector<char> payload(frame_bytes, 'x');
    std::vector<char> batch(kBatchBytes);
    std::size_t used = 0;
    auto append = [&](const char* data, std::size_t size) {
      while (size > 0) {
        const std::size_t n = std::min(size, kBatchBytes - used);
        std::memcpy(batch.data() + used, data, n);
        used += n;
        data += n;
        size -= n;
        if (used == kBatchBytes) {
          write_all(fd, batch.data(), used);
          used = 0;
        }
      }
    };
    char header[kHeaderBytes];
    put_u32(header, static_cast<std::uint32_t>(frame_bytes));
    for (std::uint64_t seq = 0; seq < frames; ++seq) {
      std::memcpy(payload.data(), &seq, sizeof(seq));  // what the receiver checks
      append(header, kHeaderBytes);
      append(payload.data(), frame_bytes);
    }
    if (used > 0) write_all(fd, batch.data(), used);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

/// One run of the pump: the time from the first byte sent to the last frame parsed.
Figure raw_pump(std::size_t frame_bytes, std::uint64_t frames) {
  auto [sender_fd, receiver_fd] = loopback_connection();
  std::vector<char> buffer(kReadBytes);
  std::string send_error;

  const auto start = Clock::now();
  std::thread sender([&, fd = sender_fd.get()] { send_error = send_frames(fd, frame_bytes, frames); });
  std::uint64_t next = 0;  // the sequence number the next frame must carry
  std::size_t filled = 0;  // bytes in `buffer`, the first of which starts a frame
  std::string error;
  while (next < frames && error.empty()) {
    const ssize_t n = ::recv(receiver_fd.get(), buffer.data() + filled, buffer.size() - filled, 0);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      error = n == 0 ? "the sender closed the connection early" : socket_error("recv").what();
      break;
    }
    filled += static_cast<std::size_t>(n);
    std::size_t at = 0;
    while (filled - at >= kHeaderBytes) {
      const std::size_t length = get_u32(buffer.data() + at);
      if (length != frame_bytes) {
        error = fmt::format("frame {}: length {} (expected {})", next, length, frame_bytes);
        break;
      }
      if (filled - at < kHeaderBytes + length) break;  // the rest of it is still on its way
      std::uint64_t seq = 0;
      std::memcpy(&seq, buffer.data() + at + kHeaderBytes, sizeof(seq));
      if (seq != next) {
        error = fmt::format("frame {} carries sequence number {}", next, seq);
        break;
      }
      ++next;
      at += kHeaderBytes + length;
    }
    // Keep the partial frame at the front (at most one frame's worth: a cheap move).
    std::memmove(buffer.data(), buffer.data() + at, filled - at);
    filled -= at;
  }
  const auto stop = Clock::now();
  if (!error.empty()) ::shutdown(sender_fd.get(), SHUT_RDWR);  // wakes a sender blocked in send (EPIPE)
  sender.join();
  if (!send_error.empty()) throw std::runtime_error("sender: " + send_error);
  if (!error.empty()) throw std::runtime_error("receiver: " + error);
  return Figure{elfin_bench::seconds_between(start, stop), frames};
}

// --- lines --------------------------------------------------------------------------------------

std::string range_of(const Stats& s) { return fmt::format("{:.0f}..{:.0f}", s.min_ops_per_s, s.max_ops_per_s); }
double mb_per_s(const Stats& s, std::size_t frame_bytes) {
  return s.ops_per_s * static_cast<double>(frame_bytes) / 1e6;
}

void print_network_line(std::string_view name, std::size_t frame_bytes, const std::optional<Stats>& elfin,
                        const Stats& raw, const Options& o) {
  std::string line = fmt::format("bench={} case={}", kBench, name);
  if (elfin) {
    line += fmt::format(" elfin_ops_per_s={:.0f} elfin_ns_per_op={:.1f}", elfin->ops_per_s, elfin->ns_per_op);
  } else {
    line += " elfin_ops_per_s=n/a elfin_ns_per_op=n/a";
  }
  line += fmt::format(" raw_ops_per_s={:.0f} raw_ns_per_op={:.1f}", raw.ops_per_s, raw.ns_per_op);
  line += elfin && raw.ops_per_s > 0 ? fmt::format(" ratio={:.2f}", elfin->ops_per_s / raw.ops_per_s) : " ratio=n/a";
  line += fmt::format(" ops={}", raw.ops);
  if (elfin) line += fmt::format(" elfin_mb_per_s={:.1f}", mb_per_s(*elfin, frame_bytes));
  line += fmt::format(" raw_mb_per_s={:.1f}", mb_per_s(raw, frame_bytes));
  if (elfin) line += " elfin_range=" + range_of(*elfin);
  line += " raw_range=" + range_of(raw);
  const RoundTrips& trips = round_trips();
  if (!trips.elfin_ns.empty()) {
    line += fmt::format(" elfin_p50_us={:.1f} elfin_p99_us={:.1f}", quantile_us(trips.elfin_ns, 0.5),
                        quantile_us(trips.elfin_ns, 0.99));
  }
  if (!trips.raw_ns.empty()) {
    line += fmt::format(" raw_p50_us={:.1f} raw_p99_us={:.1f}", quantile_us(trips.raw_ns, 0.5),
                        quantile_us(trips.raw_ns, 0.99));
  }
  line += fmt::format(" frame_bytes={} batch_bytes={} reps={}", frame_bytes, kBatchBytes, o.reps);
  std::puts(line.c_str());
  std::fflush(stdout);
}

/// A case: one warm-up of each side (unless --no-warmup), then --reps runs alternating elfin and
/// raw (so load from elsewhere hits both alike), one line of medians. Without `elfin`, the raw
/// figure alone. An exception (a wrong frame, a socket error) becomes an `error=` line.
bool network_case(const Options& o, std::string_view name, std::size_t frame_bytes,
                  const std::function<Figure()>& elfin, const std::function<Figure()>& raw) {
  try {
    if (o.warmup) {
      if (elfin) std::ignore = elfin();
      std::ignore = raw();
    }
    round_trips() = {};  // the warm-up's are not measured
    std::vector<Figure> ours;
    std::vector<Figure> theirs;
    for (unsigned i = 0; i < o.reps; ++i) {
      if (elfin) ours.push_back(elfin());
      theirs.push_back(raw());
    }
    std::optional<Stats> elfin_stats;
    if (elfin) elfin_stats = elfin_bench::summarize(std::move(ours));
    print_network_line(name, frame_bytes, elfin_stats, elfin_bench::summarize(std::move(theirs)), o);
    round_trips() = {};
    return true;
  } catch (const std::exception& e) {
    std::printf("bench=%.*s case=%.*s error=\"%s\"\n", static_cast<int>(kBench.size()), kBench.data(),
                static_cast<int>(name.size()), name.data(), e.what());
    std::fflush(stdout);
    return false;
  }
}

// --- elfin: node 2 in another process ------------------------------------------------------------

struct Payload {
  std::string data;
  ELFIN_MESSAGE(bench_net, Payload, data);
  ELFIN_NO_DUMPING;
};
/// How many Payloads arrived since the last Drain (FIFO per sender: all that were sent before).
struct Drain {
  ELFIN_REQUEST(bench_net, Drain, std::uint64_t);
};
struct Echo {
  std::uint64_t n = 0;
  ELFIN_REQUEST(bench_net, Echo, std::uint64_t, n);
};

elfin::Task<> sink(elfin::Context<> ctx) {
  std::uint64_t count = 0;
  while (auto envelope = co_await ctx.recv()) {
    if (envelope->is<Payload>()) {
      ++count;
    } else if (envelope->is<Drain>()) {
      auto token = envelope->take_token<Drain>();
      ctx.respond(std::move(token), std::exchange(count, 0));
    } else if (const auto* echo = envelope->get<Echo>()) {
      const std::uint64_t n = echo->n;
      auto token = envelope->take_token<Echo>();
      ctx.respond(std::move(token), n);
    }
  }
}

std::string network_config(std::string_view listen, std::string_view dial) {
  return fmt::format(R"([system.network]
listen = [{}]
discovery.predefined = [{}]
discovery.attempt_interval = "100ms"
secret = "bench"
)",
                     listen.empty() ? "" : fmt::format("\"tcp://{}\"", listen),
                     dial.empty() ? "" : fmt::format("\"tcp://{}\"", dial));
}

/// `--serve PORT`: node 2 until stdin closes.
int serve(std::uint16_t port) {
  elfin::Topology topology;
  topology.local("system.network").mount(elfin::network::blueprint());
  topology.local("sink").mount(elfin::ActorGroup().exec(sink));
  elfin::StartOptions options;
  options.node_no = 2;
  options.workers = 2;
  options.config_toml = network_config(fmt::format("127.0.0.1:{}", port), "");
  return elfin_bench::serve_until_stdin_closes(std::move(topology), std::move(options), "bench_network");
}

/// Node 2, started once for all elfin cases and stopped with the benchmark.
class ServerProcess {
 public:
  ServerProcess() {
    port_ = free_port();
    int in[2];
    if (::pipe(in) != 0) throw socket_error("pipe");
    pid_ = ::fork();
    if (pid_ < 0) throw socket_error("fork");
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::close(in[0]);
      ::close(in[1]);
      const std::string port = std::to_string(port_);
      ::execl(self_path().c_str(), self_path().c_str(), "--serve", port.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(in[0]);
    stdin_.emplace(in[1]);
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  ~ServerProcess() {
    stdin_.reset();  // EOF: the server terminates its system and exits
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  [[nodiscard]] std::string address() const { return fmt::format("127.0.0.1:{}", port_); }

 private:
  static std::uint16_t free_port() {
    Fd fd{::socket(AF_INET, SOCK_STREAM, 0)};
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd.get(), as_sockaddr(address), sizeof address) != 0) throw socket_error("bind");
    socklen_t length = sizeof address;
    if (::getsockname(fd.get(), as_sockaddr(address), &length) != 0) throw socket_error("getsockname");
    return ntohs(address.sin_port);  // a small race until node 2 binds it; the bench then fails loudly
  }
  static std::string self_path() {
    std::array<char, 4096> path{};
    const auto n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
    if (n <= 0) throw socket_error("readlink /proc/self/exe");
    return std::string(path.data(), static_cast<std::size_t>(n));
  }
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
  std::optional<Fd> stdin_;
};

ServerProcess& server() {
  static ServerProcess process;  // the benchmark's lifetime; started by the first elfin case
  return process;
}

/// Waits until node 2 answers (the connection is up): a request to a remote group that is not
/// connected yet fails at once.
elfin::Task<bool> await_peer(elfin::Context<>& ctx) {
  const auto deadline = Clock::now() + std::chrono::seconds{30};
  while (Clock::now() < deadline) {
    auto answer = co_await ctx.request(Drain{});
    if (answer) co_return true;
    co_await ctx.yield_now();
  }
  co_return false;
}

Figure remote_run(std::string_view what, std::function<elfin::Task<>(elfin::Context<>)> driver) {
  elfin::Topology topology;
  topology.local("system.network").mount(elfin::network::blueprint());
  auto sink_group = topology.local("sink");
  sink_group.mount(elfin::network::remote_group({.nodes = {2}}));
  auto drivers = topology.local("driver");
  drivers.route_to(sink_group, elfin::filters::protocol("bench_net"));
  drivers.mount(elfin::ActorGroup().exec(std::move(driver))).entrypoint();
  return elfin_bench::run_elfin(what, std::move(topology), network_config("", server().address()), 2);
}

Figure remote_throughput(std::size_t field_bytes, std::uint64_t n) {
  return remote_run("remote throughput", [field_bytes, n](elfin::Context<> ctx) -> elfin::Task<> {
    const bool up = co_await await_peer(ctx);
    if (!up) {
      elfin_bench::report_error("node 2 did not answer within 30 s");
      co_return;
    }
    const std::string data(field_bytes, 'x');
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < n; ++i) {
      Payload payload{data};
      auto sent = co_await ctx.send(std::move(payload));
      if (!sent) {
        elfin_bench::report_error(elfin_bench::error_text("send Payload", sent.error()));
        co_return;
      }
    }
    auto counted = co_await ctx.request(Drain{});
    const auto stop = Clock::now();
    if (!counted || *counted != n) {
      elfin_bench::report_error(fmt::format("node 2 counted {} of {} messages", counted ? *counted : 0, n));
      co_return;
    }
    elfin_bench::report(Figure{elfin_bench::seconds_between(start, stop), n});
  });
}

Figure remote_rtt(std::uint64_t n) {
  return remote_run("remote rtt", [n](elfin::Context<> ctx) -> elfin::Task<> {
    const bool up = co_await await_peer(ctx);
    if (!up) {
      elfin_bench::report_error("node 2 did not answer within 30 s");
      co_return;
    }
    auto& times = round_trips().elfin_ns;
    times.reserve(times.size() + n);
    const auto start = Clock::now();
    auto sent_at = start;
    for (std::uint64_t i = 0; i < n; ++i) {
      Echo echo{i};
      auto answer = co_await ctx.request(echo);
      const auto now = Clock::now();
      times.push_back(ns_between(sent_at, now));
      sent_at = now;
      if (!answer || *answer != i) {
        elfin_bench::report_error(fmt::format("Echo {} came back wrong", i));
        co_return;
      }
    }
    elfin_bench::report(Figure{elfin_bench::seconds_between(start, Clock::now()), n});
  });
}

/// The raw peer of remote_rtt: 8 bytes there and back, one at a time, on a loopback connection.
Figure raw_ping_pong(std::uint64_t n) {
  auto [a, b] = loopback_connection();
  std::thread echo([fd = b.get(), n] {
    char buffer[8];
    for (std::uint64_t i = 0; i < n; ++i) {
      std::size_t got = 0;
      while (got < sizeof buffer) {
        const auto r = ::recv(fd, buffer + got, sizeof buffer - got, 0);
        if (r <= 0) return;
        got += static_cast<std::size_t>(r);
      }
      write_all(fd, buffer, sizeof buffer);
    }
  });
  auto& times = round_trips().raw_ns;
  times.reserve(times.size() + n);
  const auto start = Clock::now();
  auto sent_at = start;
  char buffer[8] = {};
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i > 0) {
      const auto now = Clock::now();
      times.push_back(ns_between(sent_at, now));
      sent_at = now;
    }
    std::memcpy(buffer, &i, sizeof i);
    write_all(a.get(), buffer, sizeof buffer);
    std::size_t got = 0;
    while (got < sizeof buffer) {
      const auto r = ::recv(a.get(), buffer + got, sizeof buffer - got, 0);
      if (r <= 0) throw socket_error("recv");
      got += static_cast<std::size_t>(r);
    }
  }
  const auto stop = Clock::now();
  times.push_back(ns_between(sent_at, stop));
  echo.join();
  return Figure{elfin_bench::seconds_between(start, stop), n};
}

/// A light node's Echo requests to node 2, `window` in flight (taken in the order sent).
Figure light_rtt(std::uint64_t n, std::size_t window) {
  auto node = elfin::network::LightNode::start({
      .peers = {"tcp://" + server().address()},
      .groups = {{.name = "sink", .nodes = {2}}},
      .secret = "bench",
      .workers = 2,
  });
  if (!node) throw std::runtime_error(node.error());
  if (auto up = node->wait_connected(std::chrono::seconds{30}); !up) throw std::runtime_error(up.error());
  using Future = std::future<elfin::Answer<std::uint64_t>>;
  std::deque<std::pair<std::uint64_t, Future>> in_flight;
  const auto take = [&] {
    auto [sent, future] = std::move(in_flight.front());
    in_flight.pop_front();
    auto answer = future.get();
    if (!answer || *answer != sent) {
      throw std::runtime_error(fmt::format("Echo {} came back wrong: {}", sent,
                                           answer ? std::to_string(*answer) : to_string(answer.error())));
    }
  };
  const auto start = Clock::now();
  for (std::uint64_t i = 0; i < n; ++i) {
    if (in_flight.size() == window) take();
    in_flight.emplace_back(i, node->request("sink", Echo{i}, std::chrono::seconds{30}));
  }
  while (!in_flight.empty()) take();
  const auto stop = Clock::now();
  return Figure{elfin_bench::seconds_between(start, stop), n};
}

/// The raw peer of light_rtt_16: 8-byte frames echoed on a loopback connection, `window` in flight.
Figure raw_pipelined(std::uint64_t n, std::uint64_t window) {
  auto [a, b] = loopback_connection();
  std::thread echo([fd = b.get(), n] {  // a byte stream echoed as it comes keeps the frames whole
    std::array<char, std::size_t{8} * 256> buffer{};
    for (std::uint64_t echoed = 0; echoed < n * 8;) {
      const auto r = ::recv(fd, buffer.data(), buffer.size(), 0);
      if (r <= 0) return;
      write_all(fd, buffer.data(), static_cast<std::size_t>(r));
      echoed += static_cast<std::uint64_t>(r);
    }
  });
  const auto start = Clock::now();
  char frame[8] = {};
  std::uint64_t sent = 0;
  for (; sent < std::min(window, n); ++sent) {
    std::memcpy(frame, &sent, sizeof sent);
    write_all(a.get(), frame, sizeof frame);
  }
  std::uint64_t received = 0;
  std::array<char, std::size_t{8} * 256> buffer{};
  std::size_t pending = 0;  // bytes of a frame begun in the previous read
  while (received < n) {
    const auto r = ::recv(a.get(), buffer.data() + pending, buffer.size() - pending, 0);
    if (r <= 0) throw socket_error("recv");
    const std::size_t have = pending + static_cast<std::size_t>(r);
    for (std::size_t at = 0; at + 8 <= have; at += 8) {
      std::uint64_t seq = 0;
      std::memcpy(&seq, buffer.data() + at, sizeof seq);
      if (seq != received) throw std::runtime_error("raw pipelined: frames out of order");
      ++received;
      if (sent < n) {
        std::memcpy(frame, &sent, sizeof sent);
        write_all(a.get(), frame, sizeof frame);
        ++sent;
      }
    }
    pending = have % 8;
    std::memmove(buffer.data(), buffer.data() + (have - pending), pending);
  }
  const auto stop = Clock::now();
  echo.join();
  return Figure{elfin_bench::seconds_between(start, stop), n};
}

std::vector<elfin_bench::Case> cases() {
  std::vector<elfin_bench::Case> out;
  out.push_back({"raw_tcp_small", "raw_tcp", [](const Options& o) {
                   const auto n = sizes(o).small_frames;
                   return network_case(o, "raw_tcp_small", kSmallFrame, {}, [&] { return raw_pump(kSmallFrame, n); });
                 }});
  out.push_back({"raw_tcp_64k", "raw_tcp", [](const Options& o) {
                   const auto n = sizes(o).large_frames;
                   return network_case(o, "raw_tcp_64k", kLargeFrame, {}, [&] { return raw_pump(kLargeFrame, n); });
                 }});
  // The elfin cases send fewer messages than the raw pump (each run is a fresh node); rates are
  // per second either way.
  out.push_back({"remote_small", "remote", [](const Options& o) {
                   const std::uint64_t n = o.quick ? 200'000 : 2'000'000;
                   return network_case(
                       o, "remote_small", kSmallFrame, [&] { return remote_throughput(kSmallFrame, n); },
                       [&] { return raw_pump(kSmallFrame, sizes(o).small_frames); });
                 }});
  out.push_back({"remote_64k", "remote", [](const Options& o) {
                   const std::uint64_t n = o.quick ? 2'000 : 20'000;
                   return network_case(
                       o, "remote_64k", kLargeFrame, [&] { return remote_throughput(kLargeFrame, n); },
                       [&] { return raw_pump(kLargeFrame, sizes(o).large_frames); });
                 }});
  out.push_back({"remote_rtt", "remote", [](const Options& o) {
                   const std::uint64_t n = o.quick ? 2'000 : 20'000;
                   return network_case(
                       o, "remote_rtt", 8, [&] { return remote_rtt(n); }, [&] { return raw_ping_pong(n); });
                 }});
  out.push_back({"light_rtt_1", "light", [](const Options& o) {
                   const std::uint64_t n = o.quick ? 2'000 : 20'000;
                   return network_case(
                       o, "light_rtt_1", 8, [&] { return light_rtt(n, 1); }, [&] { return raw_ping_pong(n); });
                 }});
  out.push_back({"light_rtt_16", "light", [](const Options& o) {
                   const std::uint64_t n = o.quick ? 20'000 : 200'000;
                   return network_case(
                       o, "light_rtt_16", 8, [&] { return light_rtt(n, 16); }, [&] { return raw_pipelined(n, 16); });
                 }});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--serve") {
    return serve(static_cast<std::uint16_t>(std::stoul(argv[2])));
  }
  return elfin_bench::run_main(kBench, cases(), argc, argv);
}
