#include <elfin/kv/command.hpp>

#include <charconv>
#include <chrono>
#include <optional>
#include <string>

#include <fmt/format.h>

#include <elfin/kv/client.hpp>
#include <elfin/kv/cluster.hpp>

namespace elfin::kv {

namespace {

namespace pk = protocols::kv;

constexpr const char* kUsage = R"(usage: elfin kv <command> [options]

The KV service (see the guide's KV service chapter).

local cluster (3 pods on loopback, each `elfin run` in the background):
  cluster start [--dir DIR] [--count N] [--base-port P] [--shards S]
        Write the pods' files into DIR (default ./elfin-kv) and start N pods (default 3), each
        replicating every shard; pod N listens
        on 127.0.0.1:(P + N - 1), P = 9501 by default. Data, logs and pid files stay in DIR.
        --shards: the number of shards keys hash to (default 1024; fixed once data is written).
  cluster files [--dir DIR] [--count N] [--base-port P] [--shards S] [--data-dir D]
        Only write the pods' files (their data under D, default kv-data, relative to where the
        pods run), to start the pods by hand: elfin run DIR/pod-1.toml ...
  cluster stop [--dir DIR]
        Stop the pods started in DIR (SIGTERM, then SIGKILL after 15 s). The data stays.

client commands (join the cluster as a light node):
  put KEY VALUE                   prints the key's new version
  get KEY [--stale]               prints the version and value; exit code 3 if not found
  delete KEY [--if-version V]     deletes; exit code 3 if the key did not exist
  cas KEY VALUE --expect V        writes if the key's version is V (0: must not exist)
  scan [PREFIX] [--limit N] [--shard S] [--stale]
                                  prints `key <TAB> version <TAB> value` per key in key order
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
  bool stale = false;
  std::optional<std::uint64_t> expect;
  std::optional<std::uint64_t> if_version;
  std::uint32_t limit = 100;
  std::optional<std::uint32_t> shard;
  std::string data_dir = "kv-data";
  bool help = false;
};

template <class T>
Result<T, std::string> number(std::string_view option, std::string_view text, T low, T high) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < low || value > high) {
    return Err{fmt::format("{} `{}`: expected an integer from {} to {}", option, text, low, high)};
  }
  return value;
}

Result<Args, std::string> parse(const std::vector<std::string_view>& args) {
  Args parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    auto is = [&](std::string_view option) {
      return arg == option || (arg.starts_with(option) && arg.size() > option.size() && arg[option.size()] == '=');
    };
    auto value_of = [&](std::string_view option) -> Result<std::string, std::string> {
      if (arg.size() > option.size() && arg[option.size()] == '=') return std::string(arg.substr(option.size() + 1));
      if (i + 1 == args.size()) return Err{fmt::format("{} needs a value", option)};
      return std::string(args[++i]);
    };
#define ELFIN_KV_VALUE(option, target)   \
  auto value = value_of(option);         \
  if (!value) return Err{value.error()}; \
  target = *value
#define ELFIN_KV_NUMBER(option, T, low, high, target) \
  auto value = value_of(option);                      \
  if (!value) return Err{value.error()};              \
  auto n = number<T>(option, *value, low, high);      \
  if (!n) return Err{n.error()};                      \
  target = *n
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
    } else if (is("--dir")) {
      ELFIN_KV_VALUE("--dir", parsed.dir);
    } else if (is("--pods")) {
      std::string list;
      ELFIN_KV_VALUE("--pods", list);
      parsed.pods.clear();
      for (std::size_t start = 0; start <= list.size();) {
        const auto comma = std::min(list.find(',', start), list.size());
        std::string pod = list.substr(start, comma - start);
        if (!pod.starts_with("tcp://")) return Err{fmt::format("--pods `{}`: expected tcp://HOST:PORT", pod)};
        parsed.pods.push_back(std::move(pod));
        start = comma + 1;
      }
    } else if (is("--node")) {
      ELFIN_KV_NUMBER("--node", std::uint16_t, 1, 65535, parsed.node);
    } else if (is("--secret")) {
      std::string secret;
      ELFIN_KV_VALUE("--secret", secret);
      parsed.secret = secret;
    } else if (is("--timeout")) {
      ELFIN_KV_NUMBER("--timeout", std::uint32_t, 1, 3600, parsed.timeout_seconds);
    } else if (is("--base-port")) {
      ELFIN_KV_NUMBER("--base-port", std::uint16_t, 1, 65000, parsed.base_port);
    } else if (is("--data-dir")) {
      ELFIN_KV_VALUE("--data-dir", parsed.data_dir);
    } else if (is("--shards")) {
      ELFIN_KV_NUMBER("--shards", std::uint32_t, 1, 0x7FFF'FFFFu, parsed.shards);
    } else if (is("--count")) {
      ELFIN_KV_NUMBER("--count", std::uint16_t, 1, 64, parsed.pod_count);
    } else if (arg == "--stale") {
      parsed.stale = true;
    } else if (is("--expect")) {
      ELFIN_KV_NUMBER("--expect", std::uint64_t, 0, UINT64_MAX, parsed.expect);
    } else if (is("--if-version")) {
      ELFIN_KV_NUMBER("--if-version", std::uint64_t, 0, UINT64_MAX, parsed.if_version);
    } else if (is("--limit")) {
      ELFIN_KV_NUMBER("--limit", std::uint32_t, 1, 1'000'000, parsed.limit);
    } else if (is("--shard")) {
      ELFIN_KV_NUMBER("--shard", std::uint32_t, 0, 0x7FFF'FFFEu, parsed.shard);
    } else if (arg.starts_with("--")) {
      return Err{fmt::format("unknown option `{}`", arg)};
    } else {
      parsed.positional.emplace_back(arg);
    }
#undef ELFIN_KV_VALUE
#undef ELFIN_KV_NUMBER
  }
  return parsed;
}

int cluster_command(const Args& args, std::FILE* out, std::FILE* err) {
  const auto is = [&](std::string_view what) { return args.positional.size() == 2 && args.positional[1] == what; };
  if (!is("start") && !is("stop") && !is("files")) {
    fmt::print(err, "elfin kv cluster: expected `start`, `stop` or `files`\n\n{}", kUsage);
    return 2;
  }
  ClusterOptions options;
  options.dir = args.dir;
  options.pods = args.pod_count;
  options.base_port = args.base_port;
  options.shards = args.shards;
  if (is("files")) {
    if (auto written = write_cluster_files(options, args.data_dir); !written) {
      fmt::print(err, "elfin kv cluster files: {}\n", written.error());
      return 1;
    }
    fmt::print(out, "wrote pod-1.toml .. pod-{}.toml and their configs into {}\n", options.pods, args.dir);
    return 0;
  }
  if (args.positional[1] == "start") {
    auto pods = start_cluster(options);
    if (!pods) {
      fmt::print(err, "elfin kv cluster start: {}\n", pods.error());
      return 1;
    }
    for (const PodProcess& pod : *pods) {
      fmt::print(out, "pod {} {} pid {}{}\n", pod.node, pod.address, pod.pid,
                 pod.already_running ? " (already running)" : "");
    }
    fmt::print(out, "cluster in {}; stop it with: elfin kv cluster stop --dir {}\n", args.dir, args.dir);
    return 0;
  }
  auto pods = stop_cluster(options);
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
    auto pods = cluster_addresses(args.dir);
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
    auto written = command == "put" ? client->put(p[1], p[2]) : client->cas(p[1], p[2], *args.expect);
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

int run_kv_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err) {
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

}  // namespace elfin::kv
