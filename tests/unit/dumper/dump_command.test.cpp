#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <elfin/dumper/dump_command.hpp>

#include "dumper_test_support.hpp"

using namespace elfin::dumper;
using namespace elfin::dumper::test;

namespace {

struct Output {
  std::string out;
  std::string err;
  int code = -1;
};

// Runs the command with its streams going to files, and reads them back.
Output run(const TempDir& dir, const std::vector<std::string_view>& args) {
  auto parsed = parse_dump_command(args, 1'795'341'600'000'000'000);
  REQUIRE(parsed.ok());
  auto out_path = dir.file("out.txt");
  auto err_path = dir.file("err.txt");
  std::FILE* out = std::fopen(out_path.c_str(), "w");
  std::FILE* err = std::fopen(err_path.c_str(), "w");
  std::atomic<bool> stop{false};
  Output result;
  result.code = run_dump_command(*parsed, out, err, stop);
  std::fclose(out);
  std::fclose(err);
  auto slurp = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  return result;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("elfin dump --json prints the matching lines of all files in time order", "[dumper][command]") {
  TempDir dir;
  auto a = dir.file("a.dump");
  auto b = dir.file("b.dump");
  auto first = sample(10, "counters", 1, 7);
  auto other_trace = sample(15, "counters", 2, 8);
  auto second = sample(20, "pingers", 1, 7, "Ping", Direction::Out);
  append_to(a, line_of(other_trace) + line_of(first));
  append_to(b, line_of(second) + "garbage\n");

  auto result = run(dir, {"--json", "--trace", "7", a, b});
  CHECK(result.code == 0);
  CHECK(result.out == line_of(first) + line_of(second));
  CHECK_THAT(result.err, Catch::Contains(b + ":2: skipped malformed line: not valid JSON"));
  CHECK_THAT(result.err, Catch::EndsWith("4 lines read, 2 matched, 1 malformed\n"));
}

TEST_CASE("elfin dump prints an aligned table by default", "[dumper][command]") {
  TempDir dir;
  auto file = dir.file("a.dump");
  auto request = sample(1'795'341'600'123'000'000, "counters", 1, 7226239398017728512, "GetValue");
  request.key = "42";
  request.kind = MessageKind::Request;
  request.correlation_id = 12;
  append_to(file, line_of(request) + line_of(sample(1'795'341'600'200'000'000, "a-much-longer-group-name", 1, 1)));

  auto result = run(dir, {file, "--direction=in"});
  CHECK(result.code == 0);
  auto rows = lines(result.out);
  REQUIRE(rows.size() == 3);
  CHECK_THAT(rows[0], Catch::StartsWith("TIME                      DIR  NODE  GROUP/KEY"));
  CHECK_THAT(rows[1], Catch::StartsWith("2026-11-22T10:00:00.123Z  In   1     counters/42 "));
  CHECK_THAT(rows[1], Catch::Contains("req#12"));
  // Columns line up: the message and body columns start at the same offset in every row.
  auto column = rows[0].find("MESSAGE");
  CHECK(rows[1].find("counter.GetValue") == column);
  CHECK(rows[2].find("counter.Increment") == column);
  CHECK(rows[1].find(R"({"by":3})") == rows[0].find("BODY"));
}

TEST_CASE("elfin dump argument errors say what is wrong", "[dumper][command]") {
  auto error_of = [](const std::vector<std::string_view>& args) {
    return parse_dump_command(args, 0).error().message();
  };
  CHECK(error_of({}) == "no dump file given (see elfin dump --help)");
  CHECK(error_of({"--trace"}) == "--trace needs a value");
  CHECK(error_of({"--colour", "a.dump"}) == "unknown option --colour (see elfin dump --help)");
  CHECK(error_of({"--follow", "a.dump", "b.dump"}) == "--follow reads exactly one file");
  CHECK_THAT(error_of({"--since", "soon", "a.dump"}), Catch::StartsWith("--since: invalid time \"soon\""));
  CHECK(parse_dump_command({"--help"}, 0).value().help);
  // The option a value belongs to, for a program.
  CHECK(parse_dump_command({"--trace", "x", "a.dump"}, 0).error().option() == "--trace");
  CHECK(parse_dump_command({"--direction=up", "a.dump"}, 0).error().option() == "--direction");
  CHECK(parse_dump_command({}, 0).error().option().empty());
}

TEST_CASE("elfin dump reports a missing file and exits 1", "[dumper][command]") {
  TempDir dir;
  auto result = run(dir, {dir.file("missing.dump")});
  CHECK(result.code == 1);
  CHECK_THAT(result.err, Catch::Contains("missing.dump: cannot open: No such file or directory"));
}

TEST_CASE("elfin dump's summary follows the whole table when both go to one pipe", "[dumper][command]") {
  TempDir dir;
  auto file = dir.file("a.dump");
  std::string dump;
  for (int i = 0; i < 50; ++i) dump += line_of(sample(1'795'341'600'000'000'000 + i, "counters", 1, 7));
  append_to(file, dump);
  auto parsed = parse_dump_command({file}, 1'795'341'600'000'000'000);
  REQUIRE(parsed.ok());
  // `elfin dump ... 2>&1 | less`: stdout block-buffered, stderr unbuffered, one destination.
  auto both = dir.file("both.txt");
  std::FILE* out = std::fopen(both.c_str(), "a");
  std::FILE* err = std::fopen(both.c_str(), "a");
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  std::setvbuf(out, nullptr, _IOFBF, 1 << 20);
  std::setvbuf(err, nullptr, _IONBF, 0);
  std::atomic<bool> stop{false};
  CHECK(run_dump_command(*parsed, out, err, stop) == 0);
  std::fclose(err);
  std::fclose(out);
  std::ifstream in(both);
  std::stringstream text;
  text << in.rdbuf();
  auto all = lines(text.str());
  REQUIRE(all.size() == 52);  // header, 50 rows, summary
  CHECK(all.front().starts_with("TIME"));
  CHECK(all.back() == "50 lines read, 50 matched, 0 malformed");
}
