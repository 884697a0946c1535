// bench_network: the network's throughput, next to a raw TCP loopback pump that does the same
// framing work with nothing else (the peer figure the network battery is judged against).
//
//   raw_tcp_small   32-byte frames over one loopback TCP connection; ops = frames (msgs/s)
//   raw_tcp_64k     64 KiB frames, the same; ops = frames, and MB/s of payload
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
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench_common.hpp"

namespace {

using elfin_bench::Figure;
using elfin_bench::Options;
using elfin_bench::Stats;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kBench = "network";
constexpr std::size_t kBatchBytes = 64 * 1024;  // the sender's write buffer
constexpr std::size_t kReadBytes = 256 * 1024;  // the receiver's read buffer (holds a 64 KiB frame and more)
constexpr std::size_t kHeaderBytes = 4;
constexpr std::size_t kSmallFrame = 32;
constexpr std::size_t kLargeFrame = 64 * 1024;

struct Sizes {
  std::uint64_t small_frames;
  std::uint64_t large_frames;
};
Sizes sizes(const Options& o) { return o.quick ? Sizes{1'000'000, 2'000} : Sizes{10'000'000, 20'000}; }

// --- the raw pump -------------------------------------------------------------------------------

std::runtime_error socket_error(std::string_view what) {
  return std::runtime_error(fmt::format("{}: {}", what, std::strerror(errno)));
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
    std::vector<Figure> ours;
    std::vector<Figure> theirs;
    for (unsigned i = 0; i < o.reps; ++i) {
      if (elfin) ours.push_back(elfin());
      theirs.push_back(raw());
    }
    std::optional<Stats> elfin_stats;
    if (elfin) elfin_stats = elfin_bench::summarize(std::move(ours));
    print_network_line(name, frame_bytes, elfin_stats, elfin_bench::summarize(std::move(theirs)), o);
    return true;
  } catch (const std::exception& e) {
    std::printf("bench=%.*s case=%.*s error=\"%s\"\n", static_cast<int>(kBench.size()), kBench.data(),
                static_cast<int>(name.size()), name.data(), e.what());
    std::fflush(stdout);
    return false;
  }
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
  return out;
}

}  // namespace

int main(int argc, char** argv) { return elfin_bench::run_main(kBench, cases(), argc, argv); }
