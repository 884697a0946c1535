#include <elfin/topology_file.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <toml++/toml.h>

#include <elfin/message.hpp>

namespace elfin {

namespace {

std::string kind_of(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return fmt::format("a string (\"{}\")", node.as_string()->get());
    case toml::node_type::integer:
      return fmt::format("an integer ({})", node.as_integer()->get());
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date or time";
  }
}

/// A message pattern of a route: `protocol.Name`, `protocol.*` or `*`.
struct Pattern {
  std::string protocol;  // empty: any
  std::string name;      // empty: any
  [[nodiscard]] bool matches(const Envelope& e) const {
    return (protocol.empty() || e.protocol() == protocol) && (name.empty() || e.name() == name);
  }
};

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

class Parser {
 public:
  Parser(std::string_view source, const BlueprintRegistry& registry) : source_(source), registry_(registry) {}

  Result<TopologyFile, TopologyError> parse(const toml::table& root, std::string_view base_dir) {
    TopologyFile file;
    file.source = std::string(source_);
    check_keys(root, "the topology", {"node", "groups", "routes", "remote"});
    parse_node(root, file, base_dir);
    parse_groups(root, file);
    parse_remote(root, file);
    parse_routes(root, file);
    if (!errors_.empty()) {
      std::string text = fmt::format("{}: the topology is not valid:", source_);
      for (const auto& e : errors_) text += "\n  - " + e.text;
      return Err{TopologyError(TopologyError::Invalid, std::move(text), std::string(source_), std::move(errors_))};
    }
    return file;
  }

 private:
  std::string at(const toml::source_region& region) const { return fmt::format("{}:{}", source_, region.begin.line); }
  void error(const toml::node& node, std::string what) {
    errors_.push_back({static_cast<std::uint32_t>(node.source().begin.line),
                       fmt::format("{}: {}", at(node.source()), std::move(what))});
  }

  void check_keys(const toml::table& table, std::string_view where, std::initializer_list<std::string_view> allowed) {
    for (const auto& [key, value] : table) {
      bool known = false;
      for (auto a : allowed) known = known || key.str() == a;
      if (known) continue;
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      errors_.push_back(
          {static_cast<std::uint32_t>(key.source().begin.line),
           fmt::format("{}: unknown key `{}` in {}; expected one of: {}", at(key.source()), key.str(), where, list)});
    }
  }

  // A string value at `key`; reports a wrong type, and a missing key when `required`.
  std::optional<std::string> string_at(const toml::table& table, std::string_view key, std::string_view where,
                                       bool required) {
    const toml::node* node = table.get(key);
    if (node == nullptr) {
      if (required) error(table, fmt::format("{} has no `{}` (a string)", where, key));
      return std::nullopt;
    }
    if (!node->is_string()) {
      error(*node, fmt::format("{} {}: expected a string, got {}", where, key, kind_of(*node)));
      return std::nullopt;
    }
    return node->as_string()->get();
  }

  std::optional<std::uint16_t> node_no_of(const toml::node& node, std::string_view what) {
    if (!node.is_integer() || node.as_integer()->get() < 0 || node.as_integer()->get() > 65535) {
      error(node, fmt::format("{}: expected a node number from 0 to 65535, got {}", what, kind_of(node)));
      return std::nullopt;
    }
    return static_cast<std::uint16_t>(node.as_integer()->get());
  }

  // Array of tables at `key` (each entry reported on its own line).
  std::vector<const toml::table*> tables_at(const toml::table& root, std::string_view key) {
    std::vector<const toml::table*> out;
    const toml::node* node = root.get(key);
    if (node == nullptr) return out;
    const toml::array* array = node->as_array();
    if (array == nullptr) {
      error(*node, fmt::format("`{}`: expected an array of tables ([[{}]]), got {}", key, key, kind_of(*node)));
      return out;
    }
    for (const auto& item : *array) {
      if (const toml::table* t = item.as_table()) {
        out.push_back(t);
      } else {
        error(item, fmt::format("`{}`: expected a table ([[{}]]), got {}", key, key, kind_of(item)));
      }
    }
    return out;
  }

  void parse_node(const toml::table& root, TopologyFile& file, std::string_view base_dir) {
    file.node_name = std::filesystem::path(std::string(source_)).stem().string();
    const toml::node* node = root.get("node");
    if (node == nullptr) return;
    const toml::table* table = node->as_table();
    if (table == nullptr) {
      error(*node, fmt::format("`node`: expected a table ([node]), got {}", kind_of(*node)));
      return;
    }
    check_keys(*table, "[node]", {"no", "name", "config"});
    if (const toml::node* no = table->get("no")) {
      if (auto value = node_no_of(*no, "[node] no")) file.node_no = *value;
    }
    if (auto name = string_at(*table, "name", "[node]", false)) file.node_name = *name;
    if (auto config = string_at(*table, "config", "[node]", false)) {
      std::filesystem::path path(*config);
      if (path.is_relative()) path = std::filesystem::path(std::string(base_dir)) / path;
      file.config_path = path.lexically_normal().string();
      file.config_line = table->get("config")->source().begin.line;
    }
  }

  void parse_groups(const toml::table& root, TopologyFile& file) {
    auto& lines = group_lines_;
    const auto groups = tables_at(root, "groups");
    if (groups.empty() && root.get("groups") == nullptr) {
      errors_.push_back(
          {0, fmt::format("{}: the topology declares no groups ([[groups]] with a name and a blueprint)", source_)});
    }
    for (const toml::table* group : groups) {
      check_keys(*group, "[[groups]]", {"name", "blueprint", "entrypoint"});
      auto name = string_at(*group, "name", "[[groups]]", true);
      auto blueprint_name =
          string_at(*group, "blueprint", name ? fmt::format("group `{}`", *name) : "[[groups]]", true);
      bool entrypoint = false;
      if (const toml::node* e = group->get("entrypoint")) {
        if (e->is_boolean()) {
          entrypoint = e->as_boolean()->get();
        } else {
          error(*e, fmt::format("group `{}` entrypoint: expected a boolean, got {}", name.value_or("?"), kind_of(*e)));
        }
      }
      if (!name) continue;
      if (name->empty()) {
        error(*group, "a group name must not be empty");
        continue;
      }
      if (auto [it, fresh] = lines.emplace(*name, group->source().begin.line); !fresh) {
        error(*group, fmt::format("duplicate group `{}` (first declared at line {})", *name, it->second));
        continue;
      }
      const Blueprint* blueprint = blueprint_name ? registry_.find(*blueprint_name) : nullptr;
      if (blueprint_name && blueprint == nullptr) {
        std::string known;
        for (const auto& entry : registry_.entries()) known += (known.empty() ? "" : ", ") + entry.name;
        error(*group->get("blueprint"), fmt::format("group `{}`: unknown blueprint `{}`; registered: {}", *name,
                                                    *blueprint_name, known.empty() ? "none" : known));
      }
      auto local = file.topology.local(*name);
      if (blueprint != nullptr) local.mount(*blueprint);
      if (entrypoint) local.entrypoint();
    }
  }

  void parse_remote(const toml::table& root, TopologyFile& file) {
    for (const toml::table* remote : tables_at(root, "remote")) {
      check_keys(*remote, "[[remote]]", {"name", "nodes", "routing", "remote_name", "pick"});
      auto name = string_at(*remote, "name", "[[remote]]", true);
      RemoteGroupDecl decl;
      if (name) decl.name = *name;
      const toml::node* nodes = remote->get("nodes");
      if (nodes == nullptr) {
        error(*remote, fmt::format("remote group `{}` has no `nodes` (an array of node numbers)", decl.name));
      } else if (const toml::array* list = nodes->as_array()) {
        for (const auto& n : *list) {
          if (auto no = node_no_of(n, fmt::format("remote group `{}` nodes", decl.name))) decl.nodes.push_back(*no);
        }
      } else {
        error(*nodes, fmt::format("remote group `{}` nodes: expected an array of node numbers, got {}", decl.name,
                                  kind_of(*nodes)));
      }
      if (auto routing = string_at(*remote, "routing", "[[remote]]", false)) {
        if (*routing != "unicast" && *routing != "broadcast") {
          error(*remote->get("routing"),
                fmt::format("remote group `{}` routing: expected \"unicast\" or \"broadcast\", got \"{}\"", decl.name,
                            *routing));
        }
        decl.routing = *routing;
      }
      if (auto remote_name = string_at(*remote, "remote_name", "[[remote]]", false)) {
        if (remote_name->empty()) {
          error(*remote->get("remote_name"),
                fmt::format("remote group `{}` remote_name: must not be empty (leave it out to use `{}`)", decl.name,
                            decl.name));
        }
        decl.remote_name = *remote_name;
      }
      if (auto pick = string_at(*remote, "pick", "[[remote]]", false)) {
        decl.pick = *pick;
        if (const NodeSelector* selector = registry_.find_selector(*pick)) {
          decl.selector = *selector;
        } else {
          std::string known;
          for (const auto& entry : registry_.selectors()) known += (known.empty() ? "" : ", ") + entry.name;
          error(*remote->get("pick"), fmt::format("remote group `{}` pick: unknown node selector `{}`; registered: {}",
                                                  decl.name, *pick, known.empty() ? "none" : known));
        }
      }
      if (!name) continue;
      if (group_lines_.contains(decl.name)) {
        error(*remote, fmt::format("group `{}` is declared both local (line {}) and remote", decl.name,
                                   group_lines_[decl.name]));
        continue;
      }
      if (const auto* factory = registry_.remote_factory()) {
        if (!group_lines_.contains("system.network")) {
          error(*remote, fmt::format("remote group `{}` needs a `system.network` group (blueprint \"elfin.network\") "
                                     "to reach its nodes",
                                     decl.name));
        } else {
          file.topology.local(decl.name).mount((*factory)(decl));
          remote_mounted_.insert(decl.name);
        }
      }
      file.remote_groups.push_back(std::move(decl));
    }
  }

  std::optional<Pattern> pattern_of(const toml::node& node) {
    if (!node.is_string()) {
      error(node,
            fmt::format("route messages: expected a pattern string such as \"protocol.Name\", got {}", kind_of(node)));
      return std::nullopt;
    }
    const std::string& text = node.as_string()->get();
    if (text == "*") return Pattern{};
    const auto dot = text.find('.');
    const std::string protocol = text.substr(0, dot);
    const std::string name = dot == std::string::npos ? "" : text.substr(dot + 1);
    if (dot == std::string::npos || !is_identifier(protocol) || (name != "*" && !is_identifier(name))) {
      error(node, fmt::format("bad message pattern \"{}\": expected \"protocol.Name\", \"protocol.*\" or \"*\"", text));
      return std::nullopt;
    }
    const auto messages = MessageRegistry::instance().all();
    if (name == "*") {
      bool any = false;
      for (const auto* m : messages) any = any || m->protocol == protocol;
      if (!any) {
        error(node, fmt::format("message pattern \"{}\": no registered message has protocol `{}`", text, protocol));
        return std::nullopt;
      }
      return Pattern{protocol, ""};
    }
    if (MessageRegistry::instance().find(protocol, name) == nullptr) {
      error(node, fmt::format("message pattern \"{}\": no message `{}` is registered in protocol `{}`", text, name,
                              protocol));
      return std::nullopt;
    }
    return Pattern{protocol, name};
  }

  void parse_routes(const toml::table& root, TopologyFile& file) {
    for (const toml::table* route : tables_at(root, "routes")) {
      check_keys(*route, "[[routes]]", {"from", "to", "messages"});
      auto from = string_at(*route, "from", "[[routes]]", true);
      auto to = string_at(*route, "to", "[[routes]]", true);
      std::vector<Pattern> patterns;
      const toml::node* messages = route->get("messages");
      if (messages == nullptr) {
        error(*route, "[[routes]] has no `messages` (patterns such as [\"protocol.Name\", \"protocol.*\"])");
      } else if (const toml::array* list = messages->as_array(); list == nullptr || list->empty()) {
        error(*messages, fmt::format("route messages: expected a non-empty array of patterns, got {}",
                                     list ? "an empty array" : kind_of(*messages)));
      } else {
        for (const auto& item : *list) {
          if (auto p = pattern_of(item)) patterns.push_back(std::move(*p));
        }
      }
      if (!from || !to) continue;
      bool ok = true;
      for (const auto* end : {&*from, &*to}) {
        if (group_lines_.contains(*end) || remote_mounted_.contains(*end)) continue;
        bool remote = false;
        for (const auto& r : file.remote_groups) remote = remote || r.name == *end;
        if (remote) {
          error(*route, fmt::format("route {} -> {}: `{}` is a remote group, and this binary has no network battery "
                                    "(elfin.network) to reach it",
                                    *from, *to, *end));
        } else {
          error(*route, fmt::format("route {} -> {}: no group named `{}` is declared", *from, *to, *end));
        }
        ok = false;
      }
      if (ok && *from == *to) {
        error(*route, fmt::format("route {} -> {}: a group cannot route to itself", *from, *to));
        ok = false;
      }
      // A route with a bad pattern is left out: the file is rejected anyway, with every error.
      const toml::array* listed = messages == nullptr ? nullptr : messages->as_array();
      if (!ok || listed == nullptr || patterns.size() != listed->size()) continue;
      auto from_group = file.topology.local(*from);
      from_group.route_to(file.topology.local(*to), [patterns = std::move(patterns)](const Envelope& e) {
        for (const auto& p : patterns) {
          if (p.matches(e)) return true;
        }
        return false;
      });
    }
  }

  std::string_view source_;
  const BlueprintRegistry& registry_;
  std::vector<TopologyError::Problem> errors_;
  std::map<std::string, std::uint32_t> group_lines_;
  std::set<std::string> remote_mounted_;
};

}  // namespace

StartOptions TopologyFile::start_options() const {
  StartOptions options;
  options.node_no = node_no;
  options.config_path = config_path;
  return options;
}

Result<TopologyFile, TopologyError> parse_topology_file(std::string_view toml_text, std::string_view source,
                                                        const BlueprintRegistry& registry, std::string_view base_dir) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    const auto line = static_cast<std::uint32_t>(e.source().begin.line);
    const auto column = static_cast<std::uint32_t>(e.source().begin.column);
    return Err{TopologyError(TopologyError::Syntax,
                             fmt::format("{}:{}:{}: invalid TOML: {}", source, line, column, e.description()),
                             std::string(source))
                   .at(line, column)};
  }
  return Parser{source, registry}.parse(root, base_dir);
}

Result<TopologyFile, TopologyError> load_topology_file(const std::string& path, const BlueprintRegistry& registry) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Err{TopologyError(TopologyError::Unreadable,
                             fmt::format("{}: cannot read the topology file: {}", path,
                                         std::error_code(errno, std::generic_category()).message()),
                             path)};
  }
  std::ostringstream text;
  text << in.rdbuf();
  const auto dir = std::filesystem::path(path).parent_path();
  return parse_topology_file(text.str(), path, registry, dir.empty() ? "." : dir.string());
}

}  // namespace elfin
