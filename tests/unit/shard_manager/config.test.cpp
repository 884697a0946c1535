// The manager's config: Shardcake's defaults, and checks that name the file and line.
#include <string>

#include <catch2/catch.hpp>

#include <elfin/actors/shard_manager/config.hpp>
#include <elfin/config.hpp>

using elfin::AnyConfig;
using elfin::actors::shard_manager::Config;

TEST_CASE("shard manager: the config defaults are Shardcake's", "[shard_manager]") {
  const Config config;
  CHECK(config.shard_function == "jump-xxh64/1:1024");
  CHECK(config.rebalance_interval == std::chrono::seconds(20));
  CHECK(config.rebalance_retry_interval == std::chrono::seconds(10));
  CHECK(config.ping_timeout == std::chrono::seconds(3));
  CHECK(config.persist_retry_interval == std::chrono::seconds(3));
  CHECK(config.health_check_interval == std::chrono::minutes(1));
  CHECK(config.rebalance_rate == 0.02);
  CHECK(config.storage.kind == "file");
  CHECK(elfin::actors::shard_manager::validate(config).empty());
}

TEST_CASE("shard manager: config errors name the file, the line and the key", "[shard_manager]") {
  auto section = AnyConfig::from_toml(R"(shard_function = "jump/1:1024"
rebalance_rate = 1.5
ping_timeout = "0s"
storage.kind = "redis"
storage.redis = "localhost"
)",
                                      "manager.toml");
  REQUIRE(section);
  auto config = section->decode<Config>();
  REQUIRE(config);
  CHECK(config->ping_timeout.count() == 0);
  const auto errors = elfin::actors::shard_manager::validate(*config, *section);
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].starts_with("manager.toml:1: shard_function: "));
  CHECK(errors[1].starts_with("manager.toml:3: ping_timeout: must be positive"));
  CHECK(errors[2].starts_with("manager.toml:2: rebalance_rate: must be in (0, 1]"));
  CHECK(errors[3].starts_with("manager.toml:5: storage.redis: expected host:port"));
}

TEST_CASE("shard manager: a config of the wrong type is refused with its line", "[shard_manager]") {
  auto section = AnyConfig::from_toml("rebalance_interval = 20\n", "manager.toml");
  REQUIRE(section);
  auto config = section->decode<Config>();
  REQUIRE_FALSE(config);
  CHECK(config.error().message().find("manager.toml:1") != std::string::npos);
}
