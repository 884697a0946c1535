// How an actor key is printed in logs, dumps and metrics: fmt if the type is formattable,
// otherwise its operator<<.
#pragma once

#include <sstream>
#include <string>

#include <fmt/format.h>

namespace elfin::detail {

template <class K>
std::string key_text(const K& key) {
  if constexpr (fmt::is_formattable<K>::value) {
    return fmt::format("{}", key);
  } else {
    std::ostringstream os;
    os << key;
    return std::move(os).str();
  }
}

}  // namespace elfin::detail
