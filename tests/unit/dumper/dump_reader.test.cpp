#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include <elfin/dumper/dump_reader.hpp>

#include "dumper_test_support.hpp"

using namespace elfin::dumper;
using namespace elfin::dumper::test;

TEST_CASE("several files merge into one timeline; malformed lines are reported and skipped", "[dumper][reader]") {
  TempDir dir;
  auto a = dir.file("node1.dump");
  auto b = dir.file("node2.dump");
  // Within a file, lines may be out of order (threads record into separate shards).
  append_to(a, line_of(sample(30, "counters", 3, 1)) + line_of(sample(10, "counters", 1, 1)));
  append_to(a, "this is not json\n\n");
  append_to(a, line_of(sample(50, "counters", 4, 2)));
  append_to(b, line_of(sample(20, "pingers", 1, 1)) + R"({"ts":40,"g":"x"})" + "\n");
  append_to(b, line_of(sample(40, "pingers", 2, 1)));

  std::vector<MalformedLine> bad;
  ReadStats stats;
  DumpFilter only_trace_1;
  only_trace_1.trace_id = 1;
  auto records = read_dumps({a, b}, only_trace_1, stats, [&](const MalformedLine& m) { bad.push_back(m); });
  REQUIRE(records.ok());

  std::vector<std::uint64_t> times;
  for (const auto& r : *records) times.push_back(r.ts);
  CHECK(times == std::vector<std::uint64_t>{10, 20, 30, 40});
  CHECK(stats.lines_read == 7);  // the blank line is not counted
  CHECK(stats.matched == 4);
  CHECK(stats.malformed == 2);
  REQUIRE(bad.size() == 2);
  CHECK(bad[0].file == a);
  CHECK(bad[0].line_no == 3);
  CHECK(bad[0].reason == "not valid JSON");
  CHECK(bad[1].file == b);
  CHECK(bad[1].line_no == 2);
  CHECK(bad[1].reason == R"(missing field "n")");
}

TEST_CASE("equal timestamps keep each group's sequence order", "[dumper][reader]") {
  std::vector<DumpRecord> records{sample(5, "b", 2, 0), sample(5, "a", 9, 0), sample(5, "b", 1, 0)};
  sort_by_time(records);
  CHECK(records[0].group == "a");
  CHECK(records[1].sequence_no == 1);
  CHECK(records[2].sequence_no == 2);
}

TEST_CASE("a file that cannot be opened is an error naming it", "[dumper][reader]") {
  ReadStats stats;
  auto records = read_dumps({"/nonexistent/elfin.dump"}, {}, stats, {});
  REQUIRE_FALSE(records.ok());
  CHECK_THAT(records.error().message(), Catch::StartsWith("/nonexistent/elfin.dump: cannot open"));
  CHECK(records.error().kind() == DumpReadError::Open);
  CHECK(records.error().file() == "/nonexistent/elfin.dump");
  CHECK(records.error().code() == std::errc::no_such_file_or_directory);
}

TEST_CASE("following a file sees appended lines, partial writes and rotation", "[dumper][reader][follow]") {
  TempDir dir;
  auto file = dir.file("app.dump");
  append_to(file, line_of(sample(1, "g", 1, 0)));

  std::mutex mu;
  std::vector<std::uint64_t> seen;
  std::vector<MalformedLine> bad;
  auto count = [&] {
    std::lock_guard lock(mu);
    return seen.size();
  };
  std::vector<std::string> reopened;
  std::atomic<bool> stop{false};
  ReadStats stats;
  bool follow_ok = false;  // Catch's assertions are for the test's own thread only
  std::thread follower([&] {
    auto result = follow_dump(
        file, {}, stats,
        [&](const MalformedLine& m) {
          std::lock_guard lock(mu);
          bad.push_back(m);
        },
        [&](const DumpRecord& r) {
          std::lock_guard lock(mu);
          seen.push_back(r.ts);
        },
        stop, FollowOptions{std::chrono::milliseconds{2}, true, [&](std::string_view why) {
                              std::lock_guard lock(mu);
                              reopened.emplace_back(why);
                            }});
    follow_ok = result.ok();
  });

  CHECK(eventually([&] { return count() == 1; }));
  // A line written in two parts is handed over once, when complete.
  auto line = line_of(sample(2, "g", 2, 0));
  append_to(file, line.substr(0, 10));
  append_to(file, line.substr(10));
  CHECK(eventually([&] { return count() == 2; }));

  // logrotate: the file is moved away and a new one starts; the old one's last line is not lost.
  append_to(file, line_of(sample(3, "g", 3, 0)));
  std::filesystem::rename(file, file + ".1");
  append_to(file, line_of(sample(4, "g", 4, 0)));
  CHECK(eventually([&] { return count() == 4; }));

  // copytruncate: the same file shrinks to nothing and grows again.
  {
    std::ofstream truncate(file, std::ios::trunc);
  }
  CHECK(eventually([&] {
    std::lock_guard lock(mu);
    return reopened.size() == 2;
  }));
  append_to(file, line_of(sample(5, "g", 5, 0)));
  CHECK(eventually([&] { return count() == 5; }));

  stop = true;
  follower.join();
  CHECK(follow_ok);
  std::lock_guard lock(mu);
  CHECK(seen == std::vector<std::uint64_t>{1, 2, 3, 4, 5});
  CHECK(reopened == std::vector<std::string>{"replaced", "truncated"});
  CHECK(bad.empty());
}
