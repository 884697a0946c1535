#include <catch2/catch.hpp>

#include <elfin/config.hpp>
#include <elfin/duration.hpp>

using namespace std::chrono_literals;

TEST_CASE("durations parse from the units people write", "[config][duration]") {
  CHECK(elfin::parse_duration("500ms").value() == 500ms);
  CHECK(elfin::parse_duration("5s").value() == 5s);
  CHECK(elfin::parse_duration("1m 30s").value() == 90s);
  CHECK(elfin::parse_duration("1.5s").value() == 1500ms);
  CHECK(elfin::parse_duration("2h").value() == 2h);
  CHECK(elfin::parse_duration("1d").value() == 24h);
  CHECK(elfin::parse_duration("10us").value() == 10us);
  CHECK(elfin::parse_duration("3 min").value() == 3min);
}

TEST_CASE("bad durations say what is wrong", "[config][duration]") {
  CHECK_THAT(elfin::parse_duration("").error().message(), Catch::Contains("empty"));
  CHECK_THAT(elfin::parse_duration("5").error().message(), Catch::Contains("a unit is required"));
  CHECK_THAT(elfin::parse_duration("5 parsecs").error().message(), Catch::Contains("unknown unit \"parsecs\""));
  CHECK_THAT(elfin::parse_duration("s").error().message(), Catch::Contains("expected a number"));
}

TEST_CASE("durations format back to text that parses to the same value", "[config][duration]") {
  CHECK(elfin::format_duration(0s) == "0s");
  CHECK(elfin::format_duration(90s) == "1m 30s");
  CHECK(elfin::format_duration(1500ms) == "1s 500ms");
  for (std::chrono::nanoseconds d : {1ns, 999'000'000ns, 90'001'000'000'000ns, 36'000'000'000ns})
    CHECK(elfin::parse_duration(elfin::format_duration(d)).value() == d);
}

TEST_CASE("sizes parse with decimal and binary units", "[config][duration]") {
  CHECK(elfin::parse_size("4096").value().bytes == 4096);
  CHECK(elfin::parse_size("64KiB").value().bytes == 64 * 1024);
  CHECK(elfin::parse_size("1MB").value().bytes == 1'000'000);
  CHECK(elfin::parse_size("1.5 GiB").value().bytes == 1610612736);
  CHECK_THAT(elfin::parse_size("12 parsecs").error().message(), Catch::Contains("unknown unit"));
  CHECK_THAT(elfin::parse_size("12KiB x").error().message(), Catch::Contains("unexpected text"));
}

namespace {
struct TimingConfig {
  std::chrono::milliseconds flush_every{500};
  elfin::ByteSize max_frame{1024};
  ELFIN_CONFIG(flush_every, max_frame);
};
}  // namespace

TEST_CASE("config structs decode durations and sizes from TOML", "[config][duration]") {
  auto config = elfin::AnyConfig::from_toml("flush_every = \"2s\"\nmax_frame = \"1MiB\"\n").value();
  auto decoded = config.decode<TimingConfig>().value();
  CHECK(decoded.flush_every == 2s);
  CHECK(decoded.max_frame.bytes == 1024 * 1024);

  auto defaults = elfin::AnyConfig{}.decode<TimingConfig>().value();
  CHECK(defaults.flush_every == 500ms);

  auto bad = elfin::AnyConfig::from_toml("flush_every = 5\n").value().decode<TimingConfig>();
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().message(), Catch::Contains("expected a duration string"));
}
