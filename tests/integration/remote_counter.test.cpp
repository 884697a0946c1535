// The remote-counter example across real processes: `elfin run` nodes on loopback joined by the
// network battery (system.network), with topology and config files generated into a TempDir with
// free ports. Two nodes (request/response), three nodes (unicast vs broadcast to a group on two
// nodes), kill -9 of the server mid-traffic and its restart, and a node with the wrong secret.
//
// Not registered until the network battery lands: the test cases carry the hidden tag `[.]`
// unless ELFIN_NETWORK_TESTS is defined (tests/integration/CMakeLists.txt), so they keep
// compiling meanwhile.
//
// What the tests read in the nodes' logs (stderr, no logger group):
// - the client's `counter hits = N` (an answer) and `request failed: ...` lines, and the server's
//   `hits = N (+1)` (an Add it counted) — examples/remote_counter;
// - the network battery's line once it listens: `listening on tcp://127.0.0.1:PORT` (listening()),
//   or one saying the address is in use (then the node is started again on fresh ports, see
//   free_tcp_port), and `refused` with `wrong secret` on both sides of a bad handshake.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <regex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "process.hpp"
#include "temp_dir.hpp"

#ifdef ELFIN_NETWORK_TESTS
#define NETWORK_TAGS "[integration][network]"
#else
#define NETWORK_TAGS "[.][integration][network]"
#endif

using namespace std::chrono_literals;
using elfin::test::ExitStatus;
using elfin::test::OutputMark;
using elfin::test::Process;
using elfin::test::TempDir;

namespace {

// Generous: two cores shared with other work, sanitizer builds, discovery every second.
constexpr auto kTimeout = 30s;

// How the network battery says it is ready (adjust here if its line reads otherwise).
const std::regex& listening() {
  static const std::regex pattern("listening on tcp://127\\.0\\.0\\.1:[0-9]+");
  return pattern;
}
const std::regex& listening_or_in_use() {
  static const std::regex pattern("listening on tcp://127\\.0\\.0\\.1:[0-9]+|[Aa]ddress (already )?in use");
  return pattern;
}

std::string server_topology(std::uint16_t no, const std::string& name) {
  return fmt::format(R"([node]
no = {}
name = "{}"
config = "{}.config.toml"

[[groups]]
name = "system.network"
blueprint = "elfin.network"

[[groups]]
name = "counters"
blueprint = "remote_counter.server"
)",
                     no, name, name);
}

std::string client_topology(const std::vector<std::uint16_t>& server_nodes, std::string_view routing) {
  return fmt::format(R"([node]
no = 1
name = "client"
config = "client.config.toml"

[[groups]]
name = "system.network"
blueprint = "elfin.network"

[[groups]]
name = "clients"
blueprint = "remote_counter.client"
entrypoint = true

[[remote]]
name = "counters"
nodes = [{}]
routing = "{}"

[[routes]]
from = "clients"
to = "counters"
messages = ["counter.*"]
)",
                     fmt::join(server_nodes, ", "), routing);
}

std::string network_config(std::uint16_t port, const std::vector<std::uint16_t>& peers, std::string_view secret,
                           std::string_view rest = {}) {
  std::vector<std::string> predefined;
  predefined.reserve(peers.size());
  for (auto peer : peers) predefined.push_back(fmt::format("\"tcp://127.0.0.1:{}\"", peer));
  return fmt::format(R"([system.network]
listen = ["tcp://127.0.0.1:{}"]
discovery.predefined = [{}]
discovery.attempt_interval = "1s"
secret = "{}"
{}
)",
                     port, fmt::join(predefined, ", "), secret, rest);
}

/// A node run by `elfin run <dir>/<name>.toml`, logging into the TempDir as `<name>...log`.
struct Node {
  std::string name;
  std::string topology;
  std::uint16_t port = 0;
  Process process;
};

/// Waits for `pattern` in the node's output (after `since`); on a timeout, prints the node's logs
/// so the failure says what the node did instead.
template <class Pattern>
bool wait_for(Node& node, const Pattern& pattern, OutputMark since = {}) {
  if (node.process.wait_for_output(pattern, kTimeout, since)) return true;
  fmt::print(stderr, "--- {} (pid {}) printed:\n{}\n---\n", node.name, node.process.pid(), node.process.output());
  return false;
}

/// Starts node `name` on a fresh port: writes `<name>.toml` and `<name>.config.toml` (the config
/// made by `config(port)`), runs it and waits until it listens. If the port was taken meanwhile
/// (the race free_tcp_port documents), tries again with another.
Node start_node(const TempDir& dir, const std::string& name, const std::string& topology,
                const std::function<std::string(std::uint16_t)>& config) {
  std::string last_output;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto port = elfin::test::free_tcp_port();
    dir.write(name + ".config.toml", config(port));
    const auto topology_path = dir.write(name + ".toml", topology);
    auto process = Process::start({elfin::test::demo_binary(), "run", topology_path},
                                  {.log_dir = dir.path(), .name = fmt::format("{}.{}", name, attempt)});
    if (!process) throw std::runtime_error(process.error());
    const bool ready = process->wait_for_output(listening_or_in_use(), kTimeout);
    last_output = process->output();
    if (ready && !elfin::test::address_in_use(last_output)) {
      return Node{name, topology_path, port, std::move(process.value())};
    }
    if (!elfin::test::address_in_use(last_output)) break;  // failed for another reason
  }
  throw std::runtime_error(fmt::format("node {} did not start listening:\n{}", name, last_output));
}

/// Starts a node again from its files, on the same port (after a kill -9), with logs of its own.
void restart(const TempDir& dir, Node& node, int generation) {
  auto process = Process::start({elfin::test::demo_binary(), "run", node.topology},
                                {.log_dir = dir.path(), .name = fmt::format("{}.restart{}", node.name, generation)});
  if (!process) throw std::runtime_error(process.error());
  node.process = std::move(process.value());
  if (!wait_for(node, listening())) throw std::runtime_error(fmt::format("node {} did not listen again", node.name));
}

Node start_server(const TempDir& dir, std::uint16_t no, std::string_view secret = "s3cret") {
  const std::string name = fmt::format("server{}", no);
  return start_node(dir, name, server_topology(no, name),
                    [&](std::uint16_t port) { return network_config(port, {}, secret); });
}

Node start_client(const TempDir& dir, const std::vector<const Node*>& servers, const std::vector<std::uint16_t>& nodes,
                  std::string_view routing, std::string_view secret = "s3cret") {
  std::vector<std::uint16_t> peers;
  peers.reserve(servers.size());
  for (const auto* server : servers) peers.push_back(server->port);
  return start_node(dir, "client", client_topology(nodes, routing), [&](std::uint16_t port) {
    return network_config(port, peers, secret, "\n[clients]\nrate = 20\nname = \"hits\"");
  });
}

/// Every value in the client's `counter hits = N` lines, in order.
std::vector<std::uint64_t> answers(const std::string& output) {
  static const std::regex line("counter hits = ([0-9]+)");
  std::vector<std::uint64_t> values;
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it) {
    values.push_back(std::stoull((*it)[1].str()));
  }
  return values;
}

std::size_t counted(const std::string& server_output) {
  static const std::regex line("hits = [0-9]+ \\(\\+1\\)");
  return static_cast<std::size_t>(
      std::distance(std::sregex_iterator(server_output.begin(), server_output.end(), line), std::sregex_iterator()));
}

/// SIGTERM, then the exit status (nullopt if it did not stop in time).
std::optional<ExitStatus> stop(Node& node) {
  std::ignore = node.process.signal(SIGTERM);
  return node.process.wait_exit(kTimeout);
}

}  // namespace

TEST_CASE("two nodes: the client's requests are answered by the server node", NETWORK_TAGS) {
  TempDir dir;
  auto server = start_server(dir, 2);
  auto client = start_client(dir, {&server}, {2}, "unicast");

  REQUIRE(wait_for(client, "counter hits = 5\n"));
  const auto values = answers(client.process.stderr_text());
  REQUIRE(values.size() >= 5);
  for (std::size_t i = 0; i < values.size(); ++i) CHECK(values[i] == i + 1);  // one server, every Add counted once
  CHECK(wait_for(server, "hits = 5 (+1)"));

  CHECK(stop(client) == ExitStatus::exited(0));
  CHECK(stop(server) == ExitStatus::exited(0));
}

TEST_CASE("three nodes: a group on two nodes gets each message once (unicast) or on both (broadcast)", NETWORK_TAGS) {
  TempDir dir;
  auto server2 = start_server(dir, 2);
  auto server3 = start_server(dir, 3);

  SECTION("broadcast: every Add reaches both servers") {
    auto client = start_client(dir, {&server2, &server3}, {2, 3}, "broadcast");
    CHECK(wait_for(server2, "hits = 5 (+1)"));
    CHECK(wait_for(server3, "hits = 5 (+1)"));
    CHECK(wait_for(client, "counter hits = 5\n"));
  }

  SECTION("unicast: only the first connected node in `nodes` order, the other once it is gone") {
    auto client = start_client(dir, {&server2, &server3}, {2, 3}, "unicast");
    // Once node 2 has answered it is connected, and from then on it gets every Add.
    REQUIRE(wait_for(server2, "hits = 1 (+1)"));
    REQUIRE(wait_for(client, "counter hits = "));  // the answer's line may come a moment after the server's
    const auto server2_mark = server2.process.mark();
    const auto server3_mark = server3.process.mark();
    const auto client_mark = client.process.mark();
    const auto answered = answers(client.process.stderr_text());
    REQUIRE(!answered.empty());
    REQUIRE(wait_for(client, fmt::format("counter hits = {}\n", answered.back() + 10), client_mark));
    CHECK(counted(server2.process.output(server2_mark)) >= 10);
    CHECK(counted(server3.process.output(server3_mark)) == 0);

    // Node 2 gone: node 3 is now the first connected one.
    REQUIRE(server2.process.kill());
    REQUIRE(server2.process.wait_exit(kTimeout) == ExitStatus::killed_by(SIGKILL));
    CHECK(wait_for(server3, "hits = 3 (+1)", server3_mark));
  }
}

TEST_CASE("kill -9 of the server mid-traffic: requests fail, and resume once it is back", NETWORK_TAGS) {
  TempDir dir;
  auto server = start_server(dir, 2);
  auto client = start_client(dir, {&server}, {2}, "unicast");
  REQUIRE(wait_for(client, "counter hits = 3\n"));

  REQUIRE(server.process.kill());
  REQUIRE(server.process.wait_exit(kTimeout) == ExitStatus::killed_by(SIGKILL));
  const auto down = client.process.mark();
  // The client does not hang on the dead peer: its requests fail, and it keeps sending.
  REQUIRE(wait_for(client, std::regex("request failed: .*\n[\\s\\S]*request failed: "), down));

  restart(dir, server, 1);
  const auto up = client.process.mark();
  // A new server process starts its counters from zero, so its answers start at 1 again.
  CHECK(wait_for(client, "counter hits = 1\n", up));
  CHECK(wait_for(client, "counter hits = 3\n", up));

  CHECK(stop(client) == ExitStatus::exited(0));
  CHECK(stop(server) == ExitStatus::exited(0));
}

TEST_CASE("a node with the wrong secret is refused, and both sides log why", NETWORK_TAGS) {
  TempDir dir;
  auto server = start_server(dir, 2, "the-right-one");
  auto client = start_client(dir, {&server}, {2}, "unicast", "a-wrong-one");

  const std::regex refused("refused[^\n]*wrong secret|wrong secret[^\n]*refused");
  CHECK(wait_for(server, refused));
  CHECK(wait_for(client, refused));
  CHECK(client.process.output().find("counter hits = ") == std::string::npos);
  CHECK(counted(server.process.output()) == 0);
}

TEST_CASE("a trace crosses nodes: elfin dump --trace over both nodes' dump files shows it", NETWORK_TAGS) {
  TempDir dir;
  const std::string dumper_group = "\n[[groups]]\nname = \"system.dumpers\"\nblueprint = \"elfin.dumper\"\n";
  auto dumper_config = [&](std::string_view node) {
    return fmt::format("\n[system.dumpers]\npath = \"{}/{}.dump\"\nwrite_interval = \"100ms\"\n", dir.path().string(),
                       node);
  };
  auto server = start_node(dir, "server2", server_topology(2, "server2") + dumper_group, [&](std::uint16_t port) {
    return network_config(port, {}, "s3cret", dumper_config("server2"));
  });
  auto client = start_node(dir, "client", client_topology({2}, "unicast") + dumper_group, [&](std::uint16_t port) {
    return network_config(port, {server.port}, "s3cret",
                          dumper_config("client") + "\n[clients]\nrate = 20\nname = \"hits\"");
  });
  REQUIRE(wait_for(client, "counter hits = 3\n"));
  CHECK(stop(client) == ExitStatus::exited(0));
  CHECK(stop(server) == ExitStatus::exited(0));

  // The answer's log line carries the request's trace id (a response continues its request's trace).
  std::smatch found;
  const std::string log = client.process.output();
  REQUIRE(std::regex_search(log, found, std::regex("\\[([0-9]+)\\] clients[^\n]*counter hits = 2\n")));
  const std::string trace = found[1].str();

  auto dump = Process::start({elfin::test::demo_binary(), "dump", "--json", "--trace", trace,
                              (dir.path() / "client.dump").string(), (dir.path() / "server2.dump").string()},
                             {.log_dir = dir.path(), .name = "dump"});
  REQUIRE(dump);
  REQUIRE(dump->wait_exit(kTimeout) == ExitStatus::exited(0));
  const std::string lines = dump->output();
  INFO(lines);
  // Node 1 sent the request, node 2's counter received it and answered: one trace, two files.
  CHECK(std::regex_search(lines, std::regex(R"("g":"clients"[^\n]*"mn":"Add")")));
  CHECK(std::regex_search(lines, std::regex(R"("g":"counters"[^\n]*"mn":"Add")")));
  CHECK(std::regex_search(lines, std::regex(R"("n":1)")));
  CHECK(std::regex_search(lines, std::regex(R"("n":2)")));
}
