#include "kv_command.hpp"

#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>

#include <elfin/kv/client.hpp>
#include <elfin/kv/cluster.hpp>

#include "kv_bench_command.hpp"
#include "options.hpp"

namespace elfin::cli {

namespace {

namespace pk = protocols::kv;
using kv::Client;
using kv::ClientOptions;
using kv::ClusterOptions;
using kv::PodProcess;

constexpr const char* kUsage = R"(usage: elfin kv <command> [options]

The KV service (see the guide's KV service chapter).

local cluster (3 pods on loopback, each `elfin run` in the background):
  cluster start [--dir DIR] [--count N] [--base-port P] [--shards S] [--replication-factor R] [--dump]
                [--workers W]
        Write the pods' files into DIR (default ./elfin-kv) and start N pods (default 3), each
        replicating every shard; pod N listens
        on 127.0.0.1:(P + N - 1), P = 9501 by default. Data, logs and pid files stay in DIR.
        --shards: the number of shards keys hash to (default 1024; fixed once data is written).
        --replication-factor: start a shard manager too (node 100 on 127.0.0.1:(P - 1)) that
        places each shard on R pods and moves replicas when pods join or die; starting again
        with a larger --count (and the same R) adds pods.
        Each pod serves Prometheus /metrics on 127.0.0.1:(its port + 100) or a free port when
        that is taken (DIR/metrics lists them, DIR/prometheus-targets.json for file_sd_configs).
        --dump: every pod dumps every message to DIR/pod-N/pod-N.dump (elfin dump --trace ID
        reads them); off by default, as dumping everything costs throughput and disk.
        --workers: each pod's worker threads (default: this machine's cores shared among the
        pods, cores / N, at least 1; more workers than cores cost CPU in wake-ups).
  cluster files [--dir DIR] [--count N] [--base-port P] [--shards S] [--replication-factor R] [--dump] [--workers W] [--data-dir D]
        Only write the pods' files (their data under D, default kv-data, relative to where the
        pods run), to start the pods by hand: elfin run DIR/pod-1.toml ...
  cluster stop [--dir DIR]
        Stop the pods started in DIR (SIGTERM, then SIGKILL after 15 s). The data stays.
  cluster remove --pod N [--dir DIR] [--timeout SECONDS]
        With a shard manager: pod N leaves the cluster gracefully. It leaves the manager's map,
        the shards' leaders move its replicas to the other pods (one membership change at a
        time, the pod serving meanwhile), and once it holds none (waited for up to --timeout,
        default 120) it is stopped. Start the cluster again with a --count below N to keep it
        out (removing the last pod), as a pod started again rejoins.

client commands (join the cluster as a light node):
  put KEY VALUE                   prints the key's new version
  get KEY [--stale]               prints the version and value; exit code 3 if not found
  delete KEY [--if-version V]     deletes; exit code 3 if the key did not exist
  cas KEY VALUE --expect V        writes if the key's version is V (0: must not exist)
  scan [PREFIX] [--limit N] [--shard S] [--stale]
                                  prints `key <TAB> version <TAB> value` per key in key order
  bench [--clients C] [--duration S | --ops N] [--mix GET:PUT[:CAS]] [--rate R] [--json] ...
                                  load generator: ops/s and latency percentiles (kv bench --help)
client options:
  --dir DIR           the cluster started in DIR (default ./elfin-kv): its `pods` file
  --pods A,B,C        the pods' addresses instead (tcp://HOST:PORT, pod 1 first)
  --node N            this client's node number (default: derived from the process id)
  --secret S          the cluster secret, if the cluster has one
  --timeout SECONDS   how long to wait for an answer (default 10; 40 for a scan over every shard)

Exit code 0 done, 1 failed (the error on stderr: VersionMismatch, Timeout, Unavailable, ...),
2 bad usage, 3 not found.
)";

struct Args {
  std::vector<std::string> positional;
  std::string dir = "elfin-kv";
  std::vector<std::string> pods;
  std::optional<std::uint16_t> node;
  std::optional<std::string> secret;
  std::optional<std::uint32_t> timeout_seconds;
  std::uint16_t pod_count = 3;
  std::uint16_t base_port = 9501;
  std::uint32_t shards = 1024;
  std::uint32_t workers = 0;
  std::uint32_t replication_factor = 0;
  bool stale = false;
  bool dump = false;
  std::optional<std::uint64_t> expect;
  std::optional<std::uint64_t> if_version;
  std::uint32_t limit = 100;
  std::optional<std::uint32_t> shard;
  std::optional<std::uint16_t> pod;
  std::string data_dir = "kv-data";
  bool help = false;
};

Result<Args, std::string> parse(const std::vector<std::string_view>& args) {
  Args parsed;
  Options options(args);
  while (options.next()) {
    bool ok = true;
    if (options.arg() == "-h" || options.arg() == "--help") {
      parsed.help = true;
    } else if (options.is("--dir")) {
      ok = options.read(parsed.dir);
    } else if (options.is("--pods")) {
      std::string list;
      ok = options.read(list);
      if (ok) {
        auto pods = parse_pods(list);
        if (!pods) return Err{pods.error()};
        parsed.pods = std::move(*pods);
      }
    } else if (options.is("--node")) {
      ok = options.read(parsed.node, std::uint16_t{1}, std::uint16_t{65535});
    } else if (options.is("--secret")) {
      ok = options.read(parsed.secret);
    } else if (options.is("--timeout")) {
      ok = options.read(parsed.timeout_seconds, 1u, 3600u);
    } else if (options.is("--base-port")) {
      ok = options.read(parsed.base_port, std::uint16_t{1}, std::uint16_t{65000});
    } else if (options.is("--data-dir")) {
      ok = options.read(parsed.data_dir);
    } else if (options.is("--shards")) {
      ok = options.read(parsed.shards, 1u, 0x7FFF'FFFFu);
    } else if (options.is("--workers")) {
      ok = options.read(parsed.workers, 1u, 1024u);
    } else if (options.is("--replication-factor")) {
      ok = options.read(parsed.replication_factor, 1u, 64u);
    } else if (options.is("--pod")) {
      ok = options.read(parsed.pod, std::uint16_t{1}, std::uint16_t{64});
    } else if (options.is("--count")) {
      ok = options.read(parsed.pod_count, std::uint16_t{1}, std::uint16_t{64});
    } else if (options.arg() == "--stale") {
      parsed.stale = true;
    } else if (options.arg() == "--dump") {
      parsed.dump = true;
    } else if (options.is("--expect")) {
      ok = options.read(parsed.expect, std::uint64_t{0}, UINT64_MAX);
    } else if (options.is("--if-version")) {
      ok = options.read(parsed.if_version, std::uint64_t{0}, UINT64_MAX);
    } else if (options.is("--limit")) {
      ok = options.read(parsed.limit, 1u, 1'000'000u);
    } else if (options.is("--shard")) {
      ok = options.read(parsed.shard, 0u, 0x7FFF'FFFEu);
    } else if (options.arg().starts_with("--")) {
      return Err{options.unknown()};
    } else {
      // Keys and values may start with a single dash.
      parsed.positional.emplace_back(options.arg());
    }
    if (!ok) return Err{options.error()};
  }
  return parsed;
}

int cluster_command(const Args& args, std::FILE* out, std::FILE* err) {
  const auto is = [&](std::string_view what) { return args.positional.size() == 2 && args.positional[1] == what; };
  if (!is("start") && !is("stop") && !is("files") && !is("remove")) {
    fmt::print(err, "elfin kv cluster: expected `start`, `stop`, `remove` or `files`\n\n{}", kUsage);
    return 2;
  }
  ClusterOptions options;
  options.dir = args.dir;
  options.pods = args.pod_count;
  options.base_port = args.base_port;
  options.shards = args.shards;
  options.replication_factor = args.replication_factor;
  options.dumping = args.dump;
  options.workers = args.workers;
  if (is("files")) {
    if (auto written = kv::write_cluster_files(options, args.data_dir); !written) {
      fmt::print(err, "elfin kv cluster files: {}\n", written.error());
      return 1;
    }
    fmt::print(out, "wrote pod-1.toml .. pod-{}.toml{} and their configs into {}\n", options.pods,
               options.replication_factor != 0 ? " and manager.toml" : "", args.dir);
    return 0;
  }
  if (args.positional[1] == "start") {
    auto pods = kv::start_cluster(options);
    if (!pods) {
      fmt::print(err, "elfin kv cluster start: {}\n", pods.error());
      return 1;
    }
    for (const PodProcess& pod : *pods) {
      fmt::print(out, "pod {} {} pid {} metrics http://{}/metrics{}\n", pod.node, pod.address, pod.pid, pod.metrics,
                 pod.already_running ? " (already running)" : "");
    }
    fmt::print(out, "cluster in {}; stop it with: elfin kv cluster stop --dir {}\n", args.dir, args.dir);
    return 0;
  }
  if (is("remove")) {
    if (!args.pod) {
      fmt::print(err, "elfin kv cluster remove: which pod? (--pod N)\n\n{}", kUsage);
      return 2;
    }
    auto removed = kv::remove_pod(options, *args.pod, std::chrono::seconds(args.timeout_seconds.value_or(120)));
    if (!removed) {
      fmt::print(err, "elfin kv cluster remove: {}\n", removed.error());
      return 1;
    }
    fmt::print(out, "pod {} left (map epoch {}), held no replica after {} ms; pid {} stopped\n", removed->node,
               removed->epoch, removed->moved_after.count(), removed->pid);
    return 0;
  }
  auto pods = kv::stop_cluster(options);
  if (!pods) {
    fmt::print(err, "elfin kv cluster stop: {}\n", pods.error());
    return 1;
  }
  for (const PodProcess& pod : *pods) fmt::print(out, "pod {} pid {} stopped\n", pod.node, pod.pid);
  if (pods->empty()) fmt::print(out, "no pod was running in {}\n", args.dir);
  return 0;
}

int failed(std::FILE* err, std::string_view command, const pk::KvError& error) {
  fmt::print(err, "elfin kv {}: {}\n", command, pk::to_string(error));
  return 1;
}

int client_command(const Args& args, std::FILE* out, std::FILE* err) {
  const std::string& command = args.positional.front();
  const auto want = [&](std::size_t lo, std::size_t hi, std::string_view shape) -> bool {
    if (args.positional.size() - 1 >= lo && args.positional.size() - 1 <= hi) return true;
    fmt::print(err, "elfin kv {}: expected {}\n\n{}", command, shape, kUsage);
    return false;
  };
  if (command == "put" && !want(2, 2, "KEY VALUE")) return 2;
  if (command == "get" && !want(1, 1, "KEY")) return 2;
  if (command == "delete" && !want(1, 1, "KEY")) return 2;
  if (command == "cas" && !want(2, 2, "KEY VALUE --expect VERSION")) return 2;
  if (command == "scan" && !want(0, 1, "[PREFIX]")) return 2;
  if (command == "cas" && !args.expect) {
    fmt::print(err, "elfin kv cas: --expect VERSION is required (0: the key must not exist)\n");
    return 2;
  }
  ClientOptions options;
  options.pods = args.pods;
  if (options.pods.empty()) {
    auto pods = kv::cluster_addresses(args.dir);
    if (!pods) {
      fmt::print(err, "elfin kv {}: {}\n", command, pods.error());
      return 1;
    }
    options.pods = *pods;
  }
  options.node = args.node.value_or(0);
  options.secret = args.secret;
  const bool whole_scan = command == "scan" && !args.shard;
  options.timeout = std::chrono::seconds(args.timeout_seconds.value_or(whole_scan ? 40 : 10));
  auto client = Client::connect(options);
  if (!client) {
    fmt::print(err, "elfin kv {}: {}\n", command, client.error());
    return 1;
  }
  const auto& p = args.positional;
  if (command == "put" || command == "cas") {
    // A cas without --expect was refused above.
    auto written = command == "cas" && args.expect ? client->cas(p[1], p[2], *args.expect) : client->put(p[1], p[2]);
    if (!written) return failed(err, command, written.error());
    fmt::print(out, "version {}\n", written->version);
    return 0;
  }
  if (command == "get") {
    auto found = client->get(p[1], args.stale);
    if (!found) return failed(err, command, found.error());
    if (!found->found) {
      fmt::print(out, "not found\n");
      return 3;
    }
    fmt::print(out, "version {}\n{}\n", found->version, found->value);
    return 0;
  }
  if (command == "delete") {
    auto deleted = args.if_version ? client->delete_if_version(p[1], *args.if_version) : client->remove(p[1]);
    if (!deleted) return failed(err, command, deleted.error());
    fmt::print(out, "{}\n", deleted->existed ? "deleted" : "not found");
    return deleted->existed ? 0 : 3;
  }
  pk::Scan scan;
  scan.prefix = p.size() > 1 ? p[1] : "";
  scan.limit = args.limit;
  scan.stale = args.stale;
  scan.shard = args.shard;
  auto scanned = client->scan(scan);
  if (!scanned) return failed(err, command, scanned.error());
  for (const pk::KeyValue& entry : scanned->entries)
    fmt::print(out, "{}\t{}\t{}\n", entry.key, entry.version, entry.value);
  if (scanned->more) fmt::print(out, "(more)\n");
  return 0;
}

}  // namespace

Result<std::vector<std::string>, std::string> parse_pods(std::string_view list) {
  std::vector<std::string> pods;
  for (std::size_t start = 0; start <= list.size();) {
    const auto comma = std::min(list.find(',', start), list.size());
    std::string pod(list.substr(start, comma - start));
    if (!pod.starts_with("tcp://")) return Err{fmt::format("--pods `{}`: expected tcp://HOST:PORT", pod)};
    pods.push_back(std::move(pod));
    start = comma + 1;
  }
  return pods;
}

int run_kv_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err) {
  if (!args.empty() && args.front() == "bench") return run_kv_bench_command({args.begin() + 1, args.end()}, out, err);
  auto parsed = parse(args);
  if (!parsed) {
    fmt::print(err, "elfin kv: {}\n\n{}", parsed.error(), kUsage);
    return 2;
  }
  if (parsed->help || parsed->positional.empty()) {
    fmt::print(parsed->help ? out : err, "{}", kUsage);
    return parsed->help ? 0 : 2;
  }
  const std::string& command = parsed->positional.front();
  if (command == "cluster") return cluster_command(*parsed, out, err);
  if (command == "put" || command == "get" || command == "delete" || command == "cas" || command == "scan") {
    return client_command(*parsed, out, err);
  }
  fmt::print(err, "elfin kv: unknown command `{}`\n\n{}", command, kUsage);
  return 2;
}

}  // namespace elfin::cli
