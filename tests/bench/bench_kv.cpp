// bench_kv: the KV service side by side with Redis and etcd, driven by one load generator
// (elfin::loadgen's runner and KV workload, the same as `elfin kv bench`): C clients, each one
// connection and one request at a time (closed loop, no pipelining), uniform keys, the same keys,
// values and seeds for every store. kv_side_by_side.sh starts the servers and runs this.
//
//   rf1_vs_redis  elfin, one pod (replication factor 1), through elfin::kv::Client, next to
//                 redis-server with appendonly yes + appendfsync always, through a plain RESP
//                 client (SET / GET, one socket per client)
//   rf3_vs_etcd   elfin, three pods (RF 3), next to a 3-member etcd cluster through its JSON
//                 gateway (POST /v3/kv/put and /v3/kv/range, HTTP/1.1 keep-alive, one socket per
//                 client); linearizable reads on both (etcd's range default, elfin's get default)
//
// Each case prints two lines, `<case>_put` and `<case>_get`: the median run of each side by
// ops/s, its ns/op (1 / aggregate throughput) and p50/p99/p99.9 of that run, and the ratio. Before
// the first run every key is written once on each side (untimed), so gets find values and every
// shard's Raft group exists; then the sides alternate: elfin put, peer put, elfin get, peer get, ...
// Client w of elfin talks to pod (w mod pods) first, as client w of etcd talks to member (w mod 3).
//
// elfin's clients share `--light-nodes` light nodes (default 1: a program's one elfin::kv::Client,
// which is thread-safe and multiplexes every request over one connection per pod, as etcd's own
// client does over one HTTP/2 connection); 0 gives each client a light node of its own (an actor
// system with its worker and network threads per client). Either way each client has one request
// in flight. The clients run in this process on the servers' cores, so each line also gives this
// process's CPU per operation (`*_client_cpu_us_per_op`): what the load generator and the store's
// client library cost.
//
// A line also names the file system of --data-dir and an fsync probe there (4 KiB pwrite +
// fdatasync, p50/p99), and the 1-minute load average before the case: on a shared machine the
// figures move with it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include <elfin/kv/client.hpp>
#include <elfin/loadgen/kv_workload.hpp>
#include <elfin/loadgen/runner.hpp>

#include "bench_disk.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace lg = elfin::loadgen;

// --- a blocking TCP connection -------------------------------------------------------------------

class Socket {
 public:
  Socket(const std::string& host, std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) throw std::runtime_error("bad host " + host);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd_);
      throw std::runtime_error(fmt::format("connect {}:{}: {}", host, port, std::system_category().message(errno)));
    }
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { ::close(fd_); }

  void write_all(std::string_view data) {
    while (!data.empty()) {
      const auto n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  /// A line ending in \r\n (without it).
  std::string read_line() {
    for (;;) {
      const auto end = buffer_.find("\r\n", start_);
      if (end != std::string::npos) {
        std::string line = buffer_.substr(start_, end - start_);
        start_ = end + 2;
        return line;
      }
      fill();
    }
  }
  std::string read_exactly(std::size_t n) {
    while (buffer_.size() - start_ < n) fill();
    std::string out = buffer_.substr(start_, n);
    start_ += n;
    return out;
  }

 private:
  void fill() {
    if (start_ > 0) {
      buffer_.erase(0, start_);
      start_ = 0;
    }
    char chunk[16384];
    const auto n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) throw std::runtime_error("connection closed");
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }

  int fd_ = -1;
  std::string buffer_;
  std::size_t start_ = 0;
};

std::pair<std::string, std::uint16_t> host_port(std::string_view address) {
  if (address.starts_with("tcp://")) address.remove_prefix(6);
  if (address.starts_with("http://")) address.remove_prefix(7);
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) throw std::runtime_error(fmt::format("`{}`: expected HOST:PORT", address));
  return {std::string(address.substr(0, colon)),
          static_cast<std::uint16_t>(std::stoi(std::string(address.substr(colon + 1))))};
}

// --- the stores ----------------------------------------------------------------------------------

/// One client of a store: put and get, an error kind or "" for success.
class Store {
 public:
  virtual ~Store() = default;
  virtual std::string put(const std::string& key, const std::string& value) = 0;
  virtual std::string get(const std::string& key) = 0;
};

/// A light node joined to the pods as `node`, asking pod (first mod pods) first.
std::shared_ptr<elfin::kv::Client> connect_elfin(const std::vector<std::string>& pods, unsigned first,
                                                 std::uint16_t node) {
  elfin::kv::ClientOptions options;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const std::size_t pod = (first + i) % pods.size();
    options.pods.push_back(pods[pod]);
    options.pod_nodes.push_back(static_cast<std::uint16_t>(pod + 1));
  }
  options.node = node;
  options.timeout = 10s;
  auto client = elfin::kv::Client::connect(options);
  if (!client) throw std::runtime_error(client.error());
  return std::make_shared<elfin::kv::Client>(std::move(*client));
}

/// Client number n's elfin client: its own light node, or one of the run's `shared` ones (the
/// clients of one run are numbers run * clients + w, w < clients). A shared light node ends with
/// the run's last store that holds it.
class ElfinClients {
 public:
  ElfinClients(std::vector<std::string> pods, unsigned clients, unsigned shared, std::uint16_t first_node)
      : pods_(std::move(pods)), clients_(clients), shared_(shared), first_node_(first_node) {}

  std::shared_ptr<elfin::kv::Client> client(unsigned n) {
    const unsigned w = n % clients_;
    if (shared_ == 0) return connect_elfin(pods_, w, static_cast<std::uint16_t>(first_node_ + n));
    const unsigned slot = w % shared_;
    const unsigned run_base = n - w;
    std::lock_guard lock(mutex_);
    std::weak_ptr<elfin::kv::Client>& entry = nodes_[run_base + slot];
    auto client = entry.lock();
    if (!client) {
      // Node numbers inside the run's range, as with a light node per client.
      client = connect_elfin(pods_, slot, static_cast<std::uint16_t>(first_node_ + run_base + slot));
      entry = client;
    }
    return client;
  }

 private:
  std::vector<std::string> pods_;
  unsigned clients_;
  unsigned shared_;
  std::uint16_t first_node_;
  std::mutex mutex_;  // make_worker runs on the runner's worker threads at once
  std::map<unsigned, std::weak_ptr<elfin::kv::Client>> nodes_;
};

class ElfinStore final : public Store {
 public:
  explicit ElfinStore(std::shared_ptr<elfin::kv::Client> client) : client_(std::move(client)) {}
  std::string put(const std::string& key, const std::string& value) override {
    auto written = client_->put(key, value);
    return written ? std::string() : std::string(elfin::protocols::kv::to_string(written.error().kind));
  }
  std::string get(const std::string& key) override {
    auto found = client_->get(key);
    if (!found) return std::string(elfin::protocols::kv::to_string(found.error().kind));
    return found->found ? std::string() : std::string("NotFound");
  }

 private:
  std::shared_ptr<elfin::kv::Client> client_;
};

/// RESP2 over one socket: SET key value / GET key, one at a time.
class RedisStore final : public Store {
 public:
  explicit RedisStore(const std::string& address) : socket_(host_port(address).first, host_port(address).second) {}
  std::string put(const std::string& key, const std::string& value) override {
    socket_.write_all(
        fmt::format("*3\r\n$3\r\nSET\r\n${}\r\n{}\r\n${}\r\n{}\r\n", key.size(), key, value.size(), value));
    const std::string line = socket_.read_line();
    return line == "+OK" ? std::string() : "RedisError";
  }
  std::string get(const std::string& key) override {
    socket_.write_all(fmt::format("*2\r\n$3\r\nGET\r\n${}\r\n{}\r\n", key.size(), key));
    const std::string line = socket_.read_line();
    if (line.empty() || line[0] != '$') return "RedisError";
    const long length = std::stol(line.substr(1));
    if (length < 0) return "NotFound";
    std::ignore = socket_.read_exactly(static_cast<std::size_t>(length) + 2);
    return {};
  }

 private:
  Socket socket_;
};

std::string base64(std::string_view in) {
  static constexpr char kTable[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const std::uint32_t v = (std::uint8_t(in[i]) << 16) | (std::uint8_t(in[i + 1]) << 8) | std::uint8_t(in[i + 2]);
    out += kTable[v >> 18];
    out += kTable[(v >> 12) & 63];
    out += kTable[(v >> 6) & 63];
    out += kTable[v & 63];
  }
  if (i < in.size()) {
    std::uint32_t v = std::uint8_t(in[i]) << 16;
    if (i + 1 < in.size()) v |= std::uint8_t(in[i + 1]) << 8;
    out += kTable[v >> 18];
    out += kTable[(v >> 12) & 63];
    out += i + 1 < in.size() ? kTable[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

/// etcd's JSON gateway (grpc-gateway in front of the KV service) over HTTP/1.1 keep-alive.
class EtcdStore final : public Store {
 public:
  explicit EtcdStore(const std::string& address)
      : host_(host_port(address).first), socket_(host_, host_port(address).second) {}
  std::string put(const std::string& key, const std::string& value) override {
    return post("/v3/kv/put", fmt::format(R"({{"key":"{}","value":"{}"}})", base64(key), base64(value)), false);
  }
  std::string get(const std::string& key) override {
    return post("/v3/kv/range", fmt::format(R"({{"key":"{}"}})", base64(key)), true);
  }

 private:
  std::string post(std::string_view path, const std::string& body, bool read) {
    socket_.write_all(
        fmt::format("POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n"
                    "Content-Length: {}\r\n\r\n{}",
                    path, host_, body.size(), body));
    const std::string status = socket_.read_line();
    std::size_t length = 0;
    bool chunked = false;
    for (std::string header = socket_.read_line(); !header.empty(); header = socket_.read_line()) {
      std::string lower = header;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      if (lower.starts_with("content-length:")) length = std::stoul(lower.substr(15));
      if (lower.starts_with("transfer-encoding:") && lower.find("chunked") != std::string::npos) chunked = true;
    }
    std::string response;
    if (chunked) {
      for (;;) {
        const std::size_t size = std::stoul(socket_.read_line(), nullptr, 16);
        response += socket_.read_exactly(size);
        std::ignore = socket_.read_line();
        if (size == 0) break;
      }
    } else {
      response = socket_.read_exactly(length);
    }
    if (status.find(" 200 ") == std::string::npos) return "HttpError";
    if (read && response.find("\"kvs\"") == std::string::npos) return "NotFound";
    return {};
  }

  std::string host_;
  Socket socket_;
};

// --- the runs ------------------------------------------------------------------------------------

struct Args {
  std::string case_name;
  std::vector<std::string> elfin_pods;
  std::string redis;
  std::vector<std::string> etcd;
  unsigned clients = 16;
  std::uint32_t value_size = 256;
  std::uint64_t keys = 10'000;
  unsigned seconds = 10;
  unsigned reps = 3;
  std::string data_dir = ".";
  std::uint16_t first_node = 2000;
  unsigned light_nodes = 1;     ///< light nodes elfin's clients share; 0: one per client
  std::vector<int> elfin_pids;  ///< the pods' processes, for their CPU time
  std::vector<int> peer_pids;
};

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t start = 0; start <= text.size();) {
    const auto comma = std::min(text.find(',', start), text.size());
    if (comma > start) out.emplace_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

/// CPU seconds (user + system) the processes `pids` used so far; 0 for those that are gone.
double cpu_seconds(const std::vector<int>& pids) {
  double total = 0;
  for (const int pid : pids) {
    std::ifstream in(fmt::format("/proc/{}/stat", pid));
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    double utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15: utime, stime (clock ticks)
      if (i == 14) utime = std::stod(field);
      if (i == 15) stime = std::stod(field);
    }
    total += (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }
  return total;
}

/// A run and the CPU time its servers used meanwhile (connects included).
struct Measured {
  lg::RunResult result;
  double server_cpu_s = 0;
  double client_cpu_s = 0;  ///< this process: the load generator and the store's client
};

/// CPU seconds (user + system) this process used so far.
double own_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

/// A store's client for client number `n` (unique over the whole program run).
using StoreFactory = std::function<std::unique_ptr<Store>(unsigned n)>;

/// One run of `op` ("put", "get" or "fill") against the store; each worker opens its own client.
/// Every run opens new clients; elfin's join as new node numbers (a node number is not reused while
/// the pods may still hold the previous connection).
Measured run(const Args& args, const StoreFactory& factory, std::string_view op, const std::vector<int>& pids) {
  static unsigned runs = 0;
  const unsigned base = runs++ * args.clients;
  lg::Workload workload;
  workload.kinds = {std::string(op)};
  workload.make_worker = [&, base](unsigned w) -> lg::Operation {
    std::shared_ptr<Store> store;
    try {
      store = factory(base + w);
    } catch (const std::exception& e) {
      fmt::print(stderr, "bench_kv: client {}: {}\n", w, e.what());
      return {};
    }
    auto picker = std::make_shared<lg::KeyPicker>(op == "fill" ? lg::KeyChoice::Sequential : lg::KeyChoice::Uniform,
                                                  args.keys, 1.0, 1 + base, w);
    const bool put = op != "get";
    const std::uint32_t size = args.value_size;
    return [store, picker, put, size](std::uint64_t n) {
      const std::string key = lg::key_name("bench:", picker->key(n));
      lg::Outcome outcome;
      try {
        outcome.error = put ? store->put(key, lg::kv_value(n, size)) : store->get(key);
      } catch (const std::exception&) {
        outcome.error = "ConnectionError";
      }
      return outcome;
    };
  };
  lg::RunOptions options;
  options.workers = args.clients;
  if (op == "fill") {
    options.ops = args.keys;
  } else {
    options.duration = std::chrono::seconds(args.seconds);
  }
  const double cpu_before = cpu_seconds(pids);
  const double own_before = own_cpu_seconds();
  Measured measured{lg::run(workload, options)};
  measured.server_cpu_s = cpu_seconds(pids) - cpu_before;
  measured.client_cpu_s = own_cpu_seconds() - own_before;
  return measured;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  in >> one;
  return one;
}

struct FsyncProbe {
  double p50_us = 0;
  double p99_us = 0;
};

/// 200 × (4 KiB pwrite + fdatasync) in a fresh file under `dir`.
FsyncProbe probe_fsync(const std::string& dir) {
  const std::string path = dir + "/bench_kv_fsync_probe";
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) return {};
  std::string block(4096, 'f');
  std::vector<double> micros;
  for (int i = 0; i < 200; ++i) {
    const auto start = Clock::now();
    if (::pwrite(fd, block.data(), block.size(), static_cast<off_t>(i) * 4096) < 0 || ::fdatasync(fd) != 0) break;
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  ::close(fd);
  ::unlink(path.c_str());
  return {elfin_bench::percentile(micros, 0.5), elfin_bench::percentile(micros, 0.99)};
}

struct Side {
  double ops_per_s = 0;
  double p50_us = 0, p99_us = 0, p999_us = 0;
  std::uint64_t errors = 0;
  double min_ops = 0, max_ops = 0;
  std::string error_kinds;
  double cpu_us_per_op = 0;         ///< the servers' CPU time per operation, in the median run
  double client_cpu_us_per_op = 0;  ///< this process's, the same run
};

Side median(std::vector<Measured> measured) {
  std::sort(measured.begin(), measured.end(), [](const Measured& a, const Measured& b) {
    return a.result.total.ops * b.result.total.elapsed.count() < b.result.total.ops * a.result.total.elapsed.count();
  });
  std::vector<lg::RunResult> runs;
  runs.reserve(measured.size());
  for (const auto& m : measured) runs.push_back(m.result);
  const auto rate = [](const lg::RunResult& r) {
    return r.total.elapsed.count() > 0
               ? static_cast<double>(r.total.ops) * 1e9 / static_cast<double>(r.total.elapsed.count())
               : 0.0;
  };
  const lg::RunResult& m = runs[(runs.size() - 1) / 2];
  Side side;
  side.ops_per_s = rate(m);
  side.p50_us = static_cast<double>(m.total.latency.percentile(0.5)) / 1e3;
  side.p99_us = static_cast<double>(m.total.latency.percentile(0.99)) / 1e3;
  side.p999_us = static_cast<double>(m.total.latency.percentile(0.999)) / 1e3;
  side.min_ops = rate(runs.front());
  side.max_ops = rate(runs.back());
  const Measured& mm = measured[(measured.size() - 1) / 2];
  const double ops = static_cast<double>(mm.result.total.ops);
  side.cpu_us_per_op = ops > 0 ? mm.server_cpu_s * 1e6 / ops : 0;
  side.client_cpu_us_per_op = ops > 0 ? mm.client_cpu_s * 1e6 / ops : 0;
  for (const auto& r : runs) {
    for (const auto& [kind, n] : r.total.errors) {
      side.errors += n;
      side.error_kinds += fmt::format("{}{}:{}", side.error_kinds.empty() ? "" : ",", kind, n);
    }
  }
  return side;
}

bool run_case(const Args& args, std::string_view peer_name, const StoreFactory& elfin, const StoreFactory& peer) {
  const double load_before = load_average();
  const FsyncProbe probe = probe_fsync(args.data_dir);
  fmt::print(stderr, "bench_kv {}: filling {} keys on each side\n", args.case_name, args.keys);
  // A pass writes every key once; a key whose put failed (a Timeout while a new shard elects its
  // leader on a loaded machine) is written by the next pass, up to three.
  for (const auto& [factory, side] : {std::pair{&elfin, std::string_view("elfin")}, std::pair{&peer, peer_name}}) {
    lg::RunResult fill;
    for (int pass = 0; pass < 3; ++pass) {
      fill = run(args, *factory, "fill", {}).result;
      if (fill.setup_error || fill.total.errors.empty()) break;
      fmt::print(stderr, "bench_kv {}: {} fill pass {}: {} of {} keys written\n", args.case_name, side, pass + 1,
                 fill.total.ops, args.keys);
    }
    if (fill.setup_error || fill.total.ops != args.keys) {
      std::string errors;
      for (const auto& [kind, n] : fill.total.errors) errors += fmt::format(" {}:{}", kind, n);
      fmt::print("bench=kv case={} error=\"{} fill: {} of {} keys written{}{}\"\n", args.case_name, side,
                 fill.total.ops, args.keys, errors, fill.setup_error ? " (" + *fill.setup_error + ")" : "");
      return false;
    }
  }
  // What the servers cost doing nothing (ticks, heartbeats) once every key exists: 5 s idle.
  const double idle_elfin_before = cpu_seconds(args.elfin_pids);
  const double idle_peer_before = cpu_seconds(args.peer_pids);
  std::this_thread::sleep_for(5s);
  const double idle_elfin = (cpu_seconds(args.elfin_pids) - idle_elfin_before) / 5.0;
  const double idle_peer = (cpu_seconds(args.peer_pids) - idle_peer_before) / 5.0;
  bool ok = true;
  for (const std::string_view op : {"put", "get"}) {
    std::vector<Measured> elfin_runs, peer_runs;
    for (unsigned rep = 0; rep < args.reps; ++rep) {
      elfin_runs.push_back(run(args, elfin, op, args.elfin_pids));
      peer_runs.push_back(run(args, peer, op, args.peer_pids));
      fmt::print(stderr, "bench_kv {}_{} rep {}: elfin {} ops, {} {} ops in {} s\n", args.case_name, op, rep,
                 elfin_runs.back().result.total.ops, peer_name, peer_runs.back().result.total.ops, args.seconds);
    }
    const Side e = median(elfin_runs);
    const Side p = median(peer_runs);
    ok = ok && e.ops_per_s > 0 && p.ops_per_s > 0;
    fmt::print(
        "bench=kv case={}_{} elfin_ops_per_s={:.0f} elfin_ns_per_op={:.0f} elfin_p50_us={:.0f} elfin_p99_us={:.0f} "
        "elfin_p999_us={:.0f} {}_ops_per_s={:.0f} {}_ns_per_op={:.0f} {}_p50_us={:.0f} {}_p99_us={:.0f} "
        "{}_p999_us={:.0f} "
        "ratio={:.2f} elfin_range={:.0f}..{:.0f} {}_range={:.0f}..{:.0f} elfin_errors={}{} {}_errors={}{} clients={} "
        "value_size={} keys={} seconds={} reps={} fs={} fsync_p50_us={:.0f} fsync_p99_us={:.0f} load1_before={:.2f} "
        "load1_after={:.2f} elfin_server_cpu_us_per_op={:.0f} {}_server_cpu_us_per_op={:.0f} "
        "elfin_client_cpu_us_per_op={:.0f} {}_client_cpu_us_per_op={:.0f} elfin_light_nodes={} "
        "elfin_idle_cpu_share={:.2f} {}_idle_cpu_share={:.2f}\n",
        args.case_name, op, e.ops_per_s, 1e9 / std::max(e.ops_per_s, 1e-9), e.p50_us, e.p99_us, e.p999_us, peer_name,
        p.ops_per_s, peer_name, 1e9 / std::max(p.ops_per_s, 1e-9), peer_name, p.p50_us, peer_name, p.p99_us, peer_name,
        p.p999_us, e.ops_per_s / std::max(p.ops_per_s, 1e-9), e.min_ops, e.max_ops, peer_name, p.min_ops, p.max_ops,
        e.errors, e.error_kinds.empty() ? "" : "(" + e.error_kinds + ")", peer_name, p.errors,
        p.error_kinds.empty() ? "" : "(" + p.error_kinds + ")", args.clients, args.value_size, args.keys, args.seconds,
        args.reps, elfin_bench::fs_name(args.data_dir), probe.p50_us, probe.p99_us, load_before, load_average(),
        e.cpu_us_per_op, peer_name, p.cpu_us_per_op, e.client_cpu_us_per_op, peer_name, p.client_cpu_us_per_op,
        args.light_nodes == 0 ? std::string("per_client") : std::to_string(args.light_nodes), idle_elfin, peer_name,
        idle_peer);
    std::fflush(stdout);
  }
  return ok;
}

// --- cost per hop --------------------------------------------------------------------------------

/// The p50 and p99 (µs) of `samples` calls of `call`, one at a time.
template <class F>
std::pair<double, double> time_calls(unsigned samples, F&& call) {
  std::vector<double> micros;
  micros.reserve(samples);
  for (unsigned i = 0; i < samples; ++i) {
    const auto start = Clock::now();
    call(i);
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return {elfin_bench::percentile(micros, 0.5), elfin_bench::percentile(micros, 0.99)};
}

/// A raw loopback TCP round trip of 8 bytes (a thread echoing), the network's floor.
std::pair<double, double> loopback_rtt(unsigned samples) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listener < 0) throw std::runtime_error("loopback socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 1) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    throw std::runtime_error("loopback listener");
  }
  std::thread echo([listener, samples] {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char buffer[8];
    for (unsigned i = 0; i < samples; ++i) {
      std::size_t got = 0;
      while (got < sizeof buffer) {
        const auto n = ::recv(fd, buffer + got, sizeof buffer - got, 0);
        if (n <= 0) break;
        got += static_cast<std::size_t>(n);
      }
      if (::send(fd, buffer, sizeof buffer, MSG_NOSIGNAL) != 8) break;
    }
    ::close(fd);
  });
  std::pair<double, double> result;
  {
    Socket socket("127.0.0.1", ntohs(address.sin_port));
    result = time_calls(samples, [&](unsigned) {
      socket.write_all("pingpong");
      std::ignore = socket.read_exactly(8);
    });
  }
  echo.join();
  ::close(listener);
  return result;
}

/// How long each step of a put costs, from requests that stop at successive hops, one client and
/// one request at a time (see README.md, "Cost per hop of a put"). Every figure is a median of
/// `samples` calls; a step's cost is the difference between consecutive medians.
bool run_hops(const Args& args, unsigned samples) {
  const double load_before = load_average();
  const std::size_t pods = args.elfin_pods.size();
  std::vector<elfin::kv::Client> clients;  // clients[p] talks to pod p first
  for (std::size_t p = 0; p < pods; ++p) {
    elfin::kv::ClientOptions options;
    for (std::size_t i = 0; i < pods; ++i) {
      options.pods.push_back(args.elfin_pods[(p + i) % pods]);
      options.pod_nodes.push_back(static_cast<std::uint16_t>((p + i) % pods + 1));
    }
    options.node = static_cast<std::uint16_t>(args.first_node + p);
    auto client = elfin::kv::Client::connect(options);
    if (!client) {
      fmt::print("bench=kv case={} error=\"{}\"\n", args.case_name, client.error());
      return false;
    }
    clients.push_back(std::move(*client));
  }
  const std::string key = "hop:key";
  const std::string value = lg::kv_value(0, args.value_size);
  std::uint64_t failures = 0;
  const auto put = [&](elfin::kv::Client& client) {
    return [&failures, &key, &value, c = &client](unsigned) { failures += c->put(key, value) ? 0 : 1; };
  };
  // Warm up: the shard's Raft group exists and has a leader; every client has talked.
  for (auto& client : clients) time_calls(50, put(client));
  // The leader's pod answers a put without forwarding it: the fastest.
  std::vector<std::pair<double, double>> put_via(pods);
  for (std::size_t p = 0; p < pods; ++p) put_via[p] = time_calls(samples, put(clients[p]));
  const std::size_t leader =
      static_cast<std::size_t>(std::min_element(put_via.begin(), put_via.end()) - put_via.begin());
  elfin::kv::Client& near = clients[leader];
  const auto front = time_calls(samples, [&](unsigned) { std::ignore = near.get(""); });  // BadRequest at the front
  const auto stale = time_calls(samples, [&](unsigned) { failures += near.get(key, true) ? 0 : 1; });
  const auto read = time_calls(samples, [&](unsigned) { failures += near.get(key) ? 0 : 1; });
  const auto put_leader = time_calls(samples, put(near));
  std::optional<std::pair<double, double>> put_forwarded;
  if (pods > 1) put_forwarded = time_calls(samples, put(clients[(leader + 1) % pods]));
  const auto rtt = loopback_rtt(samples);
  const FsyncProbe fsync = probe_fsync(args.data_dir);

  struct Row {
    std::string hop;
    std::pair<double, double> figure;
    double added;
    std::string what;
  };
  std::vector<Row> rows;
  rows.push_back({"client_front", front, front.first,
                  "client -> its pod's front -> client: the light node, TCP both ways, the front's dispatch"});
  rows.push_back({"front_partition", stale, stale.first - front.first,
                  "+ front -> the local partition actor (a stale read of its state) -> front"});
  rows.push_back({"read_index", read, read.first - stale.first,
                  pods > 1 ? "+ the leader confirms leadership with a heartbeat round (linearizable get)"
                           : "+ the leader confirms leadership (a single voter: at once)"});
  rows.push_back({"propose_wal_apply", put_leader, put_leader.first - read.first,
                  pods > 1 ? "+ Raft append, WAL fdatasync on the leader and on a majority of followers (in parallel), "
                             "commit, apply"
                           : "+ Raft append, the WAL's fdatasync, commit, apply"});
  if (put_forwarded) {
    rows.push_back({"front_to_leader_front", *put_forwarded, put_forwarded->first - put_leader.first,
                    "+ the client's pod is not the leader's: its front forwards a ShardRequest to the leader's front"});
  }
  for (const Row& row : rows) {
    fmt::print("bench=kv case={} hop={} p50_us={:.0f} p99_us={:.0f} added_us={:.0f} what=\"{}\"\n", args.case_name,
               row.hop, row.figure.first, row.figure.second, row.added, row.what);
  }
  fmt::print(
      "bench=kv case={} floor tcp_loopback_rtt_p50_us={:.1f} fsync_4k_p50_us={:.0f} fsync_4k_p99_us={:.0f} pods={} "
      "leader_pod={} samples={} value_size={} failures={} fs={} load1_before={:.2f} load1_after={:.2f}\n",
      args.case_name, rtt.first, fsync.p50_us, fsync.p99_us, pods, leader + 1, samples, args.value_size, failures,
      elfin_bench::fs_name(args.data_dir), load_before, load_average());
  std::fflush(stdout);
  return failures == 0;
}

constexpr const char* kUsage = R"(usage: bench_kv --case rf1_vs_redis --elfin-pods A --redis HOST:PORT [options]
       bench_kv --case rf3_vs_etcd --elfin-pods A,B,C --etcd URL,URL,URL [options]
       bench_kv --case hops_rf1|hops_rf3 --elfin-pods A[,B,C] [--samples N (500)] [options]
options: --clients C (16) --value-size B (256) --keys K (10000) --seconds S (10) --reps R (3)
         --data-dir D (where the stores keep their data: its file system and an fsync probe)
         --first-node N (2000; elfin's light nodes join as nodes N, N + 1, ...)
         --light-nodes L (1; elfin's clients share L light nodes, client w the (w mod L)th; 0: one each)
         --elfin-pids P,P --peer-pids P,P (the servers' processes: CPU per operation and when idle)
(tests/bench/kv_side_by_side.sh starts the servers and runs both cases)
)";

int run_main(int argc, char** argv) {
  Args args;
  unsigned samples = 500;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      const auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::runtime_error(fmt::format("{} needs a value", arg));
        return argv[++i];
      };
      if (arg == "--case") {
        args.case_name = value();
      } else if (arg == "--elfin-pods") {
        args.elfin_pods = split(value());
      } else if (arg == "--redis") {
        args.redis = value();
      } else if (arg == "--etcd") {
        args.etcd = split(value());
      } else if (arg == "--clients") {
        args.clients = static_cast<unsigned>(std::stoul(value()));
      } else if (arg == "--value-size") {
        args.value_size = static_cast<std::uint32_t>(std::stoul(value()));
      } else if (arg == "--keys") {
        args.keys = std::stoull(value());
      } else if (arg == "--seconds") {
        args.seconds = static_cast<unsigned>(std::stoul(value()));
      } else if (arg == "--reps") {
        args.reps = static_cast<unsigned>(std::stoul(value()));
      } else if (arg == "--data-dir") {
        args.data_dir = value();
      } else if (arg == "--elfin-pids") {
        for (const auto& pid : split(value())) args.elfin_pids.push_back(std::stoi(pid));
      } else if (arg == "--peer-pids") {
        for (const auto& pid : split(value())) args.peer_pids.push_back(std::stoi(pid));
      } else if (arg == "--samples") {
        samples = static_cast<unsigned>(std::stoul(value()));
      } else if (arg == "--light-nodes") {
        args.light_nodes = static_cast<unsigned>(std::stoul(value()));
      } else if (arg == "--first-node") {
        args.first_node = static_cast<std::uint16_t>(std::stoul(value()));
      } else {
        throw std::runtime_error(fmt::format("unknown option `{}`", arg));
      }
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_kv: {}\n{}", e.what(), kUsage);
    return 2;
  }
  if (args.case_name.starts_with("hops") && !args.elfin_pods.empty() && samples > 0) {
    return run_hops(args, samples) ? 0 : 1;
  }
  if (args.elfin_pods.empty() || args.clients == 0 || args.reps == 0 ||
      (args.case_name == "rf1_vs_redis"  ? args.redis.empty()
       : args.case_name == "rf3_vs_etcd" ? args.etcd.empty()
                                         : true)) {
    fmt::print(stderr, "{}", kUsage);
    return 2;
  }
  ElfinClients elfin_clients(args.elfin_pods, args.clients, args.light_nodes, args.first_node);
  const StoreFactory elfin = [&](unsigned n) -> std::unique_ptr<Store> {
    return std::make_unique<ElfinStore>(elfin_clients.client(n));
  };
  StoreFactory peer;
  std::string peer_name;
  if (args.case_name == "rf1_vs_redis") {
    peer_name = "redis";
    peer = [&](unsigned) -> std::unique_ptr<Store> { return std::make_unique<RedisStore>(args.redis); };
  } else {
    peer_name = "etcd";
    peer = [&](unsigned w) -> std::unique_ptr<Store> {
      return std::make_unique<EtcdStore>(args.etcd[w % args.etcd.size()]);
    };
  }
  return run_case(args, peer_name, elfin, peer) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {  // a store that could not be reached, a failed setup
    std::fputs("bench_kv: ", stderr);
    std::fputs(e.what(), stderr);
    std::fputs("\n", stderr);
  } catch (...) {
    std::fputs("bench_kv: an unknown exception\n", stderr);
  }
  return 1;
}
