// The KV local cluster for tests (see kv_local_cluster.hpp).
#include "kv_local_cluster.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include <elfin/kv/client.hpp>

#include "eventually.hpp"
#include "process.hpp"

namespace elfin::test {

namespace {

using Clock = std::chrono::steady_clock;

bool port_free(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

/// The first of `count` consecutive ports free a moment ago (0: none found).
std::uint16_t free_base_port(std::uint16_t count) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint16_t base = free_tcp_port();
    if (base >= 60000) continue;
    bool all = true;
    for (std::uint16_t i = 1; i < count && all; ++i) all = port_free(static_cast<std::uint16_t>(base + i));
    if (all) return base;
  }
  return 0;
}

}  // namespace

Result<kv::Client, std::string> kv_client(const std::vector<std::string>& pods, std::uint16_t node,
                                          std::chrono::milliseconds timeout) {
  kv::ClientOptions options;
  options.pods = pods;
  options.node = node;
  options.timeout = timeout;
  return kv::Client::connect(options);
}

CliRun elfin_cli(std::vector<std::string> args, std::chrono::seconds timeout) {
  args.insert(args.begin(), elfin_binary());
  auto process = Process::start(args);
  if (!process) return CliRun{-1, {}, process.error()};
  auto status = process->wait_exit(timeout);
  if (!status) {
    return CliRun{
        -1, process->stdout_text(),
        process->stderr_text() + fmt::format("\n`{}` still ran after {} s", fmt::join(args, " "), timeout.count())};
  }
  return CliRun{status->signal != 0 ? -1 : status->code, process->stdout_text(), process->stderr_text()};
}

bool process_gone(int pid) {
  const std::string stat = read_file(fmt::format("/proc/{}/stat", pid));
  const auto state = stat.rfind(") ");
  return stat.empty() || state == std::string::npos || stat[state + 2] == 'Z';
}

KvLocalCluster::KvLocalCluster(KvLocalClusterOptions options) : options_(options) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    const bool manager = options_.replication_factor != 0;
    base_port_ = free_base_port(static_cast<std::uint16_t>(options_.pods + options_.spare_pods + (manager ? 1 : 0)));
    if (manager && base_port_ != 0) ++base_port_;  // the manager listens on the port below pod 1's
    if (base_port_ == 0) {
      started_ = CliRun{-1, {}, "no consecutive free ports"};
      continue;
    }
    started_ = elfin_cli(start_args());
    if (started_.code == 0 || started_.err.find("is taken") == std::string::npos) break;
  }
}

KvLocalCluster::~KvLocalCluster() {
  if (stopped_) return;
  for (std::uint16_t pod = 1; pod <= options_.pods; ++pod) signal(pod, SIGCONT);  // a paused pod cannot stop
  std::ignore = stop();
}

std::vector<std::string> KvLocalCluster::start_args() const {
  std::vector<std::string> args{"kv",
                                "cluster",
                                "start",
                                "--dir",
                                dir(),
                                "--base-port",
                                std::to_string(base_port_),
                                "--count",
                                std::to_string(options_.pods),
                                "--shards",
                                std::to_string(options_.shards)};
  if (options_.replication_factor != 0) {
    args.emplace_back("--replication-factor");
    args.push_back(std::to_string(options_.replication_factor));
  }
  if (options_.dump) args.emplace_back("--dump");
  return args;
}

std::vector<std::string> KvLocalCluster::pods() const {
  std::vector<std::string> out;
  out.reserve(options_.pods);
  for (std::uint16_t i = 0; i < options_.pods; ++i) out.push_back(fmt::format("tcp://127.0.0.1:{}", base_port_ + i));
  return out;
}

int KvLocalCluster::pid(std::uint16_t pod) const {
  const std::string text = read_file(dir_.file(fmt::format("pod-{}.pid", pod)));
  try {
    return text.empty() ? 0 : std::stoi(text);
  } catch (const std::exception&) {
    return 0;
  }
}

bool KvLocalCluster::signal(std::uint16_t pod, int signo) {
  const int p = pid(pod);
  return p > 0 && !process_gone(p) && ::kill(p, signo) == 0;
}

bool KvLocalCluster::signal_manager(int signo) {
  int p = 0;
  try {
    const std::string text = read_file(dir_.file("manager.pid"));
    p = text.empty() ? 0 : std::stoi(text);
  } catch (const std::exception&) {
    return false;
  }
  return p > 0 && !process_gone(p) && ::kill(p, signo) == 0;
}

bool KvLocalCluster::stop_pod(std::uint16_t pod, std::chrono::milliseconds timeout) {
  const int p = pid(pod);
  if (p <= 0 || ::kill(p, SIGTERM) != 0) return false;
  return eventually([&] { return process_gone(p); }, timeout, std::chrono::milliseconds(10));
}

CliRun KvLocalCluster::stop() {
  stopped_ = true;
  return elfin_cli({"kv", "cluster", "stop", "--dir", dir()});
}

CliRun KvLocalCluster::start_again() {
  stopped_ = false;  // whatever it starts is stopped with the cluster, even after a stop()
  return elfin_cli(start_args());
}

CliRun KvLocalCluster::add_pod() {
  if (options_.spare_pods == 0) return CliRun{-1, {}, "no spare port for another pod"};
  --options_.spare_pods;
  ++options_.pods;
  return start_again();
}

CliRun KvLocalCluster::remove_pod(std::uint16_t pod, std::chrono::seconds timeout) {
  return elfin_cli({"kv", "cluster", "remove", "--pod", std::to_string(pod), "--dir", dir(), "--timeout",
                    std::to_string(timeout.count())},
                   timeout + std::chrono::seconds(30));
}

std::string KvLocalCluster::manager_address() const { return fmt::format("tcp://127.0.0.1:{}", base_port_ - 1); }

CliRun KvLocalCluster::assignments() {
  return elfin_cli({"shard", "--assignments", "--manager", manager_address(), "--timeout", "10"});
}

std::map<std::string, int> KvLocalCluster::replica_counts() {
  std::map<std::string, int> out;
  const auto printed = assignments();
  if (printed.code != 0) return out;
  static const std::regex line(R"((kv-pod-[0-9]+)#[0-9]+\t[^\n]*\t([0-9]+) replicas)");
  for (std::sregex_iterator it(printed.out.begin(), printed.out.end(), line), end; it != end; ++it) {
    out[(*it)[1]] += std::stoi((*it)[2]);
  }
  return out;
}

CliRun KvLocalCluster::kv(std::vector<std::string> args) {
  args.insert(args.begin(), "kv");
  args.push_back("--dir");
  args.push_back(dir());
  return elfin_cli(std::move(args));
}

bool KvLocalCluster::serves(std::uint16_t pod, std::chrono::milliseconds timeout, const std::string& key) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    kv::ClientOptions options;
    options.pods = {pods().at(pod - 1)};
    options.pod_nodes = {pod};
    options.node = next_probe_node_++;
    options.timeout = std::min(left, std::chrono::milliseconds(3000));
    auto client = kv::Client::connect(options);
    if (client && client->get(key, true)) return true;
    // Not `eventually`: each probe's own timeout is the time left of the one deadline.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace elfin::test
