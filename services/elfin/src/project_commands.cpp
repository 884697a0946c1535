#include "project_commands.hpp"

#include <cstdio>

#include "kv_command.hpp"
#include "shard_command.hpp"
#include "wal_command.hpp"

namespace elfin::cli {

std::vector<Command> project_commands() {
  std::vector<Command> commands;
  commands.push_back({"shard", R"(  shard [--function jump|shardcake] [--shards N] KEY...
        Print the shard each key routes to. `{0} shard --help` lists the options.
)",
                      [](const std::vector<std::string_view>& args) { return shard_command(args, stdout, stderr); }});
  commands.push_back({"kv", R"(  kv cluster start|stop [--dir DIR]
        Start (or stop) a local 3-pod KV cluster on loopback, its files and data in DIR.
  kv put|get|delete|cas|scan ...
        Talk to a KV cluster as a light node. `{0} kv --help` lists the options.
)",
                      [](const std::vector<std::string_view>& args) { return run_kv_command(args, stdout, stderr); }});
  commands.push_back({"wal", R"(  wal inspect DIR
        List a WAL directory's segments, each partition's index range, checksums and any
        damage with file, byte offset and partition. Changes nothing.
  wal verify DIR
        Check a WAL directory as recovery would; exit code 1 if anything is damaged.
)",
                      [](const std::vector<std::string_view>& args) { return run_wal_command(args, stdout, stderr); }});
  return commands;
}

}  // namespace elfin::cli
