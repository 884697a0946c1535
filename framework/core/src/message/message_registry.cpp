#include <elfin/message.hpp>

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace elfin {

MessageRegistry& MessageRegistry::instance() {
  static MessageRegistry registry;  // function-local: safe to use during static initialization
  return registry;
}

void MessageRegistry::add(const MessageVTable& vtable) {
  if (std::find(entries_.begin(), entries_.end(), &vtable) == entries_.end()) entries_.push_back(&vtable);
}

const MessageVTable* MessageRegistry::find(std::string_view protocol, std::string_view name) const {
  for (const auto* v : entries_) {
    if (v->protocol == protocol && v->name == name) return v;
  }
  return nullptr;
}

std::vector<std::string> MessageRegistry::conflicts() const {
  std::map<std::pair<std::string_view, std::string_view>, int> counts;
  for (const auto* v : entries_) ++counts[{v->protocol, v->name}];
  std::vector<std::string> out;
  for (const auto& [key, count] : counts) {
    if (count > 1) {
      out.push_back(fmt::format("message `{}.{}` is declared by {} different types; (protocol, name) must be unique",
                                key.first, key.second, count));
    }
  }
  return out;
}

std::vector<const MessageVTable*> MessageRegistry::all() const { return entries_; }

}  // namespace elfin
