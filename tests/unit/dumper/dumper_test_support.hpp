// Helpers for the dumper's tests: sample records, and waiting on a condition with a deadline
// (temporary directories: ../temp_dir.hpp).
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <elfin/dumper/dump_record.hpp>

#include "../eventually.hpp"
#include "../temp_dir.hpp"

namespace elfin::dumper::test {

using elfin::test::TempDir;

inline DumpRecord sample(std::uint64_t ts, std::string group, std::uint64_t seq, std::uint64_t trace,
                         std::string name = "Increment", Direction direction = Direction::In) {
  DumpRecord r;
  r.ts = ts;
  r.group = std::move(group);
  r.node_no = 1;
  r.sequence_no = seq;
  r.trace_id = trace;
  r.thread = 3;
  r.direction = direction;
  r.message_name = std::move(name);
  r.protocol = "counter";
  r.body_json = R"({"by":3})";
  return r;
}

inline std::string line_of(const DumpRecord& record) {
  std::string out;
  append_json_line(record, out);
  return out;
}

inline void append_to(const std::string& file, const std::string& text) {
  std::ofstream out(file, std::ios::app | std::ios::binary);
  out << text;
}

using elfin::test::eventually;

}  // namespace elfin::dumper::test
