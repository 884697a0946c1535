#include <elfin/kv/cluster.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include <elfin/network/light_node.hpp>
#include <elfin/protocols/kv.hpp>
#include <elfin/protocols/raft.hpp>
#include <elfin/wal/posix_file_system.hpp>
#include <elfin/wal/recovery.hpp>

namespace elfin::kv {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string errno_text(int error) { return std::error_code(error, std::generic_category()).message(); }

Result<void, std::string> write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Err{fmt::format("{}: cannot write", path.string())};
  return {};
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The process `pid` is alive and runs pod `topology` (a pid file may outlive its process, and
/// the pid be reused by another program).
bool runs_pod(int pid, const fs::path& topology) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  std::string cmdline = read_file(fmt::format("/proc/{}/cmdline", pid));
  for (char& c : cmdline) {
    if (c == '\0') c = ' ';
  }
  // A zombie (exited, not reaped yet) has an empty command line.
  return cmdline.find(topology.string()) != std::string::npos;
}

int pid_in(const fs::path& pid_file) {
  try {
    return std::stoi(read_file(pid_file));
  } catch (const std::exception&) {
    return 0;
  }
}

/// Whether `op` (connect or bind) succeeds on a new TCP socket for 127.0.0.1:`port`.
template <class Op>
bool on_loopback(std::uint16_t port, Op op) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = op(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

bool listens(std::uint16_t port) { return on_loopback(port, ::connect); }

/// `port` on loopback can be bound now.
bool port_free(std::uint16_t port) { return on_loopback(port, ::bind); }

/// A loopback port the kernel gives out as free now (0: none).
std::uint16_t any_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

/// The telemeter port for a node being started: the layout's (network port + 100) when free,
/// else one the kernel picks, never one of `taken`.
std::uint16_t pick_metrics_port(std::uint16_t preferred, const std::vector<std::uint16_t>& taken) {
  const auto used = [&](std::uint16_t port) { return std::find(taken.begin(), taken.end(), port) != taken.end(); };
  if (preferred != 0 && !used(preferred) && port_free(preferred)) return preferred;
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::uint16_t port = any_free_port();
    if (port != 0 && !used(port)) return port;
  }
  return 0;  // the telemeter binds a free port of its own; DIR/metrics cannot name it
}

/// DIR/metrics: "pod-N 127.0.0.1:PORT" (and "manager ...") a line each, as the last start wrote it.
std::map<std::string, std::uint16_t> read_metrics_file(const fs::path& file) {
  std::map<std::string, std::uint16_t> out;
  std::istringstream lines(read_file(file));
  for (std::string name, address; lines >> name >> address;) {
    const auto colon = address.rfind(':');
    if (colon == std::string::npos) continue;
    try {
      out[name] = static_cast<std::uint16_t>(std::stoul(address.substr(colon + 1)));
    } catch (const std::exception&) {
      // Not a port number: the line is skipped, as one without a colon is.
      continue;
    }
  }
  return out;
}

/// DIR/metrics for people and DIR/prometheus-targets.json for Prometheus's file_sd_configs.
Result<void, std::string> write_metrics_files(const fs::path& dir, const std::map<std::string, std::uint16_t>& ports) {
  std::string lines;
  std::string targets;
  for (const auto& [name, port] : ports) {
    lines += fmt::format("{} 127.0.0.1:{}\n", name, port);
    targets += fmt::format(
        "{}\n  {{\"targets\": [\"127.0.0.1:{}\"], \"labels\": {{\"job\": \"elfin-kv\", \"node\": \"{}\"}}}}",
        targets.empty() ? "" : ",", port, name);
  }
  if (auto written = write_file(dir / "metrics", lines); !written) return written;
  return write_file(dir / "prometheus-targets.json", fmt::format("[{}\n]\n", targets));
}

std::string self_program() {
  std::error_code error;
  auto path = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string("elfin") : path.string();
}

std::string log_tail(const fs::path& log) {
  const std::string text = read_file(log);
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

/// Spawns `program run topology`, detached (own session), output to `log`; the child's pid.
Result<int, std::string> spawn(const std::string& program, const fs::path& topology, const fs::path& log) {
  const pid_t pid = ::fork();
  if (pid < 0) return Err{fmt::format("fork: {}", errno_text(errno))};
  if (pid == 0) {
    ::setsid();
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    const std::string run = "run";
    const std::string file = topology.string();
    char* argv[] = {const_cast<char*>(program.c_str()), const_cast<char*>(run.c_str()), const_cast<char*>(file.c_str()),
                    nullptr};
    ::execv(program.c_str(), argv);
    ::_exit(127);
  }
  return static_cast<int>(pid);
}

/// Waits until `port` listens; an error naming `what` and its log if the process exits first or
/// the deadline passes.
Result<void, std::string> await_listening(int pid, bool ours, std::uint16_t port, const std::string& what,
                                          const fs::path& log, const fs::path& pid_file, Clock::time_point deadline) {
  while (!listens(port)) {
    int status = 0;
    if (ours && ::waitpid(pid, &status, WNOHANG) == pid) {
      std::error_code ignored;
      fs::remove(pid_file, ignored);
      return Err{fmt::format("{} exited at start; {}:\n{}", what, log.string(), log_tail(log))};
    }
    if (Clock::now() >= deadline) {
      return Err{fmt::format("{} does not listen on port {}; see {}", what, port, log.string())};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  return {};
}

/// Writes the manager's files and starts it (unless it runs), waiting until it listens.
Result<void, std::string> start_manager(const std::string& program, const fs::path& dir, const ClusterLayout& layout,
                                        std::chrono::milliseconds timeout) {
  const fs::path topology = dir / "manager.toml";
  const fs::path pid_file = dir / "manager.pid";
  const fs::path log = dir / "manager.log";
  const auto port = static_cast<std::uint16_t>(layout.base_port - 1);
  const int running = pid_in(pid_file);
  if (runs_pod(running, topology)) return {};
  if (listens(port)) return Err{fmt::format("port {} (the manager's) is taken by another program", port)};
  for (const auto& [name, text] : {std::pair{topology, manager_topology(layout)},
                                   std::pair{dir / "manager.config.toml", manager_config(layout)}}) {
    if (auto written = write_file(name, text); !written) return written;
  }
  auto pid = spawn(program, topology, log);
  if (!pid) return Err{pid.error()};
  if (auto written = write_file(pid_file, fmt::format("{}\n", *pid)); !written) return written;
  return await_listening(*pid, true, port, "the shard manager", log, pid_file, Clock::now() + timeout);
}

/// Stops the process of `pid_file` running `topology` (SIGTERM, SIGKILL at the deadline).
bool stop_process(const fs::path& pid_file, const fs::path& topology, Clock::time_point deadline) {
  const int pid = pid_in(pid_file);
  const bool running = runs_pod(pid, topology);
  if (running) {
    ::kill(pid, SIGTERM);
    while (runs_pod(pid, topology)) {
      if (Clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
  }
  std::error_code ignored;
  fs::remove(pid_file, ignored);
  return running;
}

}  // namespace

std::uint32_t pod_workers(const ClusterOptions& options) {
  if (options.workers != 0) return options.workers;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1u, cores / std::max<unsigned>(1, options.pods));
}

Result<void, std::string> write_cluster_files(const ClusterOptions& options, const std::string& data_dir) {
  std::error_code error;
  fs::create_directories(options.dir, error);
  if (error) return Err{fmt::format("{}: {}", options.dir, error.message())};
  ClusterLayout layout;
  layout.pods = options.pods;
  layout.base_port = options.base_port;
  layout.shards = options.shards;
  layout.data_dir = data_dir;
  layout.replication_factor = options.replication_factor;
  layout.dumping = options.dumping;
  layout.workers = pod_workers(options);
  if (options.replication_factor != 0) {
    const fs::path dir(options.dir);
    if (auto written = write_file(dir / "manager.toml", manager_topology(layout)); !written) return written;
    if (auto written = write_file(dir / "manager.config.toml", manager_config(layout)); !written) return written;
  }
  for (std::uint16_t n = 1; n <= options.pods; ++n) {
    const fs::path dir(options.dir);
    if (auto written = write_file(dir / fmt::format("pod-{}.toml", n), pod_topology(layout, n)); !written) {
      return written;
    }
    if (auto written = write_file(dir / fmt::format("pod-{}.config.toml", n), pod_config(layout, n)); !written) {
      return written;
    }
  }
  return {};
}

Result<std::vector<PodProcess>, std::string> start_cluster(const ClusterOptions& options) {
  if (options.pods == 0) return Err{std::string("a cluster needs at least one pod")};
  std::error_code error;
  fs::create_directories(options.dir, error);
  if (error) return Err{fmt::format("{}: {}", options.dir, error.message())};
  const fs::path dir = fs::absolute(options.dir).lexically_normal();
  ClusterLayout layout;
  layout.pods = options.pods;
  layout.base_port = options.base_port;
  layout.shards = options.shards;
  layout.data_dir = dir.string();
  layout.dumping = options.dumping;
  layout.workers = pod_workers(options);
  const std::string program = options.program.empty() ? self_program() : options.program;

  std::string addresses;
  for (const auto& address : layout.addresses()) addresses += address + "\n";
  if (auto written = write_file(dir / "pods", addresses); !written) return Err{written.error()};
  if (options.replication_factor != 0) {
    if (options.base_port < 2) return Err{std::string("--base-port must leave room for the manager below it")};
    layout.replication_factor = options.replication_factor;
  }

  // The telemeters' ports: a running node keeps the one it was started with; a node to start gets
  // its network port + 100, or a free one when that is taken. Every node's dump file goes into its
  // own directory, which the dumper does not create.
  const auto previous = read_metrics_file(dir / "metrics");
  std::map<std::string, std::uint16_t> metrics;
  std::vector<std::uint16_t> taken;
  for (std::uint16_t n = 0; n <= options.pods; ++n)
    taken.push_back(static_cast<std::uint16_t>(options.base_port + n - 1));
  const auto metrics_port_of = [&](const std::string& name, bool running, std::uint16_t preferred) {
    const auto found = previous.find(name);
    const std::uint16_t port =
        running ? (found != previous.end() ? found->second : preferred) : pick_metrics_port(preferred, taken);
    taken.push_back(port);
    metrics[name] = port;
    return port;
  };
  if (layout.replication_factor != 0) {
    const bool running = runs_pod(pid_in(dir / "manager.pid"), dir / "manager.toml");
    layout.manager_metrics_port = metrics_port_of("manager", running, layout.metrics_port(kManagerNode));
  }
  for (std::uint16_t n = 1; n <= options.pods; ++n) {
    const bool running = runs_pod(pid_in(dir / fmt::format("pod-{}.pid", n)), dir / fmt::format("pod-{}.toml", n));
    layout.metrics_ports.push_back(metrics_port_of(fmt::format("pod-{}", n), running, layout.metrics_port(n)));
    fs::create_directories(dir / fmt::format("pod-{}", n), error);
    if (error) return Err{fmt::format("{}: {}", (dir / fmt::format("pod-{}", n)).string(), error.message())};
  }
  if (auto written = write_metrics_files(dir, metrics); !written) return Err{written.error()};

  if (options.replication_factor != 0) {
    if (auto started = start_manager(program, dir, layout, options.start_timeout); !started) {
      return Err{started.error()};
    }
  }

  std::vector<PodProcess> pods;
  for (std::uint16_t n = 1; n <= options.pods; ++n) {
    const fs::path topology = dir / fmt::format("pod-{}.toml", n);
    const fs::path pid_file = dir / fmt::format("pod-{}.pid", n);
    PodProcess pod{n, 0, layout.addresses()[n - 1], false, fmt::format("127.0.0.1:{}", layout.metrics_ports[n - 1])};
    if (const int pid = pid_in(pid_file); runs_pod(pid, topology)) {
      pod.pid = pid;
      pod.already_running = true;
      pods.push_back(pod);
      continue;
    }
    if (listens(static_cast<std::uint16_t>(options.base_port + n - 1))) {
      return Err{fmt::format("port {} is taken by another program (choose others with --base-port)",
                             options.base_port + n - 1)};
    }
    // A pod started before keeps its WAL's count: the WAL refuses to start with another.
    ClusterLayout pod_layout = layout;
    wal::PosixFileSystem fs;
    pod_layout.wal_count =
        wal::stored_wal_count(fs, (dir / fmt::format("pod-{}", n) / "wal").string()).value_or(layout.wal_count);
    for (const auto& [name, text] :
         {std::pair{topology, pod_topology(pod_layout, n)},
          std::pair{dir / fmt::format("pod-{}.config.toml", n), pod_config(pod_layout, n)}}) {
      if (auto written = write_file(name, text); !written) return Err{written.error()};
    }
    auto pid = spawn(program, topology, dir / fmt::format("pod-{}.log", n));
    if (!pid) return Err{pid.error()};
    pod.pid = *pid;
    if (auto written = write_file(pid_file, fmt::format("{}\n", *pid)); !written) return Err{written.error()};
    pods.push_back(pod);
  }

  // Every pod listens, or the reason one exited.
  const auto deadline = Clock::now() + options.start_timeout;
  for (const PodProcess& pod : pods) {
    const auto port = static_cast<std::uint16_t>(options.base_port + pod.node - 1);
    const fs::path log = dir / fmt::format("pod-{}.log", pod.node);
    while (!listens(port)) {
      int status = 0;
      if (!pod.already_running && ::waitpid(pod.pid, &status, WNOHANG) == pod.pid) {
        std::error_code ignored;
        fs::remove(dir / fmt::format("pod-{}.pid", pod.node), ignored);
        return Err{fmt::format("pod {} exited at start; {}:\n{}", pod.node, log.string(), log_tail(log))};
      }
      if (Clock::now() >= deadline) {
        return Err{fmt::format("pod {} does not listen on port {} after {} ms; see {}", pod.node, port,
                               options.start_timeout.count(), log.string())};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
  }
  return pods;
}

Result<std::vector<PodProcess>, std::string> stop_cluster(const ClusterOptions& options) {
  const fs::path dir = fs::absolute(options.dir).lexically_normal();
  if (!fs::is_directory(dir)) return Err{fmt::format("{}: no such directory", dir.string())};
  std::vector<PodProcess> stopping;
  for (std::uint16_t n = 1; n <= 1024; ++n) {
    const fs::path pid_file = dir / fmt::format("pod-{}.pid", n);
    if (!fs::exists(pid_file)) {
      if (n > options.pods) break;
      continue;
    }
    const int pid = pid_in(pid_file);
    if (runs_pod(pid, dir / fmt::format("pod-{}.toml", n))) {
      ::kill(pid, SIGTERM);
      stopping.push_back(PodProcess{n, pid, {}, true, {}});
    } else {
      std::error_code ignored;
      fs::remove(pid_file, ignored);
    }
  }
  const auto deadline = Clock::now() + options.stop_timeout;
  for (const PodProcess& pod : stopping) {
    const fs::path topology = dir / fmt::format("pod-{}.toml", pod.node);
    while (runs_pod(pod.pid, topology)) {
      if (Clock::now() >= deadline) {
        ::kill(pod.pid, SIGKILL);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
    std::error_code ignored;
    fs::remove(dir / fmt::format("pod-{}.pid", pod.node), ignored);
  }
  // The manager last: the pods never miss it while they run.
  if (fs::exists(dir / "manager.pid")) std::ignore = stop_process(dir / "manager.pid", dir / "manager.toml", deadline);
  return stopping;
}

Result<std::vector<std::string>, std::string> cluster_addresses(const std::string& dir) {
  const fs::path file = fs::path(dir) / "pods";
  if (!fs::exists(file)) {
    return Err{
        fmt::format("{}: no cluster was started there (no `pods` file); start one with "
                    "`elfin kv cluster start --dir {}` or name the pods with --pods",
                    dir, dir)};
  }
  std::vector<std::string> out;
  std::istringstream lines(read_file(file));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

namespace {

/// The `shards` of a pod's config file (0: not found).
std::uint32_t configured_shards(const fs::path& config) {
  static const std::regex line(R"((?:^|\n)shards = ([0-9]+))");
  const std::string text = read_file(config);
  std::smatch found;
  if (!std::regex_search(text, found, line)) return 0;
  try {
    return static_cast<std::uint32_t>(std::stoul(found[1]));
  } catch (const std::exception&) {
    return 0;
  }
}

/// Whether `node` is in `conf` in any role.
bool member(const protocols::raft::ConfState& conf, std::uint64_t node) {
  for (const auto* ids : {&conf.voters, &conf.learners, &conf.voters_outgoing}) {
    if (std::find(ids->begin(), ids->end(), node) != ids->end()) return true;
  }
  return false;
}

}  // namespace

Result<RemovedPod, std::string> remove_pod(const ClusterOptions& options, std::uint16_t pod,
                                           std::chrono::milliseconds timeout) {
  const fs::path dir = fs::absolute(options.dir).lexically_normal();
  auto addresses = cluster_addresses(dir.string());
  if (!addresses) return Err{addresses.error()};
  if (pod == 0 || pod > addresses->size()) return Err{fmt::format("{} has no pod {}", dir.string(), pod)};
  if (!fs::exists(dir / "manager.toml")) {
    return Err{fmt::format("{} has no shard manager: every pod holds every shard, none can leave", dir.string())};
  }
  const fs::path topology = dir / fmt::format("pod-{}.toml", pod);
  const fs::path pid_file = dir / fmt::format("pod-{}.pid", pod);
  const int pid = pid_in(pid_file);
  if (!runs_pod(pid, topology)) return Err{fmt::format("pod {} is not running", pod)};
  std::uint32_t shards = configured_shards(dir / fmt::format("pod-{}.config.toml", pod));
  if (shards == 0) shards = options.shards;

  network::LightNodeOptions node_options;
  node_options.peers = {(*addresses)[pod - 1]};
  node_options.groups = {{.name = "kv", .nodes = {pod}},
                         {.name = "partitions", .nodes = {pod}, .remote_name = "partitions"}};
  auto node = network::LightNode::start(std::move(node_options));
  if (!node) return Err{fmt::format("the light node did not start: {}", node.error())};
  if (auto up = node->wait_connected(std::chrono::seconds{10}); !up) {
    return Err{fmt::format("pod {} cannot be reached: {}", pod, up.error())};
  }
  const auto started = Clock::now();
  const auto deadline = started + timeout;
  auto left = node->request("kv", protocols::kv::Leave{}, std::chrono::seconds{10}).get();
  if (!left) return Err{fmt::format("pod {} did not answer Leave: {}", pod, to_string(left.error()))};
  if (!*left) return Err{fmt::format("pod {} cannot leave: {}", pod, protocols::kv::to_string(left->error()))};
  RemovedPod removed{pod, pid, left->value().epoch, shards, {}};

  // Its replicas leave one membership change at a time; each cleans up once it learns it.
  for (;;) {
    std::uint32_t held = 0;
    for (std::uint32_t shard = 0; shard < shards; ++shard) {
      auto status =
          node->request("partitions", protocols::raft::GetPartitionStatus{shard}, std::chrono::seconds{3}).get();
      held += !status || member(status->conf, pod);
    }
    if (held == 0) break;
    if (Clock::now() >= deadline) {
      return Err{fmt::format("pod {} still holds {} replicas after {} ms (it keeps running; try again)", pod, held,
                             timeout.count())};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{200});
  }
  removed.moved_after = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  node->stop();
  std::ignore = stop_process(pid_file, topology, Clock::now() + options.stop_timeout);
  return removed;
}

}  // namespace elfin::kv
