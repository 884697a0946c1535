// book_check: stands in for `mdbook build` and `mdbook test` on the elfin guide.
//
// mdbook is not installable on every machine that builds elfin, so this program checks the
// things that would otherwise only break once the book is published:
//   * book.toml and SUMMARY.md exist, every SUMMARY entry names an existing page, and there are
//     no drafts (`[Title]()`): we don't ship them;
//   * every relative link and image in every page resolves, and a `page.md#anchor` anchor
//     matches one of the ids mdBook gives the headings of `page.md`;
//   * no page under src/ is missing from SUMMARY.md (mdBook would silently leave it out);
//   * every `{{#include path}}` / `{{#include path:anchor}}` names a file that exists and, for an
//     anchor, has its `ANCHOR: anchor` and `ANCHOR_END: anchor` lines (mdBook's include syntax);
//   * every ```cpp block whose info string doesn't say `ignore` is a complete translation unit
//     that compiles with the flags a consumer of the library gets. A block that includes a file
//     is not compiled here: the file is a source the build compiles (and its tests run).
//
// It reads the CommonMark subset the guide uses line by line; it is not a Markdown parser.
// Indented (4-space) code blocks, links in raw HTML and link destinations that span lines are
// not understood.
//
// Usage: book_check --book <dir> [--compiler <c++> --work-dir <dir> [--flags-file <file>]]
//                   [--jobs <n>] [--pch-include <header>]
// The flags file holds one compiler argument per line, so arguments may contain spaces.
// --pch-include (clang only) precompiles `#include <header>` once and hands the result to every
// snippet that includes that header itself: most of a snippet's compile time is the library's
// headers, and a snippet that does not include the header is compiled without it, so a missing
// include still fails.
// Exit status: 0 when the book is fine, 1 when problems were found, 2 on a usage error.

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

constexpr auto npos = std::string_view::npos;

// <cctype> functions are undefined for negative chars, which is what UTF-8 bytes are.
bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::size_t indentation(std::string_view line) {
  const auto first = line.find_first_not_of(" \t");
  return first == npos ? line.size() : first;
}

std::vector<std::string> split_words(std::string_view s, std::string_view separators) {
  std::vector<std::string> words;
  for (std::size_t start = 0; start < s.size();) {
    const auto end = std::min(s.find_first_of(separators, start), s.size());
    if (end > start) words.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return lines;
}

// Link destinations are URLs: `my%20page.md` names `my page.md`.
std::string percent_decode(std::string_view s) {
  const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) && hex(s[i + 2])) {
      out += static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Anything with a URL scheme (https:, mailto:, ...) or a network path lies outside the book.
bool is_external(std::string_view destination) {
  if (destination.starts_with("//")) return true;
  const auto scheme = destination.substr(0, destination.find(':'));
  if (scheme.empty() || scheme.size() == destination.size() || !std::isalpha(static_cast<unsigned char>(scheme[0])))
    return false;
  return std::all_of(scheme.begin(), scheme.end(),
                     [](char c) { return is_alnum(c) || c == '+' || c == '-' || c == '.'; });
}

std::string shell_quote(std::string_view s) {
  std::string quoted = "'";
  for (const char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string plural(std::size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

// ---------------------------------------------------------------------------------------------
// Markdown

struct Link {
  int line = 0;
  std::string text;  // empty when the link text started on an earlier line
  std::string destination;
};

struct CodeBlock {
  int fence_line = 0;
  std::string info;
  std::string body;
};

// `{{#include path}}`, `{{#include path:anchor}}` or `{{#include path:from:to}}` (line numbers).
struct Include {
  int line = 0;
  std::string path;
  std::string anchor;  // empty, or a name (not line numbers)
};

struct Page {
  std::vector<Link> links;
  std::vector<Include> includes;
  std::set<std::string> anchors;
  std::vector<CodeBlock> code_blocks;
  int unclosed_fence_line = 0;
};

struct Fence {
  char marker;
  std::size_t length;
  std::size_t indent;
  std::string info;
};

// Any indentation is accepted because fences nested in list items are indented.
std::optional<Fence> opening_fence(std::string_view line) {
  const auto indent = indentation(line);
  if (indent == line.size() || (line[indent] != '`' && line[indent] != '~')) return std::nullopt;
  const char marker = line[indent];
  const auto end = std::min(line.find_first_not_of(marker, indent), line.size());
  const auto info = trim(line.substr(end));
  // "```x``` is code" starts a paragraph with a code span, not a fence.
  if (end - indent < 3 || (marker == '`' && info.find('`') != npos)) return std::nullopt;
  return Fence{marker, end - indent, indent, std::string(info)};
}

bool closes(const Fence& fence, std::string_view line) {
  const auto t = trim(line);
  return t.size() >= fence.length && t.find_first_not_of(fence.marker) == npos;
}

std::string_view strip_indentation(std::string_view line, std::size_t indent) {
  return line.substr(std::min({indent, indentation(line), line.size()}));
}

// Code spans are blanked out (keeping columns) so that `[a](b)` inside them isn't taken for a link.
std::string blank_code_spans(std::string_view line) {
  std::string out(line);
  const auto run_end = [&](std::size_t at) { return std::min(out.find_first_not_of('`', at), out.size()); };
  for (std::size_t open = out.find('`'); open != npos;) {
    const auto length = run_end(open) - open;
    auto close = out.find('`', open + length);
    while (close != npos && run_end(close) - close != length) close = out.find('`', run_end(close));
    if (close == npos) {  // an unmatched backtick run is literal text
      open = out.find('`', open + length);
      continue;
    }
    out.replace(open, close + length - open, close + length - open, ' ');
    open = out.find('`', close + length);
  }
  return out;
}

void blank_html_comments(std::string& line) {
  for (auto open = line.find("<!--"); open != npos; open = line.find("<!--", open)) {
    const auto close = line.find("-->", open + 4);
    const auto end = close == npos ? line.size() : close + 3;
    line.replace(open, end - open, end - open, ' ');
  }
}

// Reads the destination of `[text](destination "title")` starting just after the `(`.
// Returns the destination and the position of the closing `)`.
std::pair<std::string, std::size_t> link_destination(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  std::string destination;
  if (i < s.size() && s[i] == '<') {
    const auto close = s.find('>', i);
    if (close == npos) return {"", s.size()};
    destination = s.substr(i + 1, close - i - 1);
    i = close + 1;
  } else {
    for (int depth = 0; i < s.size() && !is_space(s[i]); ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        destination += s[++i];
        continue;
      }
      if (s[i] == '(') ++depth;
      if (s[i] == ')') {
        if (depth == 0) break;
        --depth;
      }
      destination += s[i];
    }
  }
  return {destination, std::min(s.find(')', i), s.size())};
}

void inline_links(std::string_view s, int line, std::vector<Link>& links) {
  std::vector<std::size_t> open_brackets;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '[') {
      open_brackets.push_back(i);
    } else if (s[i] == ']') {
      std::string text;
      if (!open_brackets.empty()) {
        text = s.substr(open_brackets.back() + 1, i - open_brackets.back() - 1);
        open_brackets.pop_back();
      }
      if (i + 1 < s.size() && s[i + 1] == '(') {
        auto [destination, close] = link_destination(s, i + 2);
        links.push_back({line, std::move(text), std::move(destination)});
        i = close;
      }
    }
  }
}

// `[label]: destination` — but not a footnote, `[^label]: text`.
std::optional<Link> reference_definition(std::string_view line, int line_number) {
  const auto indent = indentation(line);
  if (indent > 3 || indent == line.size() || line[indent] != '[') return std::nullopt;
  const auto close = line.find("]:", indent);
  if (close == npos || close == indent + 1 || line[indent + 1] == '^') return std::nullopt;
  const auto rest = trim(line.substr(close + 2));
  std::string destination;
  if (rest.starts_with('<'))
    destination = rest.substr(1, std::min(rest.find('>'), rest.size()) - 1);
  else
    destination = rest.substr(0, std::min(rest.find_first_of(" \t"), rest.size()));
  return Link{line_number, std::string(line.substr(indent + 1, close - indent - 1)), destination};
}

// Raw `<a id="...">` elements are the usual way to put an anchor where there is no heading.
void html_ids(std::string_view line, std::set<std::string>& anchors) {
  for (auto at = line.find(" id=\""); at != npos; at = line.find(" id=\"", at + 1)) {
    const auto start = at + 5;
    if (const auto end = line.find('"', start); end != npos) anchors.emplace(line.substr(start, end - start));
  }
}

std::optional<std::string> atx_heading(std::string_view line) {
  const auto indent = indentation(line);
  if (indent > 3 || indent == line.size() || line[indent] != '#') return std::nullopt;
  const auto after_hashes = std::min(line.find_first_not_of('#', indent), line.size());
  if (after_hashes - indent > 6 || (after_hashes < line.size() && !is_space(line[after_hashes]))) return std::nullopt;
  auto text = trim(line.substr(after_hashes));
  // An optional closing sequence of #s is not part of the text ("## Title ##").
  const auto last = text.find_last_not_of('#');
  if (last == npos)
    text = {};
  else if (last + 1 < text.size() && is_space(text[last]))
    text = trim(text.substr(0, last));
  return std::string(text);
}

bool is_setext_underline(std::string_view line) {
  const auto t = trim(line);
  return indentation(line) <= 3 && !t.empty() && (t.find_first_not_of('=') == npos || t.find_first_not_of('-') == npos);
}

// Whether a line could be the text of a setext heading if the next line underlines it; lines
// that belong to other blocks can't be (a `---` after a list item is a thematic break).
bool is_paragraph_text(std::string_view line) {
  const auto t = trim(line);
  if (t.empty() || indentation(line) > 3) return false;
  if (t.starts_with('#') || t.starts_with('>') || t.starts_with('|') || t.starts_with('<')) return false;
  if (t.size() >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && is_space(t[1])) return false;
  const auto digits = std::min(t.find_first_not_of("0123456789"), t.size());
  return digits == 0 || digits == t.size() || (t[digits] != '.' && t[digits] != ')');
}

bool is_unicode_whitespace(char32_t c) {
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// Approximates Rust's char::is_alphanumeric, which mdBook uses, for non-ASCII characters: the
// punctuation and symbol blocks people actually put in headings (dashes, quotes, arrows, maths,
// emoji) are dropped and everything else counts as a letter.
bool is_unicode_alphanumeric(char32_t c) {
  if (c <= 0xBF)
    return c == 0xAA || c == 0xB2 || c == 0xB3 || c == 0xB5 || c == 0xB9 || c == 0xBA || (c >= 0xBC && c <= 0xBE);
  if (c == 0xD7 || c == 0xF7) return false;
  if (c >= 0x2000 && c <= 0x2BFF) return false;
  if (c >= 0x3000 && c <= 0x303F) return false;
  if (c >= 0xFE30 && c <= 0xFE4F) return false;
  if (c >= 0xFF00 && c <= 0xFF0F) return false;
  return c < 0x1F000;
}

// Decodes the UTF-8 sequence at s[i]; returns the code point and its length in bytes.
std::pair<char32_t, std::size_t> decode_utf8(std::string_view s, std::size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (length == 1 || i + length > s.size()) return {lead, 1};
  char32_t c = lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return {c, length};
}

// mdBook's normalize_id: keep alphanumerics, '-' and '_' (ASCII lowercased), turn each
// whitespace character into '-', drop everything else.
std::string normalize_id(std::string_view text) {
  std::string id;
  for (std::size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      const char c = text[i++];
      if (is_alnum(c) || c == '-' || c == '_')
        id += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      else if (std::isspace(static_cast<unsigned char>(c)))
        id += '-';
      continue;
    }
    const auto [c, length] = decode_utf8(text, i);
    if (is_unicode_whitespace(c))
      id += '-';
    else if (is_unicode_alphanumeric(c))
      id += text.substr(i, length);
    i += length;
  }
  return id;
}

// The heading's text as mdBook sees it after rendering: code spans keep their content, links
// keep their text, and emphasis underscores disappear (but snake_case keeps its underscores).
// The remaining Markdown punctuation is dropped by normalize_id anyway.
std::string rendered_text(std::string_view s) {
  std::string text;
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '`') {
      const auto length = std::min(s.find_first_not_of('`', i), s.size()) - i;
      const auto close = s.find(std::string(length, '`'), i + length);
      if (close != npos) {
        text += s.substr(i + length, close - i - length);
        i = close + length;
      } else {
        text.append(length, '`');
        i += length;
      }
    } else if (c == '\\' && i + 1 < s.size()) {
      text += s[i + 1];
      i += 2;
    } else if (c == ']' && i + 1 < s.size() && s[i + 1] == '(') {
      i = link_destination(s, i + 2).second + 1;
    } else if (c == '_') {
      const auto end = std::min(s.find_first_not_of('_', i), s.size());
      if (i > 0 && is_alnum(s[i - 1]) && end < s.size() && is_alnum(s[end])) text += s.substr(i, end - i);
      i = end;
    } else {
      text += c;
      ++i;
    }
  }
  return text;
}

// mdBook takes an explicit `{#id}` attribute if there is one, else derives the id from the text.
std::string heading_id(std::string_view text) {
  if (text.ends_with('}')) {
    if (const auto open = text.rfind('{'); open != npos) {
      for (const auto& attribute : split_words(text.substr(open + 1, text.size() - open - 2), " \t"))
        if (attribute.size() > 1 && attribute[0] == '#') return attribute.substr(1);
      text = trim(text.substr(0, open));
    }
  }
  return normalize_id(rendered_text(text));
}

void include_directives(std::string_view line, int number, std::vector<Include>& includes) {
  constexpr std::string_view kOpen = "{{#include ";
  for (auto at = line.find(kOpen); at != npos; at = line.find(kOpen, at + 1)) {
    const auto close = line.find("}}", at);
    if (close == npos) return;
    const auto argument = trim(line.substr(at + kOpen.size(), close - at - kOpen.size()));
    Include include{number, std::string(argument), {}};
    if (const auto colon = argument.find(':'); colon != npos) {
      include.path = argument.substr(0, colon);
      const auto rest = argument.substr(colon + 1);
      if (!rest.empty() && rest.find_first_not_of("0123456789:") != npos) include.anchor = rest;
    }
    includes.push_back(std::move(include));
  }
}

Page scan_page(const std::vector<std::string>& lines) {
  Page page;
  std::optional<Fence> fence;
  CodeBlock block;
  bool in_html_comment = false;
  std::string previous_text;  // the previous line, if a setext underline could make it a heading
  std::map<std::string, int> id_uses;

  // Repeated headings get numbered ids, as in mdBook: "example", "example-1", ...
  const auto add_heading = [&](std::string_view text) {
    const auto id = heading_id(text);
    const int uses = id_uses[id]++;
    page.anchors.insert(uses == 0 ? id : id + "-" + std::to_string(uses));
  };

  for (std::size_t index = 0; index < lines.size(); ++index) {
    const std::string_view line = lines[index];
    const int number = static_cast<int>(index) + 1;
    std::string text;
    std::swap(text, previous_text);
    include_directives(line, number, page.includes);

    if (fence) {
      if (closes(*fence, line)) {
        page.code_blocks.push_back(std::move(block));
        fence.reset();
      } else {
        block.body += strip_indentation(line, fence->indent);
        block.body += '\n';
      }
    } else if (in_html_comment) {
      in_html_comment = line.find("-->") == npos;
    } else if (const auto opening = opening_fence(line)) {
      fence = opening;
      block = {number, opening->info, {}};
    } else if (trim(line).starts_with("<!--")) {  // an HTML block: no Markdown inside
      in_html_comment = line.find("-->", line.find("<!--") + 4) == npos;
    } else if (auto definition = reference_definition(line, number)) {
      page.links.push_back(std::move(*definition));
    } else if (!text.empty() && is_setext_underline(line)) {
      add_heading(text);
    } else {
      if (const auto heading = atx_heading(line)) add_heading(*heading);
      auto prose = blank_code_spans(line);
      blank_html_comments(prose);
      inline_links(prose, number, page.links);
      html_ids(prose, page.anchors);
      if (is_paragraph_text(line)) previous_text = trim(line);
    }
  }
  if (fence) page.unclosed_fence_line = block.fence_line;
  return page;
}

// ---------------------------------------------------------------------------------------------
// The checker

struct Options {
  fs::path book;
  std::string compiler;  // empty: don't compile snippets
  fs::path flags_file;
  fs::path work_dir;
  unsigned jobs = std::max(1U, std::thread::hardware_concurrency());
  std::string pch_include;  // a header such as elfin/elfin.hpp; empty: no precompiled header
};

struct Problem {
  std::string file;
  int line = 0;  // 0 when the problem concerns the file as a whole
  std::string message;
};

struct Snippet {
  fs::path page;
  int fence_line = 0;
  fs::path source;
  bool includes_pch_header = false;
};

struct CommandResult {
  bool succeeded = false;
  std::string output;
};

CommandResult run_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {false, "could not run: " + command};
  CommandResult result;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.succeeded = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return result;
}

// mdBook lets book.toml move the sources elsewhere (`[book] src = "..."`).
fs::path source_dir_name(const fs::path& book_toml) {
  bool in_book_table = false;
  for (const auto& raw : read_lines(book_toml)) {
    const auto line = trim(raw);
    if (line.starts_with('[')) {
      in_book_table = line == "[book]";
      continue;
    }
    const auto equals = line.find('=');
    if (!in_book_table || equals == npos || trim(line.substr(0, equals)) != "src") continue;
    const auto value = trim(line.substr(equals + 1));
    if (value.empty() || (value[0] != '"' && value[0] != '\'')) continue;
    if (const auto close = value.find(value[0], 1); close != npos) return std::string(value.substr(1, close - 1));
  }
  return "src";
}

bool is_compiled_cpp(std::string_view info) {
  const auto words = split_words(info, ", \t");
  return !words.empty() && words[0] == "cpp" && std::find(words.begin(), words.end(), "ignore") == words.end();
}

// The compiler reports positions in the snippet file; readers want them in the page.
// Snippet line k is page line fence_line + k because the snippet starts after the fence.
// Besides "snippet.cpp:5:12: error: ...", GCC numbers the source lines it quotes ("    5 | code"),
// and those are mapped too when the quote follows a diagnostic about the snippet.
std::string map_to_page(std::string_view output, const std::string& snippet, const std::string& page, int fence_line) {
  const std::string key = snippet + ":";
  const auto mapped_number = [&](std::string_view digits) {
    return std::to_string(fence_line + std::stoi(std::string(digits)));
  };
  std::string mapped;
  bool quoting_snippet = false;
  for (const auto& line : split_words(output, "\n")) {
    const auto number_start = std::min(line.find_first_not_of(' '), line.size());
    const auto number_end = std::min(line.find_first_not_of("0123456789", number_start), line.size());
    const bool numbered_quote =
        number_start > 0 && number_end > number_start && std::string_view(line).substr(number_end).starts_with(" |");
    if (const auto hit = line.find(key); hit != npos) {
      const auto digits = hit + key.size();
      const auto end = std::min(line.find_first_not_of("0123456789", digits), line.size());
      mapped += line.substr(0, hit) + page + ":";
      if (end > digits) mapped += mapped_number(std::string_view(line).substr(digits, end - digits));
      mapped += line.substr(end);
      quoting_snippet = true;
    } else if (numbered_quote && quoting_snippet) {
      const auto number = mapped_number(std::string_view(line).substr(number_start, number_end - number_start));
      mapped += std::string(number_end > number.size() ? number_end - number.size() : 0, ' ') + number +
                line.substr(number_end);
    } else {
      mapped += line;
      quoting_snippet = quoting_snippet && line.starts_with(' ');
    }
    mapped += '\n';
  }
  while (!mapped.empty() && mapped.back() == '\n') mapped.pop_back();
  return mapped;
}

class BookChecker {
 public:
  explicit BookChecker(Options options)
      : options_(std::move(options)), root_(fs::absolute(options_.book).lexically_normal()) {
    if (!root_.has_filename()) root_ = root_.parent_path();  // "book/" -> "book"
  }

  int run() {
    const auto book_toml = root_ / "book.toml";
    if (fs::is_regular_file(book_toml)) {
      src_ = (root_ / source_dir_name(book_toml)).lexically_normal();
    } else {
      report(book_toml, 0, "not found; this is not an mdBook directory");
      src_ = root_ / "src";
    }

    const auto summary = src_ / "SUMMARY.md";
    const bool has_summary = fs::is_regular_file(summary);
    if (has_summary)
      check_summary(summary);
    else
      report(summary, 0, "not found");

    const auto pages = find_pages();
    for (const auto& page : pages) {
      if (has_summary && !listed_.contains(page))
        report(page, 1, "page is not listed in SUMMARY.md, so mdBook would leave it out");
      check_page(page);
    }
    compile_snippets();
    print_report(pages.size());
    return problems_.empty() ? 0 : 1;
  }

 private:
  std::string display(const fs::path& path) const {
    const auto relative = path.lexically_relative(root_);
    return relative.empty() ? path.generic_string() : (options_.book / relative).lexically_normal().generic_string();
  }

  void report(const fs::path& file, int line, std::string message) {
    problems_.push_back({display(file), line, std::move(message)});
  }

  const Page& page_at(const fs::path& path) {
    auto it = pages_.find(path);
    if (it == pages_.end()) it = pages_.emplace(path, scan_page(read_lines(path))).first;
    return it->second;
  }

  std::vector<fs::path> find_pages() const {
    std::vector<fs::path> pages;
    if (!fs::is_directory(src_)) return pages;
    for (const auto& entry : fs::recursive_directory_iterator(src_)) {
      const auto path = entry.path().lexically_normal();
      if (entry.is_regular_file() && path.extension() == ".md" && path != src_ / "SUMMARY.md") pages.push_back(path);
    }
    std::sort(pages.begin(), pages.end());
    return pages;
  }

  // SUMMARY.md destinations are file names relative to src/, never URLs with anchors.
  void check_summary(const fs::path& summary) {
    for (const auto& entry : page_at(summary).links) {
      const auto chapter = entry.text.empty() ? std::string("entry") : "chapter '" + entry.text + "'";
      if (entry.destination.empty()) {
        report(summary, entry.line, "draft " + chapter + " has no file; drafts are not shipped");
        continue;
      }
      if (is_external(entry.destination)) {
        report(summary, entry.line, chapter + " links to " + entry.destination + "; entries must be files under src/");
        continue;
      }
      const auto page = (src_ / percent_decode(entry.destination)).lexically_normal();
      if (fs::is_regular_file(page))
        listed_.insert(page);
      else
        report(summary, entry.line, chapter + " refers to " + display(page) + ", which does not exist");
    }
  }

  void check_page(const fs::path& path) {
    const Page& page = page_at(path);
    for (const auto& link : page.links) check_link(path, link);
    if (page.unclosed_fence_line != 0)
      report(path, page.unclosed_fence_line, "code block is never closed, so the rest of the page renders as code");
    for (const auto& include : page.includes) check_include(path, include);
    int number = 0;
    for (const auto& block : page.code_blocks)
      if (is_compiled_cpp(block.info) && block.body.find("{{#include ") == npos) add_snippet(path, block, ++number);
  }

  void check_include(const fs::path& page, const Include& include) {
    const auto file = (page.parent_path() / include.path).lexically_normal();
    if (!fs::is_regular_file(file)) {
      report(page, include.line, "included file " + include.path + " does not exist");
      return;
    }
    if (include.anchor.empty()) return;
    bool begins = false;
    bool ends = false;
    for (const auto& line : read_lines(file)) {
      const auto at = line.find("ANCHOR");
      if (at == npos) continue;
      const std::string_view rest = std::string_view(line).substr(at);
      begins = begins || trim(rest) == "ANCHOR: " + include.anchor;
      ends = ends || trim(rest) == "ANCHOR_END: " + include.anchor;
    }
    if (!begins || !ends)
      report(page, include.line, "included file " + include.path + " has no anchor '" + include.anchor + "'");
  }

  void check_link(const fs::path& page, const Link& link) {
    const std::string_view destination = link.destination;
    if (destination.empty()) {
      report(page, link.line, "link '" + link.text + "' has no target");
      return;
    }
    if (is_external(destination) || destination.starts_with('#')) return;
    ++links_checked_;

    const auto hash = destination.find('#');
    const auto file = percent_decode(destination.substr(0, hash));
    auto target = (file.starts_with('/') ? src_ / file.substr(1) : page.parent_path() / file).lexically_normal();
    if (!fs::exists(target)) {
      // mdBook renders page.md as page.html, and a link may use the rendered name.
      auto source = fs::path(target).replace_extension(".md");
      if (target.extension() != ".html" || !fs::is_regular_file(source)) {
        report(page, link.line, "broken link '" + link.destination + "': " + display(target) + " does not exist");
        return;
      }
      target = std::move(source);
    }

    if (hash == npos || hash + 1 == destination.size() || target.extension() != ".md") return;
    const auto anchor = percent_decode(destination.substr(hash + 1));
    if (!page_at(target).anchors.contains(anchor))
      report(page, link.line,
             "broken link '" + link.destination + "': " + display(target) + " has no heading with id '" + anchor + "'");
  }

  void add_snippet(const fs::path& page, const CodeBlock& block, int number) {
    if (options_.compiler.empty()) {
      ++snippets_not_compiled_;
      return;
    }
    // Pages in different directories may share a name, so the stem carries the directory.
    auto stem = page.lexically_relative(src_).replace_extension().generic_string();
    std::replace(stem.begin(), stem.end(), '/', '_');
    const auto source = options_.work_dir / (stem + "_" + std::to_string(number) + ".cpp");
    std::ofstream out(source, std::ios::binary | std::ios::trunc);
    if (!(out << block.body && out.flush())) {
      report(page, block.fence_line, "could not write the snippet to " + source.string());
      return;
    }
    const bool includes_pch_header =
        !options_.pch_include.empty() && block.body.find("#include <" + options_.pch_include + ">") != npos;
    snippets_.push_back({page, block.fence_line, source, includes_pch_header});
  }

  void compile_snippets() {
    if (snippets_.empty()) return;
    auto command = shell_quote(options_.compiler);
    for (const auto& flag : read_lines(options_.flags_file))
      if (const auto t = trim(flag); !t.empty()) command += " " + shell_quote(t);
    const auto pch = precompile_header(command);
    const auto pch_flag = pch ? " -include-pch " + shell_quote(pch->string()) : std::string{};
    command += " -fsyntax-only ";

    std::vector<CommandResult> results(snippets_.size());
    std::atomic<std::size_t> next = 0;
    {
      std::vector<std::jthread> workers;
      const auto count = std::min<std::size_t>(options_.jobs, snippets_.size());
      for (std::size_t w = 0; w < count; ++w)
        workers.emplace_back([&] {
          for (std::size_t k; (k = next++) < snippets_.size();)
            results[k] = run_command(command + (snippets_[k].includes_pch_header ? pch_flag + " " : "") +
                                     shell_quote(snippets_[k].source.string()) + " 2>&1");
        });
    }

    for (std::size_t k = 0; k < snippets_.size(); ++k) {
      const auto& snippet = snippets_[k];
      if (results[k].succeeded) continue;
      report(snippet.page, snippet.fence_line,
             "cpp snippet does not compile (it was written to " + snippet.source.string() + "):\n" +
                 map_to_page(results[k].output, snippet.source.string(), display(snippet.page), snippet.fence_line));
    }
  }

  // The precompiled `#include <pch_include>`, or nothing (no --pch-include, or the header does not
  // compile: then every snippet compiles it itself and reports the error at its own include).
  std::optional<fs::path> precompile_header(const std::string& compile) {
    if (options_.pch_include.empty()) return std::nullopt;
    const auto header = options_.work_dir / "pch.hpp";
    const auto pch = options_.work_dir / "pch.hpp.pch";
    std::ofstream(header, std::ios::binary | std::ios::trunc) << "#include <" << options_.pch_include << ">\n";
    const auto result = run_command(compile + " -x c++-header " + shell_quote(header.string()) + " -o " +
                                    shell_quote(pch.string()) + " 2>&1");
    if (!result.succeeded) {
      std::cout << "book: <" << options_.pch_include << "> was not precompiled:\n" << result.output;
      return std::nullopt;
    }
    for (const auto& snippet : snippets_) pch_users_ += snippet.includes_pch_header ? 1 : 0;
    return pch;
  }

  void print_report(std::size_t page_count) {
    std::stable_sort(problems_.begin(), problems_.end(), [](const Problem& a, const Problem& b) {
      return std::tie(a.file, a.line) < std::tie(b.file, b.line);
    });
    for (const auto& problem : problems_) {
      std::cout << problem.file;
      if (problem.line != 0) std::cout << ':' << problem.line;
      std::cout << ": " << problem.message << '\n';
    }
    std::cout << "book: " << plural(page_count, "page") << ", " << plural(links_checked_, "link") << ", "
              << plural(snippets_.size(), "snippet") << " compiled";
    if (snippets_not_compiled_ != 0) std::cout << " (" << snippets_not_compiled_ << " skipped: no --compiler)";
    std::cout << ", " << plural(problems_.size(), "problem") << '\n';
    if (!options_.pch_include.empty())
      std::cout << "book: <" << options_.pch_include << "> precompiled for " << pch_users_ << " of "
                << plural(snippets_.size(), "snippet") << '\n';
    std::cout << std::flush;
  }

  Options options_;
  fs::path root_;
  fs::path src_;
  std::map<fs::path, Page> pages_;  // a map, so references to pages stay valid
  std::set<fs::path> listed_;
  std::vector<Snippet> snippets_;
  std::vector<Problem> problems_;
  std::size_t links_checked_ = 0;
  std::size_t snippets_not_compiled_ = 0;
  std::size_t pch_users_ = 0;
};

constexpr std::string_view usage =
    "usage: book_check --book <dir> [--compiler <c++> --work-dir <dir> [--flags-file <file>]] [--jobs <n>]\n"
    "                  [--pch-include <header>]\n";

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view option = argv[i];
    if (i + 1 == argc) {
      std::cerr << "book_check: " << option << " needs a value\n" << usage;
      return std::nullopt;
    }
    const std::string value = argv[++i];
    if (option == "--book") {
      options.book = value;
    } else if (option == "--compiler") {
      options.compiler = value;
    } else if (option == "--flags-file") {
      options.flags_file = value;
    } else if (option == "--work-dir") {
      options.work_dir = value;
    } else if (option == "--pch-include") {
      options.pch_include = value;
    } else if (option == "--jobs" && value.find_first_not_of("0123456789") == npos && std::stoul(value) > 0) {
      options.jobs = static_cast<unsigned>(std::stoul(value));
    } else {
      std::cerr << "book_check: unexpected argument " << option << ' ' << value << '\n' << usage;
      return std::nullopt;
    }
  }
  if (options.book.empty()) {
    std::cerr << "book_check: --book is required\n" << usage;
    return std::nullopt;
  }
  if (!options.compiler.empty() && options.work_dir.empty()) {
    std::cerr << "book_check: --compiler needs --work-dir for the snippet files\n" << usage;
    return std::nullopt;
  }
  if (!options.flags_file.empty() && !fs::is_regular_file(options.flags_file)) {
    std::cerr << "book_check: flags file " << options.flags_file << " not found\n";
    return std::nullopt;
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    auto options = parse_options(argc, argv);
    if (!options) return 2;
    if (!options->work_dir.empty()) fs::create_directories(options->work_dir);
    return BookChecker(std::move(*options)).run();
  } catch (const std::exception& e) {
    std::cerr << "book_check: " << e.what() << '\n';
    return 2;
  }
}
