#include <catch2/catch.hpp>

#include <fstream>
#include <map>

#include <elfin/dumper/dump_file_writer.hpp>
#include <elfin/dumper/dump_format.hpp>
#include <elfin/dumping.hpp>
#include <elfin/envelope.hpp>

#include "dumper_test_support.hpp"

using namespace elfin;
using namespace elfin::dumper;

namespace {

struct Reading {
  std::string sensor;
  double value = 0;
  std::vector<std::int32_t> history;
  std::map<std::string, bool> flags;
  Hidden<std::string> token;
  ELFIN_MESSAGE(dumper_test, Reading, sensor, value, history, flags, token);
};

std::string pack(const auto& value) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, value);
  return std::string(buffer.data(), buffer.size());
}

const std::string kGroup = "sensors";

dumping::Dump dump_of(Reading reading) {
  dumping::Dump d;
  d.group = &kGroup;
  d.key = std::make_shared<const std::string>("7");
  d.sequence_no = 4;
  d.timestamp_ns = 1'795'341'600'123'456'789;
  d.trace_id = TraceId{7226239398017728512};
  d.thread_no = 2;
  d.direction = dumping::Direction::Out;
  d.kind = elfin::MessageKind::Regular;
  d.vtable = &vtable_of<Reading>();
  d.message = Envelope::make(std::move(reading), Addr{}, d.trace_id);
  return d;
}

}  // namespace

TEST_CASE("msgpack bodies become JSON", "[dumper][format]") {
  CHECK(msgpack_to_json(pack(std::map<std::string, int>{{"a", 1}, {"b", -2}})) == R"({"a":1,"b":-2})");
  CHECK(msgpack_to_json(pack(std::vector<double>{1.5, 0.25})) == "[1.5,0.25]");
  CHECK(msgpack_to_json(pack(msgpack::type::nil_t{})) == "null");
  CHECK(msgpack_to_json(pack(std::map<int, bool>{{1, true}})) == R"({"1":true})");  // keys become strings
  CHECK(msgpack_to_json(pack(std::string{"quote \" and \\ and \n"})) == R"("quote \" and \\ and \n")");
  CHECK(msgpack_to_json(pack(std::string{"bad \xff byte"})) == "\"bad \xEF\xBF\xBD byte\"");  // still valid UTF-8
  CHECK(msgpack_to_json(pack(std::numeric_limits<double>::infinity())) == "null");
  msgpack::sbuffer bin;
  msgpack::packer<msgpack::sbuffer>(bin).pack_bin(2).pack_bin_body("\x01\xff", 2);
  CHECK(msgpack_to_json(std::string(bin.data(), bin.size())) == "[1,255]");
  CHECK(msgpack_to_json("\xc1") == "null");  // not msgpack
}

TEST_CASE("a body over the size limit is cut at a character boundary and marked", "[dumper][format]") {
  CHECK(truncate_body(R"({"a":1})", 100) == R"({"a":1})");
  CHECK(truncate_body(R"({"text":"abcdefgh"})", 10) == R"("{\"text\":\"a…<truncated: 19 bytes>")");
  CHECK(truncate_body("\"ééé\"", 4) == "\"\\\"é…<truncated: 8 bytes>\"");  // é is two bytes: never split
}

TEST_CASE("a recorded dump becomes a record with the book's fields", "[dumper][format]") {
  Reading reading{"t1", 21.5, {1, -2}, {{"ok", true}}, std::string{"secret"}};
  auto record = to_record(dump_of(reading), 3, 64 * 1024);
  CHECK(record.ts == 1'795'341'600'123'456'789);
  CHECK(record.group == "sensors");
  CHECK(record.key == "7");
  CHECK(record.node_no == 3);
  CHECK(record.sequence_no == 4);
  CHECK(record.trace_id == 7226239398017728512);
  CHECK(record.thread == 2);
  CHECK(record.direction == Direction::Out);
  CHECK(record.message_name == "Reading");
  CHECK(record.protocol == "dumper_test");
  CHECK(record.kind == dumper::MessageKind::Regular);
  CHECK_FALSE(record.correlation_id.has_value());
  CHECK(record.body_json == R"({"sensor":"t1","value":21.5,"history":[1,-2],"flags":{"ok":true},"token":"<hidden>"})");
  auto parsed = parse_dump_line([&] {
    std::string line;
    append_json_line(record, line);
    line.pop_back();
    return line;
  }());
  REQUIRE(parsed.ok());
  CHECK(*parsed == record);
}

TEST_CASE("the file writer appends lines, reopens after rotation and reports errors", "[dumper][writer]") {
  dumper::test::TempDir dir;
  auto path = dir.file("app.dump");
  auto read_lines = [](const std::string& file) {
    std::vector<std::string> lines;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  };
  {
    DumpFileWriter writer(path, 1, 64 * 1024);
    std::vector<dumping::DumpChunk> batch(1);  // one recording thread's chunk
    auto later = dump_of(Reading{"later", 1, {}, {}, {}});
    later.timestamp_ns += 1000;
    batch[0].push_back(std::move(later));
    batch[0].push_back(dump_of(Reading{"earlier", 1, {}, {}, {}}));
    writer.submit(std::move(batch));
    writer.flush();
    auto lines = read_lines(path);
    REQUIRE(lines.size() == 2);
    CHECK(parse_dump_line(lines[0]).value().body_json.find("earlier") != std::string::npos);  // sorted by time
    CHECK(writer.stats().written == 2);

    std::filesystem::rename(path, path + ".1");  // logrotate moves the file away...
    writer.reopen();                             // ...and signals the dumper
    std::vector<dumping::DumpChunk> next(1);
    next[0].push_back(dump_of(Reading{"after rotation", 1, {}, {}, {}}));
    writer.submit(std::move(next));
    writer.flush();
    CHECK(read_lines(path + ".1").size() == 2);
    CHECK(read_lines(path).size() == 1);
    CHECK(writer.stats().reopened == 1);
  }
  {
    DumpFileWriter writer(dir.file("no-such-dir/app.dump"), 1, 64 * 1024);
    std::vector<dumping::DumpChunk> batch(1);  // one recording thread's chunk
    batch[0].push_back(dump_of(Reading{}));
    writer.submit(std::move(batch));
    writer.flush();
    auto stats = writer.stats();
    CHECK(stats.written == 0);
    CHECK(stats.lost == 1);
    CHECK_THAT(stats.last_error, Catch::Contains("no-such-dir/app.dump: cannot open the dump file: No such file"));
  }
}
