#include <elfin/config.hpp>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace elfin {

namespace {

using Packer = msgpack::packer<msgpack::sbuffer>;

void pack_node(const toml::node& node, Packer& out);

void pack_table(const toml::table& table, Packer& out) {
  out.pack_map(static_cast<std::uint32_t>(table.size()));
  for (const auto& [key, value] : table) {
    out.pack(std::string_view{key.str()});
    pack_node(value, out);
  }
}

// TOML values map onto msgpack one to one; dates and times become their TOML text.
void pack_node(const toml::node& node, Packer& out) {
  node.visit([&](const auto& v) {
    using T = std::remove_cvref_t<decltype(v)>;
    if constexpr (std::is_same_v<T, toml::table>) {
      pack_table(v, out);
    } else if constexpr (std::is_same_v<T, toml::array>) {
      out.pack_array(static_cast<std::uint32_t>(v.size()));
      for (const auto& item : v) pack_node(item, out);
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

const msgpack::object* lookup(const msgpack::object& root, std::string_view key) {
  if (root.type != msgpack::type::MAP) return nullptr;
  for (std::uint32_t i = 0; i < root.via.map.size; ++i) {
    const auto& kv = root.via.map.ptr[i];
    if (kv.key.type == msgpack::type::STR && std::string_view(kv.key.via.str.ptr, kv.key.via.str.size) == key) {
      return &kv.val;
    }
  }
  return nullptr;
}

const msgpack::object* lookup_path(const msgpack::object& root, std::string_view dotted) {
  const msgpack::object* node = &root;
  while (node != nullptr && !dotted.empty()) {
    auto dot = dotted.find('.');
    node = lookup(*node, dotted.substr(0, dot));
    dotted = dot == std::string_view::npos ? std::string_view{} : dotted.substr(dot + 1);
  }
  return node;
}

}  // namespace

AnyConfig::AnyConfig() : bytes_(std::make_shared<const std::string>(empty_map())) {}

Result<AnyConfig, std::string> AnyConfig::from_toml(std::string_view toml_text, std::string_view source) {
  try {
    toml::table table = toml::parse(toml_text, source);
    msgpack::sbuffer buffer;
    Packer packer(buffer);
    pack_table(table, packer);
    return AnyConfig{std::make_shared<const std::string>(buffer.data(), buffer.size())};
  } catch (const toml::parse_error& e) {
    return Err{fmt::format("{}:{}:{}: invalid TOML: {}", source, e.source().begin.line, e.source().begin.column,
                           e.description())};
  }
}

AnyConfig AnyConfig::from_msgpack(std::string bytes) {
  return AnyConfig{std::make_shared<const std::string>(std::move(bytes))};
}

AnyConfig AnyConfig::section(std::string_view dotted_path) const {
  auto handle = msgpack::unpack(bytes_->data(), bytes_->size());
  const msgpack::object* node = lookup_path(handle.get(), dotted_path);
  if (node == nullptr || node->type != msgpack::type::MAP) return AnyConfig{};
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  packer.pack(*node);
  return AnyConfig{std::make_shared<const std::string>(buffer.data(), buffer.size())};
}

AnyConfig AnyConfig::nested_under(std::string_view key) const {
  msgpack::sbuffer buffer;
  Packer packer(buffer);
  packer.pack_map(1);
  packer.pack(key);
  buffer.write(bytes_->data(), bytes_->size());  // msgpack values concatenate: the map's one value
  return AnyConfig{std::make_shared<const std::string>(buffer.data(), buffer.size())};
}

bool AnyConfig::empty() const {
  auto handle = msgpack::unpack(bytes_->data(), bytes_->size());
  return handle.get().type != msgpack::type::MAP || handle.get().via.map.size == 0;
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
}

std::string AnyConfig::describe_decode_error(const std::exception& e) const {
  return fmt::format("the config does not fit the group's config type ({})", e.what());
}

}  // namespace elfin
