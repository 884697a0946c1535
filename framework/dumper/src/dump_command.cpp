#include <elfin/dumper/dump_command.hpp>

#include <fmt/format.h>

#include <elfin/dumper/dump_reader.hpp>
#include <elfin/dumper/dump_sort.hpp>
#include <elfin/dumper/dump_table.hpp>
#include <elfin/duration.hpp>

namespace elfin::dumper {

namespace {

constexpr std::string_view kUsage = R"(usage: elfin dump [options] FILE...

Reads dump files (NDJSON, one message per line), merges them, sorts by time and prints the records
that match every given filter. Files larger than memory are sorted within --memory.

options:
  --trace ID          only this trace id (decimal, as in logs)
  --group NAME        only this actor group (repeatable: any of them)
  --message PATTERN   only this message: Name or protocol.Name (repeatable)
  --since TIME        from TIME on: RFC 3339 (2026-11-22T10:00:00Z), unix ns, or -DURATION (-10m)
  --until TIME        before TIME
  --direction in|out  only received (in) or sent (out) messages
  --json              print matching lines as NDJSON instead of a table (pipe to jq)
  --follow            keep reading one growing file (reopens it after rotation)
  --memory SIZE       records held in memory while sorting (default 256MiB); more are sorted in
                      runs written to unlinked files in $TMPDIR (default /tmp) and merged
  -h, --help          this text
)";

constexpr std::uint64_t kMinMemory = std::uint64_t{1} << 20;

void write(std::FILE* stream, std::string_view text) { std::fwrite(text.data(), 1, text.size(), stream); }

}  // namespace

Result<DumpCommand, DumpArgumentError> parse_dump_command(const std::vector<std::string_view>& args,
                                                          std::uint64_t now_ns) {
  DumpCommand command;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    std::string_view value;
    bool has_inline_value = false;
    if (arg.starts_with("--") && arg.find('=') != std::string_view::npos) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
      has_inline_value = true;
    }
    auto take_value = [&]() -> Result<std::string_view, DumpArgumentError> {
      if (has_inline_value) return value;
      if (i + 1 >= args.size()) return Err{DumpArgumentError(fmt::format("{} needs a value", arg), std::string(arg))};
      return args[++i];
    };
    if (arg == "-h" || arg == "--help") {
      command.help = true;
    } else if (arg == "--json") {
      command.json = true;
    } else if (arg == "--follow" || arg == "-f") {
      command.follow = true;
    } else if (arg == "--trace" || arg == "--group" || arg == "--message" || arg == "--since" || arg == "--until" ||
               arg == "--direction" || arg == "--memory") {
      auto v = take_value();
      if (!v) return Err{v.error()};
      auto& f = command.filter;
      if (arg == "--group") {
        f.groups.emplace_back(*v);
      } else if (arg == "--message") {
        f.messages.emplace_back(*v);
      } else if (arg == "--trace") {
        auto id = parse_trace_id(*v);
        if (!id) return Err{DumpArgumentError(id.error().message(), std::string(arg))};
        f.trace_id = *id;
      } else if (arg == "--memory") {
        auto size = parse_size(*v);
        if (!size) return Err{DumpArgumentError(fmt::format("--memory: {}", size.error().message()), std::string(arg))};
        if (size->bytes < kMinMemory) {
          return Err{DumpArgumentError(fmt::format("--memory: at least 1MiB, got {}", *v), std::string(arg))};
        }
        command.memory_budget = size->bytes;
      } else if (arg == "--direction") {
        auto d = parse_direction(*v);
        if (!d) return Err{DumpArgumentError(d.error().message(), std::string(arg))};
        f.direction = *d;
      } else {
        auto t = parse_time_bound(*v, now_ns);
        if (!t) return Err{DumpArgumentError(fmt::format("{}: {}", arg, t.error().message()), std::string(arg))};
        (arg == "--since" ? f.since_ns : f.until_ns) = *t;
      }
    } else if (arg.starts_with("-") && arg != "-") {
      return Err{DumpArgumentError(fmt::format("unknown option {} (see elfin dump --help)", arg), std::string(arg))};
    } else {
      command.files.emplace_back(arg);
    }
  }
  if (command.help) return command;
  if (command.files.empty()) return Err{DumpArgumentError("no dump file given (see elfin dump --help)")};
  if (command.follow && command.files.size() != 1) {
    return Err{DumpArgumentError("--follow reads exactly one file", "--follow")};
  }
  return command;
}

int run_dump_command(const DumpCommand& command, std::FILE* out, std::FILE* err, const std::atomic<bool>& stop) {
  if (command.help) {
    write(out, kUsage);
    return 0;
  }
  ReadStats stats;
  auto report = [&](const MalformedLine& bad) {
    write(err, fmt::format("{}:{}: skipped malformed line: {}\n", bad.file, bad.line_no, bad.reason));
  };
  // Written after flushing what is buffered for `out`: when both go to one pipe (`2>&1 | less`),
  // the summary follows the table instead of landing in its middle.
  auto summary = [&] {
    std::fflush(out);
    write(err,
          fmt::format("{} lines read, {} matched, {} malformed\n", stats.lines_read, stats.matched, stats.malformed));
  };
  std::string text;
  if (command.follow) {
    DumpTable table;
    if (!command.json) {
      table.append_header(text);
      write(out, text);
    }
    auto result = follow_dump(
        command.files.front(), command.filter, stats, report,
        [&](const DumpRecord& record) {
          text.clear();
          command.json ? append_json_line(record, text) : table.append_row(record, text);
          write(out, text);
          std::fflush(out);
        },
        stop, FollowOptions{.on_reopen = [&](std::string_view why) {
          write(err, fmt::format("{}: file {}, reading it from the start\n", command.files.front(), why));
        }});
    summary();
    if (!result) write(err, fmt::format("error: {}\n", result.error()));
    return result ? 0 : 1;
  }
  auto table = DumpTable::headers_only();
  SortOptions sorting;
  sorting.memory_budget = command.memory_budget;
  sorting.on_match = [&](const DumpRecord& record) { table.widen(record); };
  auto sorted = sort_dumps(command.files, command.filter, stats, report, std::move(sorting));
  if (!sorted) {
    write(err, fmt::format("error: {}\n", sorted.error()));
    return 1;
  }
  if (!command.json) table.append_header(text);
  auto printed = sorted->for_each([&](const DumpRecord& record) {
    command.json ? append_json_line(record, text) : table.append_row(record, text);
    if (text.size() > std::size_t{64} * 1024) {
      write(out, text);
      text.clear();
    }
  });
  write(out, text);
  if (!printed) {
    summary();
    write(err, fmt::format("error: {}\n", printed.error()));
    return 1;
  }
  summary();
  return 0;
}

}  // namespace elfin::dumper
