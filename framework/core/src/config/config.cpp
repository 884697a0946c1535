#include <elfin/config.hpp>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace elfin {

namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;
using Locations = AnyConfig::Locations;

void pack_node(const toml::node& node, const std::string& path, std::string_view source, Packer& out,
               Locations& locations);

void pack_table(const toml::table& table, const std::string& path, std::string_view source, Packer& out,
                Locations& locations) {
  out.pack_map(static_cast<std::uint32_t>(table.size()));
  for (const auto& [key, value] : table) {
    const std::string key_path = detail::join_config_path(path, key.str());
    // The key's own line is what people look for; an implicit table (from `[a.b]`) has none.
    std::uint32_t line = key.source().begin.line;
    if (line == 0) line = value.source().begin.line;
    locations.emplace(key_path, ConfigLocation{std::string(source), line, false});
    out.pack(std::string_view{key.str()});
    pack_node(value, key_path, source, out, locations);
  }
}

// TOML values map onto msgpack one to one; dates and times become their TOML text.
void pack_node(const toml::node& node, const std::string& path, std::string_view source, Packer& out,
               Locations& locations) {
  node.visit([&](const auto& v) {
    using T = std::remove_cvref_t<decltype(v)>;
    if constexpr (std::is_same_v<T, toml::table>) {
      pack_table(v, path, source, out, locations);
    } else if constexpr (std::is_same_v<T, toml::array>) {
      out.pack_array(static_cast<std::uint32_t>(v.size()));
      for (std::size_t i = 0; i < v.size(); ++i) {
        pack_node(*v.get(i), fmt::format("{}[{}]", path, i), source, out, locations);
      }
    } else if constexpr (std::is_same_v<T, toml::value<std::string>> || std::is_same_v<T, toml::value<std::int64_t>> ||
                         std::is_same_v<T, toml::value<double>> || std::is_same_v<T, toml::value<bool>>) {
      out.pack(v.get());
    } else {
      std::ostringstream text;
      text << v;
      out.pack(text.str());
    }
  });
}

std::string empty_map() {
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  packer.pack_map(0);
  return std::string(buffer.data(), buffer.size());
}

const msgpack::object* lookup_path(const msgpack::object& root, std::string_view dotted) {
  const msgpack::object* node = &root;
  while (node != nullptr && !dotted.empty()) {
    auto dot = dotted.find('.');
    node = detail::config_lookup(*node, dotted.substr(0, dot));
    dotted = dot == std::string_view::npos ? std::string_view{} : dotted.substr(dot + 1);
  }
  return node;
}

std::string_view key_of(const msgpack::object_kv& kv) { return {kv.key.via.str.ptr, kv.key.via.str.size}; }

// Deep merge: `top`'s keys win; tables present in both are merged.
void pack_merged(const msgpack::object& top, const msgpack::object& under, Packer& out) {
  if (top.type != msgpack::type::MAP || under.type != msgpack::type::MAP) {
    out.pack(top);
    return;
  }
  std::uint32_t extra = 0;
  for (std::uint32_t i = 0; i < under.via.map.size; ++i) {
    const auto& kv = under.via.map.ptr[i];
    if (kv.key.type != msgpack::type::STR || detail::config_lookup(top, key_of(kv)) == nullptr) ++extra;
  }
  out.pack_map(top.via.map.size + extra);
  for (std::uint32_t i = 0; i < top.via.map.size; ++i) {
    const auto& kv = top.via.map.ptr[i];
    out.pack(kv.key);
    const msgpack::object* other =
        kv.key.type == msgpack::type::STR ? detail::config_lookup(under, key_of(kv)) : nullptr;
    if (other != nullptr) {
      pack_merged(kv.val, *other, out);
    } else {
      out.pack(kv.val);
    }
  }
  for (std::uint32_t i = 0; i < under.via.map.size; ++i) {
    const auto& kv = under.via.map.ptr[i];
    if (kv.key.type == msgpack::type::STR && detail::config_lookup(top, key_of(kv)) != nullptr) continue;
    out.pack(kv.key);
    out.pack(kv.val);
  }
}

std::string pack_object(const msgpack::object& o) {
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  packer.pack(o);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace

namespace detail {

std::string join_config_path(std::string_view prefix, std::string_view key) {
  if (prefix.empty()) return std::string(key);
  return fmt::format("{}.{}", prefix, key);
}

const msgpack::object* config_lookup(const msgpack::object& o, std::string_view key) {
  if (o.type != msgpack::type::MAP) return nullptr;
  for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
    const auto& kv = o.via.map.ptr[i];
    if (kv.key.type == msgpack::type::STR && key_of(kv) == key) return &kv.val;
  }
  return nullptr;
}

std::string describe_config_value(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::BOOLEAN:
      return fmt::format("a boolean ({})", o.via.boolean);
    case msgpack::type::POSITIVE_INTEGER:
      return fmt::format("an integer ({})", o.via.u64);
    case msgpack::type::NEGATIVE_INTEGER:
      return fmt::format("a negative integer ({})", o.via.i64);
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return fmt::format("a number ({})", o.via.f64);
    case msgpack::type::STR:
      return fmt::format("a string (\"{}\")", std::string_view(o.via.str.ptr, o.via.str.size));
    case msgpack::type::ARRAY:
      return "an array";
    case msgpack::type::MAP:
      return "a table";
    default:
      return "a value of another kind";
  }
}

void report_config_issues(const AnyConfig& config, const ConfigIssues& issues, std::string_view scope,
                          ConfigReport& report) {
  for (const auto& issue : issues) {
    if (!issue.error) {
      // Keys from [common] are meant for every group; a group that does not know one is fine.
      const ConfigLocation* at = config.location(issue.path);
      if (at != nullptr && at->inherited) continue;
    }
    std::string text;
    if (issue.path.empty()) {
      text = fmt::format("{}{}: {}", config.where(issue.path), scope.empty() ? "the config" : scope, issue.what);
    } else {
      text = fmt::format("{}{}{}{}: {}", config.where(issue.path), scope,
                         scope.empty() || scope.ends_with('.') ? "" : " ", issue.path, issue.what);
    }
    (issue.error ? report.errors : report.warnings).push_back(std::move(text));
  }
}

std::optional<ConfigError> config_error_of(const AnyConfig& config, const ConfigIssues& issues,
                                           const ConfigReport& report) {
  if (report.ok()) return std::nullopt;
  std::string text = report.errors.front();
  for (std::size_t i = 1; i < report.errors.size(); ++i) text += "; " + report.errors[i];
  ConfigError error(ConfigError::Invalid, std::move(text));
  for (const auto& issue : issues) {
    if (!issue.error) continue;
    error.key(issue.path);
    if (const ConfigLocation* at = config.location(issue.path)) error.at(at->source, at->line);
    break;
  }
  return error;
}

}  // namespace detail

ConfigError ConfigError::nested(std::string_view prefix, std::string text) const {
  ConfigError out = *this;
  out.message_ = std::move(text);
  out.key_path_ = key_path_.empty() ? std::string(prefix) : detail::join_config_path(prefix, key_path_);
  return out;
}

void ConfigReport::append(ConfigReport other) {
  for (auto& e : other.errors) errors.push_back(std::move(e));
  for (auto& w : other.warnings) warnings.push_back(std::move(w));
}

AnyConfig::AnyConfig() : bytes_(std::make_shared<const std::string>(empty_map())) {}

Result<AnyConfig, ConfigError> AnyConfig::from_toml(std::string_view toml_text, std::string_view source) {
  try {
    toml::table table = toml::parse(toml_text, source);
    msgpack::sbuffer buffer;
    Packer packer(buffer);
    auto locations = std::make_shared<Locations>();
    pack_table(table, "", source, packer, *locations);
    return AnyConfig{std::make_shared<const std::string>(buffer.data(), buffer.size()), std::move(locations)};
  } catch (const toml::parse_error& e) {
    const auto line = static_cast<std::uint32_t>(e.source().begin.line);
    const auto column = static_cast<std::uint32_t>(e.source().begin.column);
    return Err{ConfigError(ConfigError::Syntax,
                           fmt::format("{}:{}:{}: invalid TOML: {}", source, line, column, e.description()))
                   .at(std::string(source), line, column)};
  }
}

Result<AnyConfig, ConfigError> AnyConfig::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Err{
        ConfigError(ConfigError::Unreadable, fmt::format("{}: cannot read the config file: {}", path,
                                                         std::error_code(errno, std::generic_category()).message()))
            .at(path, 0)};
  }
  std::ostringstream text;
  text << in.rdbuf();
  return from_toml(text.str(), path);
}

AnyConfig AnyConfig::from_object(const msgpack::object& map) {
  return AnyConfig{std::make_shared<const std::string>(pack_object(map))};
}

AnyConfig AnyConfig::section(std::string_view dotted_path) const {
  auto handle = msgpack::unpack(bytes_->data(), bytes_->size());
  const msgpack::object* node = lookup_path(handle.get(), dotted_path);
  if (node == nullptr || node->type != msgpack::type::MAP) return AnyConfig{};
  std::shared_ptr<Locations> sub;
  if (locations_) {
    sub = std::make_shared<Locations>();
    const std::string prefix = std::string(dotted_path) + ".";
    for (auto it = locations_->lower_bound(prefix); it != locations_->end() && it->first.starts_with(prefix); ++it) {
      sub->emplace(it->first.substr(prefix.size()), it->second);
    }
    // The section's own header line, for errors about the section as a whole.
    if (auto self = locations_->find(dotted_path); self != locations_->end()) sub->emplace("", self->second);
  }
  return AnyConfig{std::make_shared<const std::string>(pack_object(*node)), std::move(sub)};
}

AnyConfig AnyConfig::merged_over(const AnyConfig& defaults) const {
  auto top = msgpack::unpack(bytes_->data(), bytes_->size());
  auto under = msgpack::unpack(defaults.bytes_->data(), defaults.bytes_->size());
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  pack_merged(top.get(), under.get(), packer);
  auto locations = std::make_shared<Locations>();
  if (locations_) *locations = *locations_;
  if (defaults.locations_) {
    for (const auto& [path, at] : *defaults.locations_) {
      if (path.empty()) continue;
      ConfigLocation inherited = at;
      inherited.inherited = true;
      locations->emplace(path, std::move(inherited));  // keeps this table's entry if it has one
    }
  }
  return AnyConfig{std::make_shared<const std::string>(buffer.data(), buffer.size()), std::move(locations)};
}

AnyConfig AnyConfig::for_group(std::string_view group) const {
  AnyConfig own = section(group);
  AnyConfig common = section("common");
  if (common.empty()) return own;
  return own.merged_over(common);
}

AnyConfig AnyConfig::nested_under(std::string_view key) const {
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  packer.pack_map(1);
  packer.pack(key);
  buffer.write(bytes_->data(), bytes_->size());  // msgpack values concatenate: the map's one value
  std::shared_ptr<Locations> locations;
  if (locations_) {
    locations = std::make_shared<Locations>();
    for (const auto& [path, at] : *locations_) locations->emplace(detail::join_config_path(key, path), at);
  }
  return AnyConfig{std::make_shared<const std::string>(buffer.data(), buffer.size()), std::move(locations)};
}

bool AnyConfig::empty() const {
  auto handle = msgpack::unpack(bytes_->data(), bytes_->size());
  return handle.get().type != msgpack::type::MAP || handle.get().via.map.size == 0;
}

std::vector<std::string> AnyConfig::keys() const {
  auto handle = msgpack::unpack(bytes_->data(), bytes_->size());
  std::vector<std::string> out;
  const msgpack::object& root = handle.get();
  if (root.type != msgpack::type::MAP) return out;
  for (std::uint32_t i = 0; i < root.via.map.size; ++i) {
    if (root.via.map.ptr[i].key.type == msgpack::type::STR) out.emplace_back(key_of(root.via.map.ptr[i]));
  }
  return out;
}

const ConfigLocation* AnyConfig::location(std::string_view dotted_path) const {
  if (!locations_) return nullptr;
  // An array element or a key inside an inline table may have no entry of its own: fall back to
  // the closest enclosing key.
  std::string_view path = dotted_path;
  for (;;) {
    if (auto it = locations_->find(path); it != locations_->end()) return &it->second;
    auto cut = path.find_last_of(".[");
    if (cut == std::string_view::npos) break;
    path = path.substr(0, cut);
  }
  if (auto it = locations_->find(""); it != locations_->end()) return &it->second;
  return nullptr;
}

std::string AnyConfig::where(std::string_view dotted_path) const {
  const ConfigLocation* at = location(dotted_path);
  if (at == nullptr) return "";
  if (at->line == 0) return fmt::format("{}: ", at->source);
  return fmt::format("{}:{}: ", at->source, at->line);
}

std::optional<std::size_t> AnyConfig::mailbox_capacity() const {
  auto handle = msgpack::unpack(bytes_->data(), bytes_->size());
  const msgpack::object* node = lookup_path(handle.get(), "system.mailbox.capacity");
  if (node == nullptr || node->type != msgpack::type::POSITIVE_INTEGER || node->via.u64 == 0) return std::nullopt;
  return static_cast<std::size_t>(node->via.u64);
}

void AnyConfig::msgpack_unpack(const msgpack::object& o) {
  if (o.type != msgpack::type::BIN) throw msgpack::type_error();
  bytes_ = std::make_shared<const std::string>(o.via.bin.ptr, o.via.bin.size);
  locations_.reset();
}

}  // namespace elfin
