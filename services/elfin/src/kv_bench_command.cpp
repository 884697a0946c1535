#include "kv_bench_command.hpp"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include <elfin/kv/client.hpp>
#include <elfin/kv/cluster.hpp>
#include <elfin/loadgen/kv_workload.hpp>
#include <elfin/loadgen/runner.hpp>

#include "kv_command.hpp"
#include "options.hpp"

namespace elfin::cli {

namespace {

namespace pk = protocols::kv;
using loadgen::KeyChoice;
using loadgen::KvMix;
using loadgen::KvOp;

constexpr const char* kBenchUsage = R"(usage: elfin kv bench [options]

Load a KV cluster: C clients (threads, one request at a time each) run a mix of gets, puts and
compare-and-sets over K keys through L light nodes they share (client w uses light node w mod L,
which asks pod (w mod L) mod pods first for shards whose leader it does not know yet). A progress
line every second on stderr, then the report: ops/s, p50/p99/p99.9 latency per kind, errors by
kind (Timeout, Unavailable, VersionMismatch ...).

the cluster:
  --dir DIR           the cluster started in DIR (default ./elfin-kv): its `pods` file
  --pods A,B,C        the pods' addresses instead (tcp://HOST:PORT, pod 1 first)
  --node N            the first light node's number (light node i is N + i; default from the pid)
  --secret S          the cluster secret, if the cluster has one
  --timeout SECONDS   how long one request may take (default 10)
the load:
  --clients C         concurrent clients (default 4)
  --light-nodes L     light nodes the clients share (default 1: one connection per pod, as a program
                      with one elfin::kv::Client has; at most C; 0: one per client)
  --duration SECONDS  how long to run (default 10), or
  --ops N             stop after N operations
  --mix GET:PUT[:CAS] percentages of each kind, adding up to 100 (default 50:50); a cas expects
                      the version its client last saw of the key (0 if none), so under contention
                      some answer VersionMismatch, counted among the errors
  --keys K            the key space: PREFIX00000000 .. (default 10000)
  --prefix P          the keys' prefix (default bench:)
  --zipf S            Zipf-distributed keys with exponent S (e.g. 0.99: a few hot keys); default uniform
  --sequential        operation i touches key i mod K (with --mix 0:100 and --ops K: each key once)
  --value-size B      bytes per value (default 256)
  --stale             gets read the replica's state without confirming leadership
  --rate R            fixed rate: R operations per second over all clients, latency measured from
                      each operation's intended start (no coordinated omission); default closed loop
  --seed S            the random seed (default 1): the same seed, the same keys and kinds
  --json              the final report as one JSON object on stdout

Exit code 0 done, 1 no client connected or no operation succeeded, 2 bad usage.
)";

struct BenchArgs {
  std::string dir = "elfin-kv";
  std::vector<std::string> pods;
  std::optional<std::uint16_t> node;
  std::optional<std::string> secret;
  std::uint32_t timeout_seconds = 10;
  std::uint32_t clients = 4;
  std::uint32_t light_nodes = 1;  ///< 0: one per client
  std::optional<std::uint32_t> duration_seconds;
  std::optional<std::uint64_t> ops;
  KvMix mix;
  std::string mix_text = "50:50";
  std::uint64_t keys = 10'000;
  std::string prefix = "bench:";
  std::optional<double> zipf;
  bool sequential = false;
  std::uint32_t value_size = 256;
  bool stale = false;
  std::optional<double> rate;
  std::uint64_t seed = 1;
  bool json = false;
  bool help = false;
};

Result<double, std::string> parse_positive(std::string_view option, const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || !(value > 0) || !std::isfinite(value)) {
    return Err{fmt::format("{} `{}`: expected a number greater than 0", option, text)};
  }
  return value;
}

Result<BenchArgs, std::string> parse(const std::vector<std::string_view>& args) {
  BenchArgs parsed;
  Options options(args);
  while (options.next()) {
    bool ok = true;
    std::string text;
    if (options.arg() == "-h" || options.arg() == "--help") {
      parsed.help = true;
    } else if (options.is("--dir")) {
      ok = options.read(parsed.dir);
    } else if (options.is("--pods")) {
      ok = options.read(text);
      if (ok) {
        auto pods = parse_pods(text);
        if (!pods) return Err{pods.error()};
        parsed.pods = std::move(*pods);
      }
    } else if (options.is("--node")) {
      ok = options.read(parsed.node, std::uint16_t{1}, std::uint16_t{65535});
    } else if (options.is("--secret")) {
      ok = options.read(parsed.secret);
    } else if (options.is("--timeout")) {
      ok = options.read(parsed.timeout_seconds, 1u, 3600u);
    } else if (options.is("--clients")) {
      ok = options.read(parsed.clients, 1u, 1024u);
    } else if (options.is("--light-nodes")) {
      ok = options.read(parsed.light_nodes, 0u, 1024u);
    } else if (options.is("--duration")) {
      ok = options.read(parsed.duration_seconds, 1u, 86'400u);
    } else if (options.is("--ops")) {
      ok = options.read(parsed.ops, std::uint64_t{1}, std::uint64_t{1'000'000'000'000});
    } else if (options.is("--mix")) {
      ok = options.read(parsed.mix_text);
      if (ok) {
        auto mix = KvMix::parse(parsed.mix_text);
        if (!mix) {
          return Err{
              fmt::format("--mix `{}`: expected GET:PUT or GET:PUT:CAS percentages adding up to 100", parsed.mix_text)};
        }
        parsed.mix = *mix;
      }
    } else if (options.is("--keys")) {
      ok = options.read(parsed.keys, std::uint64_t{1}, std::uint64_t{100'000'000});
    } else if (options.is("--prefix")) {
      ok = options.read(parsed.prefix);
    } else if (options.is("--zipf")) {
      ok = options.read(text);
      if (ok) {
        auto s = parse_positive("--zipf", text);
        if (!s) return Err{s.error()};
        parsed.zipf = *s;
      }
    } else if (options.arg() == "--sequential") {
      parsed.sequential = true;
    } else if (options.is("--value-size")) {
      ok = options.read(parsed.value_size, 0u, 16u << 20);
    } else if (options.arg() == "--stale") {
      parsed.stale = true;
    } else if (options.is("--rate")) {
      ok = options.read(text);
      if (ok) {
        auto rate = parse_positive("--rate", text);
        if (!rate) return Err{rate.error()};
        parsed.rate = *rate;
      }
    } else if (options.is("--seed")) {
      ok = options.read(parsed.seed, std::uint64_t{0}, UINT64_MAX);
    } else if (options.arg() == "--json") {
      parsed.json = true;
    } else {
      return Err{options.positional() ? fmt::format("unexpected argument `{}`", options.arg()) : options.unknown()};
    }
    if (!ok) return Err{options.error()};
  }
  if (parsed.zipf && parsed.sequential) return Err{std::string("--zipf and --sequential exclude each other")};
  if (parsed.duration_seconds && parsed.ops) return Err{std::string("--duration and --ops exclude each other")};
  if (!parsed.ops && !parsed.duration_seconds) parsed.duration_seconds = 10;
  if (parsed.light_nodes == 0 || parsed.light_nodes > parsed.clients) parsed.light_nodes = parsed.clients;
  if (parsed.node && std::uint32_t{*parsed.node} + parsed.light_nodes - 1 > 65535) {
    return Err{
        fmt::format("--node {} with {} light nodes: node numbers would pass 65535", *parsed.node, parsed.light_nodes)};
  }
  return parsed;
}

/// One worker: its client, its keys and kinds, and the versions it saw (for its cas).
class BenchWorker {
 public:
  BenchWorker(const BenchArgs& args, std::shared_ptr<kv::Client> client, unsigned worker)
      : args_(args),
        client_(std::move(client)),
        picker_(args.sequential ? KeyChoice::Sequential
                : args.zipf     ? KeyChoice::Zipf
                                : KeyChoice::Uniform,
                args.keys, args.zipf.value_or(1.0), args.seed, worker) {}

  loadgen::Outcome operator()(std::uint64_t op) {
    const KvOp kind = picker_.kind(args_.mix);
    const std::uint64_t index = picker_.key(op);
    std::string key = loadgen::key_name(args_.prefix, index);
    loadgen::Outcome outcome{static_cast<std::size_t>(kind)};
    const auto failed = [&](const pk::KvError& error) {
      outcome.error = std::string(pk::to_string(error.kind));
      if (error.kind == pk::KvErrorKind::VersionMismatch) versions_[index] = error.current_version;
      return outcome;
    };
    switch (kind) {
      case KvOp::Get: {
        auto found = client_->get(std::move(key), args_.stale);
        if (!found) return failed(found.error());
        versions_[index] = found->version;
        return outcome;
      }
      case KvOp::Put: {
        auto written = client_->put(std::move(key), loadgen::kv_value(op, args_.value_size));
        if (!written) return failed(written.error());
        versions_[index] = written->version;
        return outcome;
      }
      case KvOp::Cas: {
        const auto seen = versions_.find(index);
        auto written = client_->cas(std::move(key), loadgen::kv_value(op, args_.value_size),
                                    seen == versions_.end() ? 0 : seen->second);
        if (!written) return failed(written.error());
        versions_[index] = written->version;
        return outcome;
      }
    }
    return outcome;
  }

 private:
  const BenchArgs& args_;
  std::shared_ptr<kv::Client> client_;  // shared with the other clients of its light node
  loadgen::KeyPicker picker_;
  std::unordered_map<std::uint64_t, pk::Version> versions_;
};

std::string describe(const BenchArgs& args) {
  std::string keys = args.sequential ? "sequential"
                     : args.zipf     ? fmt::format("zipf {}", *args.zipf)
                                     : std::string("uniform");
  std::string load = args.rate ? fmt::format("fixed rate {} ops/s", *args.rate) : std::string("closed loop");
  std::string until =
      args.ops ? fmt::format("{} ops", *args.ops) : fmt::format("{} s", args.duration_seconds.value_or(0));
  return fmt::format("{} clients over {} light node{}, {} keys {}, {}-byte values, mix get:put:cas {}:{}:{}{}, {}, {}",
                     args.clients, args.light_nodes, args.light_nodes == 1 ? "" : "s", args.keys, keys, args.value_size,
                     args.mix.get, args.mix.put, args.mix.cas, args.stale ? " (stale gets)" : "", load, until);
}

std::string config_json(const BenchArgs& args) {
  return fmt::format(
      R"({{"clients": {}, "light_nodes": {}, "keys": {}, "key_choice": "{}", "zipf": {}, "value_size": {}, "mix": {{"get": {}, "put": {}, "cas": {}}}, "stale": {}, "rate": {}, "duration_s": {}, "ops": {}, "seed": {}}})",
      args.clients, args.light_nodes, args.keys,
      args.sequential ? "sequential"
      : args.zipf     ? "zipf"
                      : "uniform",
      args.zipf ? fmt::format("{}", *args.zipf) : "null", args.value_size, args.mix.get, args.mix.put, args.mix.cas,
      args.stale, args.rate ? fmt::format("{}", *args.rate) : "null",
      args.duration_seconds ? fmt::format("{}", *args.duration_seconds) : "null",
      args.ops ? fmt::format("{}", *args.ops) : "null", args.seed);
}

}  // namespace

int run_kv_bench_command(const std::vector<std::string_view>& args, std::FILE* out, std::FILE* err) {
  auto parsed = parse(args);
  if (!parsed) {
    fmt::print(err, "elfin kv bench: {}\n\n{}", parsed.error(), kBenchUsage);
    return 2;
  }
  if (parsed->help) {
    fmt::print(out, "{}", kBenchUsage);
    return 0;
  }
  const BenchArgs& bench = *parsed;
  kv::ClientOptions client_options;
  client_options.pods = bench.pods;
  if (client_options.pods.empty()) {
    auto pods = kv::cluster_addresses(bench.dir);
    if (!pods) {
      fmt::print(err, "elfin kv bench: {}\n", pods.error());
      return 1;
    }
    client_options.pods = *pods;
  }
  client_options.secret = bench.secret;
  client_options.timeout = std::chrono::seconds(bench.timeout_seconds);
  // Node numbers apart from the pods' (1..64) and, per process, from other benches' (by pid).
  const std::uint32_t first_node =
      bench.node ? *bench.node : 100 + static_cast<std::uint32_t>(::getpid()) % (65'000u - 100 - bench.light_nodes);

  loadgen::Workload workload;
  workload.kinds = {loadgen::kKvOpNames[0], loadgen::kKvOpNames[1], loadgen::kKvOpNames[2]};
  // Light node i is connected by the first of its clients to start (make_worker runs on the
  // runner's worker threads at once) and closed by the last to end.
  std::mutex nodes_mutex;
  std::vector<std::weak_ptr<kv::Client>> nodes(bench.light_nodes);
  const auto light_node = [&](unsigned i) -> std::shared_ptr<kv::Client> {
    std::lock_guard lock(nodes_mutex);
    if (auto client = nodes[i].lock()) return client;
    kv::ClientOptions options = client_options;
    options.node = static_cast<std::uint16_t>(first_node + i);
    // Light node i asks pod (i mod pods) first, so the light nodes spread over the pods' fronts.
    options.pods.clear();
    for (std::size_t p = 0; p < client_options.pods.size(); ++p) {
      const std::size_t pod = (i + p) % client_options.pods.size();
      options.pods.push_back(client_options.pods[pod]);
      options.pod_nodes.push_back(static_cast<std::uint16_t>(pod + 1));
    }
    auto client = kv::Client::connect(options);
    if (!client) {
      fmt::print(err, "elfin kv bench: light node {} (node {}): {}\n", i, options.node, client.error());
      return nullptr;
    }
    auto shared = std::make_shared<kv::Client>(std::move(*client));
    nodes[i] = shared;
    return shared;
  };
  workload.make_worker = [&](unsigned w) -> loadgen::Operation {
    auto client = light_node(w % bench.light_nodes);
    if (!client) return {};
    return [worker = std::make_shared<BenchWorker>(bench, std::move(client), w)](std::uint64_t op) {
      return (*worker)(op);
    };
  };
  loadgen::RunOptions run_options;
  run_options.workers = bench.clients;
  if (bench.duration_seconds) run_options.duration = std::chrono::seconds(*bench.duration_seconds);
  run_options.ops = bench.ops;
  run_options.rate = bench.rate;
  run_options.on_progress = [&](std::chrono::nanoseconds run_time, const loadgen::RunSummary& interval) {
    fmt::print(err, "{}\n", loadgen::progress_line(run_time, interval));
    std::fflush(err);
  };
  fmt::print(err, "elfin kv bench: {} against {}\n", describe(bench), fmt::join(client_options.pods, ","));
  std::fflush(err);
  const loadgen::RunResult result = loadgen::run(workload, run_options);
  if (result.setup_error) {
    fmt::print(err, "elfin kv bench: {}\n", *result.setup_error);
    return 1;
  }
  if (bench.json) {
    fmt::print(out,
               R"({{"bench": {}, "result": {}}})"
               "\n",
               config_json(bench), loadgen::to_json(result));
  } else {
    fmt::print(out, "{}\n{}", describe(bench), loadgen::final_report(result.total));
    for (std::size_t k = 0; k < result.per_kind.size(); ++k) {
      const loadgen::RunSummary& kind = result.per_kind[k];
      if (kind.ops == 0 && kind.errors.empty()) continue;
      const double seconds = std::chrono::duration<double>(kind.elapsed).count();
      std::uint64_t errors = 0;
      for (const auto& [name, n] : kind.errors) errors += n;
      fmt::print(out, "{:<10} {} ops, {:.0f} ops/s  p50 {}  p99 {}  p99.9 {}  errors {}\n", result.kinds[k], kind.ops,
                 seconds > 0 ? static_cast<double>(kind.ops) / seconds : 0.0,
                 loadgen::format_duration(kind.latency.percentile(0.5)),
                 loadgen::format_duration(kind.latency.percentile(0.99)),
                 loadgen::format_duration(kind.latency.percentile(0.999)), errors);
    }
  }
  std::fflush(out);
  return result.total.ops > 0 ? 0 : 1;
}

}  // namespace elfin::cli
