#include "shard_manager_node.hpp"

#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace elfin::test {

ShardManagerNode start_shard_manager(const TempDir& dir, const std::function<std::string(std::uint16_t port)>& config,
                                     std::chrono::milliseconds timeout) {
  std::ifstream shipped(source_dir() / "services" / "shard_manager" / "manager.toml");
  const std::string topology_text{std::istreambuf_iterator<char>(shipped), std::istreambuf_iterator<char>()};
  if (topology_text.empty()) throw std::runtime_error("cannot read services/shard_manager/manager.toml");
  const auto topology = dir.write("manager.toml", topology_text);
  static const std::regex listening_or_taken("listening on tcp://127\\.0\\.0\\.1:[0-9]+|[Aa]ddress (already )?in use");
  std::string last_output;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const std::uint16_t port = free_tcp_port();
    dir.write("manager.config.toml", config(port));
    auto started = Process::start({elfin_binary(), "run", topology},
                                  {.log_dir = dir.path(), .name = fmt::format("manager.{}", attempt)});
    if (!started) throw std::runtime_error(started.error());
    if (!started->wait_for_output(listening_or_taken, timeout)) {
      throw std::runtime_error("the shard manager is not listening: " + started->output());
    }
    last_output = started->output();
    if (!address_in_use(last_output)) return ShardManagerNode{std::move(started.value()), port};
  }
  throw std::runtime_error("no free port for the shard manager: " + last_output);
}

}  // namespace elfin::test
