#include <elfin/dumper/dump_table.hpp>

#include <algorithm>

#include <fmt/format.h>

#include <elfin/dumper/dump_filter.hpp>

namespace elfin::dumper {

namespace {

constexpr std::size_t kMaxGroupWidth = 40;
constexpr std::size_t kMaxMessageWidth = 48;
constexpr std::size_t kMaxBodyWidth = 160;

std::string group_cell(const DumpRecord& r) { return r.key ? fmt::format("{}/{}", r.group, *r.key) : r.group; }
std::string message_cell(const DumpRecord& r) { return fmt::format("{}.{}", r.protocol, r.message_name); }

std::string kind_cell(const DumpRecord& r) {
  std::string_view kind = r.kind == MessageKind::Request ? "req" : r.kind == MessageKind::Response ? "resp" : "";
  if (r.correlation_id) return fmt::format("{}#{}", kind, *r.correlation_id);
  return std::string{kind};
}

// Cuts `text` to `width` code points, marking the cut; multibyte UTF-8 is never split.
std::string cut(std::string_view text, std::size_t width) {
  std::size_t points = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (points == width - 1 && i + 1 < text.size()) {
      // Is there more than one more code point? Then cut here.
      std::size_t rest = 0;
      for (std::size_t j = i; j < text.size(); ++j) rest += (static_cast<unsigned char>(text[j]) & 0xC0) != 0x80;
      if (rest > 1) return std::string{text.substr(0, i)} + "…";
    }
    ++points;
  }
  return std::string{text};
}

void append_padded(std::string& out, std::string_view cell, std::size_t width) {
  std::string text = cut(cell, width);
  std::size_t points = 0;
  for (char c : text) points += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  out += text;
  out.append(width > points ? width - points : 0, ' ');
  out += "  ";
}

}  // namespace

DumpTable::DumpTable() : group_width_(20), trace_width_(19), kind_width_(8), message_width_(28) {}

DumpTable DumpTable::fit(const std::vector<DumpRecord>& records) {
  DumpTable table = headers_only();
  for (const auto& r : records) table.widen(r);
  return table;
}

DumpTable DumpTable::headers_only() {
  DumpTable table;
  table.group_width_ = std::string_view{"GROUP/KEY"}.size();
  table.trace_width_ = std::string_view{"TRACE"}.size();
  table.kind_width_ = std::string_view{"KIND"}.size();
  table.message_width_ = std::string_view{"MESSAGE"}.size();
  return table;
}

void DumpTable::widen(const DumpRecord& r) {
  group_width_ = std::min(std::max(group_width_, group_cell(r).size()), kMaxGroupWidth);
  trace_width_ = std::max(trace_width_, fmt::formatted_size("{}", r.trace_id));
  kind_width_ = std::max(kind_width_, kind_cell(r).size());
  message_width_ = std::min(std::max(message_width_, message_cell(r).size()), kMaxMessageWidth);
}

void DumpTable::append_header(std::string& out) const {
  out += fmt::format("{:<24}  {:<3}  {:<4}  ", "TIME", "DIR", "NODE");
  append_padded(out, "GROUP/KEY", group_width_);
  append_padded(out, "TRACE", trace_width_);
  append_padded(out, "KIND", kind_width_);
  append_padded(out, "MESSAGE", message_width_);
  out += "BODY\n";
}

void DumpTable::append_row(const DumpRecord& r, std::string& out) const {
  out += fmt::format("{:<24}  {:<3}  {:<4}  ", format_timestamp(r.ts), to_string(r.direction), r.node_no);
  append_padded(out, group_cell(r), group_width_);
  append_padded(out, fmt::format("{}", r.trace_id), trace_width_);
  append_padded(out, kind_cell(r), kind_width_);
  append_padded(out, message_cell(r), message_width_);
  out += cut(r.body_json, kMaxBodyWidth);
  out += '\n';
}

}  // namespace elfin::dumper
