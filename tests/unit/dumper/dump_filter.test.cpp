#include <catch2/catch.hpp>

#include <elfin/dumper/dump_filter.hpp>

#include "dumper_test_support.hpp"

using namespace elfin::dumper;
using elfin::dumper::test::sample;

TEST_CASE("every filter criterion must match", "[dumper][filter]") {
  auto r = sample(1000, "counters", 1, 77, "Increment", Direction::Out);
  CHECK(DumpFilter{}.matches(r));

  DumpFilter f;
  f.trace_id = 77;
  CHECK(f.matches(r));
  f.trace_id = 78;
  CHECK_FALSE(f.matches(r));

  f = {};
  f.groups = {"other", "counters"};
  CHECK(f.matches(r));
  f.groups = {"other"};
  CHECK_FALSE(f.matches(r));

  f = {};
  f.messages = {"Increment"};
  CHECK(f.matches(r));
  f.messages = {"counter.Increment"};
  CHECK(f.matches(r));
  f.messages = {"pingpong.Increment"};
  CHECK_FALSE(f.matches(r));

  f = {};
  f.since_ns = 1000;
  f.until_ns = 1001;
  CHECK(f.matches(r));
  f.until_ns = 1000;  // exclusive
  CHECK_FALSE(f.matches(r));

  f = {};
  f.direction = Direction::In;
  CHECK_FALSE(f.matches(r));
  f.direction = Direction::Out;
  f.trace_id = 77;
  f.groups = {"counters"};
  CHECK(f.matches(r));
}

TEST_CASE("time bounds: RFC 3339, unix nanoseconds, or a duration ago", "[dumper][filter]") {
  const std::uint64_t now = 1'795'341'600'000'000'000;  // 2026-11-22T10:00:00Z
  CHECK(parse_time_bound("2026-11-22T10:00:00Z", 0).value() == now);
  CHECK(parse_time_bound("2026-11-22T10:00:00.5Z", 0).value() == now + 500'000'000);
  CHECK(parse_time_bound("2026-11-22T12:00:00+02:00", 0).value() == now);
  CHECK(parse_time_bound("2026-11-22 10:00:00z", 0).value() == now);
  CHECK(parse_time_bound("123", 0).value() == 123);
  CHECK(parse_time_bound("-10m", now).value() == now - 600'000'000'000);
  CHECK_THAT(parse_time_bound("yesterday", now).error().message(), Catch::Contains("expected RFC 3339"));
  CHECK_THAT(parse_time_bound("2026-13-01T00:00:00Z", now).error().message(), Catch::Contains("invalid time"));
  CHECK_THAT(parse_time_bound("-10 parsecs", now).error().message(), Catch::Contains("unknown unit"));
}

TEST_CASE("timestamps print as RFC 3339 UTC with milliseconds", "[dumper][filter]") {
  CHECK(format_timestamp(1'795'341'600'123'456'789) == "2026-11-22T10:00:00.123Z");
  CHECK(parse_time_bound(format_timestamp(1'795'341'600'123'000'000), 0).value() == 1'795'341'600'123'000'000);
}

TEST_CASE("trace ids and directions from the command line", "[dumper][filter]") {
  CHECK(parse_trace_id("7226239398017728512").value() == 7226239398017728512u);
  CHECK_THAT(parse_trace_id("0x12").error().message(), Catch::Contains("expected a decimal number"));
  CHECK(parse_direction("IN").value() == Direction::In);
  CHECK(parse_direction("out").value() == Direction::Out);
  CHECK_THAT(parse_direction("up").error().message(), Catch::Contains("expected \"in\" or \"out\""));
}
