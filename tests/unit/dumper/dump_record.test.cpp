#include <catch2/catch.hpp>

#include <elfin/dumper/dump_record.hpp>

#include "dumper_test_support.hpp"

using namespace elfin::dumper;
using elfin::dumper::test::line_of;
using elfin::dumper::test::sample;

TEST_CASE("a dump line has exactly the book's fields, in order", "[dumper][format]") {
  auto r = sample(1795341600123456789, "counters", 17, 7226239398017728512);
  r.key = "42";
  r.kind = elfin::dumper::MessageKind::Request;
  r.correlation_id = 12;
  CHECK(line_of(r) ==
        R"({"ts":1795341600123456789,"g":"counters","k":"42","n":1,"s":17,"t":7226239398017728512,"th":3,)"
        R"("d":"In","mn":"Increment","mp":"counter","mk":"Request","m":{"by":3},"c":12})"
        "\n");
}

TEST_CASE("optional fields are left out, not written as null", "[dumper][format]") {
  auto line = line_of(sample(1, "g", 0, 5));
  CHECK(line.find("\"k\"") == std::string::npos);
  CHECK(line.find("\"cl\"") == std::string::npos);
  CHECK(line.find("\"c\"") == std::string::npos);
  CHECK(line.find("\"m\":{\"by\":3}") != std::string::npos);
}

TEST_CASE("dump lines read back into the same record", "[dumper][format]") {
  auto r = sample(1795341600123456789, "system.loggers", 9, 1, "Say \"hi\"\n\t\x01", Direction::Out);
  r.key = "käse/1";
  r.class_name = "audit";
  r.kind = elfin::dumper::MessageKind::Response;
  r.correlation_id = 3;
  r.body_json = R"({"list":[1,2.5,"x"],"nested":{"ok":true,"none":null}})";
  auto line = line_of(r);
  CHECK(line.find('\n') == line.size() - 1);  // escapes keep it one line
  auto parsed = parse_dump_line(line.substr(0, line.size() - 1));
  REQUIRE(parsed.ok());
  CHECK(*parsed == r);
}

TEST_CASE("a line that is not a dump record says why", "[dumper][format]") {
  auto error_of = [](std::string_view line) { return parse_dump_line(line).error().message(); };
  CHECK(error_of("{not json") == "not valid JSON");
  CHECK(parse_dump_line("[1,2]").error().kind() == DumpReadError::Malformed);
  CHECK(error_of("[1,2]") == "not a JSON object");
  CHECK(error_of(R"({"g":"x"})") == R"(missing field "ts")");
  CHECK(error_of(R"({"ts":"yesterday","g":"x"})") == R"(field "ts" must be an unsigned integer)");
  auto good = line_of(sample(1, "g", 0, 5));
  good.pop_back();
  auto with = [&](std::string_view from, std::string_view to) {
    auto text = good;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  CHECK(error_of(with(R"("d":"In")", R"("d":"Sideways")")) == R"(field "d" must be "In" or "Out")");
  CHECK(error_of(with(R"("mk":"Regular")", R"("mk":"Gossip")")) ==
        R"(field "mk" must be "Regular", "Request" or "Response")");
  CHECK(error_of(with(R"("n":1)", R"("n":70000)")) == R"(field "n" must be a smaller number)");
  CHECK(error_of(with(R"("g":"g")", R"("g":7)")) == R"(field "g" must be a string)");
}
