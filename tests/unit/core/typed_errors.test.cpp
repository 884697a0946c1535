// Errors a user handles are typed values: a program branches on their kind and fields (file, line,
// column, key path) instead of parsing their text, and `message()` / `fmt::format("{}", e)` is the
// text a person reads.
#include <cerrno>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>

#include "test_protocol.hpp"
#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;

namespace {

struct Limits {
  std::chrono::milliseconds flush_every{500};
  ELFIN_CONFIG(flush_every);
};

struct WriterConfig {
  std::uint32_t step = 1;
  Limits limits;
  ELFIN_CONFIG(step, limits);
};

Task<> idle(Context<WriterConfig> ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

Topology writers() {
  Topology topology;
  topology.local("writers").mount(ActorGroup().config<WriterConfig>().exec(idle));
  return topology;
}

}  // namespace

TEST_CASE("errors: invalid TOML is a ConfigError of kind Syntax with its file, line and column", "[core][errors]") {
  auto parsed = AnyConfig::from_toml("[writers]\nstep = = 3\n", "node.toml");
  REQUIRE_FALSE(parsed.ok());
  const ConfigError& error = parsed.error();
  CHECK(error.kind() == ConfigError::Syntax);
  CHECK(error.source() == "node.toml");
  CHECK(error.line() == 2);
  CHECK(error.column() > 0);
  CHECK(error.key_path().empty());
  CHECK_THAT(error.message(), Catch::StartsWith(fmt::format("node.toml:2:{}: invalid TOML", error.column())));
  CHECK(fmt::format("{}", error) == error.message());
}

TEST_CASE("errors: a value that does not fit is a ConfigError with the key path and the key's line", "[core][errors]") {
  auto parsed = AnyConfig::from_toml("[writers]\nstep = 2\n\n[writers.limits]\nflush_every = 5\n", "node.toml");
  REQUIRE(parsed.ok());
  auto decoded = parsed->section("writers").decode<WriterConfig>();
  REQUIRE_FALSE(decoded.ok());
  const ConfigError& error = decoded.error();
  CHECK(error.kind() == ConfigError::Invalid);
  CHECK(error.key_path() == "limits.flush_every");
  CHECK(error.source() == "node.toml");
  CHECK(error.line() == 5);
  CHECK_THAT(error.message(), Catch::Contains("node.toml:5: limits.flush_every: expected a duration"));
}

TEST_CASE("errors: a config file that cannot be read is a ConfigError of kind Unreadable", "[core][errors]") {
  auto read = AnyConfig::from_file("/nonexistent/elfin/node.toml");
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().kind() == ConfigError::Unreadable);
  CHECK(read.error().source() == "/nonexistent/elfin/node.toml");
  CHECK_THAT(read.error().message(), Catch::Contains("cannot read the config file"));
}

TEST_CASE("errors: durations, sizes and log levels that do not parse are ConfigErrors of kind Invalid",
          "[core][errors]") {
  CHECK(parse_duration("5 parsecs").error().kind() == ConfigError::Invalid);
  CHECK_THAT(parse_size("lots").error().message(), Catch::StartsWith("invalid size \"lots\""));
  CHECK(parse_log_level("loud").error().kind() == ConfigError::Invalid);
}

TEST_CASE("errors: System::start gives a StartError listing each problem and the config document's error",
          "[core][errors]") {
  SECTION("a document that is not TOML") {
    StartOptions options = quick_options();
    options.config_toml = "[writers\n";
    options.config_source = "broken.toml";
    auto system = System::start(writers(), options);
    REQUIRE_FALSE(system.ok());
    REQUIRE(system.error().config_error().has_value());
    CHECK(system.error().config_error()->kind() == ConfigError::Syntax);
    CHECK(system.error().config_error()->line() == 1);
    REQUIRE(system.error().problems().size() == 1);
    CHECK(system.error().message() == "cannot start the system:\n  - " + system.error().problems()[0]);
  }
  SECTION("two values that do not fit") {
    StartOptions options = quick_options();
    options.config_toml = "[writers]\nstep = true\n[writers.limits]\nflush_every = 3\n";
    options.config_source = "node.toml";
    auto checked = System::check(writers(), options);
    REQUIRE_FALSE(checked.ok());
    CHECK_FALSE(checked.error().config_error().has_value());
    REQUIRE(checked.error().problems().size() == 2);
    CHECK_THAT(checked.error().problems()[0], Catch::StartsWith("node.toml:2: [writers] step:"));
    CHECK_THAT(checked.error().problems()[1], Catch::StartsWith("node.toml:4: [writers] limits.flush_every:"));
  }
}

TEST_CASE("errors: a runtime key that does not fit is reported at its own line without parsing any text",
          "[core][errors]") {
  // The group runtime locates the key from ConfigError::key_path(): the restart policy's `when`
  // and the log level's key, each on its own line, not the tables' header lines.
  StartOptions options = quick_options();
  options.config_toml = "[writers.system.restart_policy]\nmin_backoff = \"1s\"\nwhen = \"Sometimes\"\n";
  options.config_source = "node.toml";
  auto checked = System::check(writers(), options);
  REQUIRE_FALSE(checked.ok());
  CHECK_THAT(checked.error().message(), Catch::Contains("node.toml:3: [writers] system.restart_policy.when: expected"));
  options.config_toml = "[writers.system.logging]\n\nmax_level = \"loud\"\n";
  checked = System::check(writers(), options);
  REQUIRE_FALSE(checked.ok());
  CHECK_THAT(checked.error().message(),
             Catch::Contains("node.toml:3: [writers] system.logging.max_level: unknown log level \"loud\""));
}

TEST_CASE("errors: advance_time says why it cannot move the clock with a TimeError kind", "[core][errors]") {
  System real = start_or_fail(writers(), quick_options());
  auto moved = real.advance_time(std::chrono::seconds(1));
  REQUIRE_FALSE(moved.ok());
  CHECK(moved.error().kind() == TimeError::RealTime);
  real.terminate();
  real.join();

  StartOptions options = quick_options();
  options.virtual_time = true;
  System simulated = start_or_fail(writers(), options);
  auto backwards = simulated.advance_time(-std::chrono::seconds(1));
  REQUIRE_FALSE(backwards.ok());
  CHECK(backwards.error().kind() == TimeError::Backwards);
  CHECK(simulated.advance_time(std::chrono::seconds(1)).ok());
}

TEST_CASE("errors: a message that cannot be decoded is a MessageDecodeError naming it and why", "[core][errors]") {
  auto unknown = AnyMessage::decode("nope", "Nothing", AnyMessage(Increment{}).encode());
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().kind() == MessageDecodeError::UnknownMessage);
  CHECK(unknown.error().protocol() == "nope");
  CHECK(unknown.error().name() == "Nothing");

  auto malformed = AnyMessage::decode("test", "Increment", std::string("\xc1"));
  REQUIRE_FALSE(malformed.ok());
  CHECK(malformed.error().kind() == MessageDecodeError::Malformed);

  auto mismatch = AnyMessage::decode("test", "Increment", AnyMessage(other::Note{"hello"}).encode());
  REQUIRE_FALSE(mismatch.ok());
  CHECK(mismatch.error().kind() == MessageDecodeError::Mismatch);
  CHECK(mismatch.error().name() == "Increment");
  CHECK_THAT(fmt::format("{}", mismatch.error()), Catch::StartsWith("cannot decode test.Increment:"));
}
