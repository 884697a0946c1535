#include <elfin/assignment/pod_version.hpp>

#include <charconv>

namespace elfin::assignment {

PodVersion PodVersion::parse(std::string_view text) {
  PodVersion version;
  while (!text.empty()) {
    const auto end = text.find_first_of(".-");
    const std::string_view part = text.substr(0, end);
    std::uint32_t number = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), number);
    if (!part.empty() && ec == std::errc{} && ptr == part.data() + part.size()) version.parts_.push_back(number);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return version;
}

std::string PodVersion::to_string() const {
  if (parts_.empty()) return "-";
  std::string text = fmt::format("{}", parts_.front());
  for (std::size_t i = 1; i < parts_.size(); ++i) text += fmt::format(".{}", parts_[i]);
  return text;
}

}  // namespace elfin::assignment
