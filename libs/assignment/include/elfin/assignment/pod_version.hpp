// PodVersion: the version of the software a pod runs, compared so that a rolling update can tell
// new pods from old ones. Shards are only ever given to pods of the newest version present, and
// nothing is rebalanced while versions are mixed; a rollback is therefore deployed as a *higher*
// version. Read as Shardcake reads it: the string is split at `.` and `-`, parts that are not
// numbers are dropped (`1.2.0-SNAPSHOT` is 1.2.0), and the numbers compare left to right, a
// shorter version first when one is a prefix of the other (1.2 < 1.2.0).
//
// Thread safety: a plain value type.
#pragma once

#include <compare>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace elfin::assignment {

class PodVersion {
 public:
  /// The empty version, older than any other.
  PodVersion() = default;
  PodVersion(std::initializer_list<std::uint32_t> parts) : parts_(parts) {}

  /// Reads `1.2.3`, `1.2.3-SNAPSHOT`, `2-rc1` (= 2); never fails (no numbers: the empty version).
  /// A number too large for 32 bits is dropped like a non-number.
  [[nodiscard]] static PodVersion parse(std::string_view text);

  [[nodiscard]] const std::vector<std::uint32_t>& parts() const noexcept { return parts_; }
  /// `1.2.3`; `-` for the empty version.
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const PodVersion&, const PodVersion&) = default;
  friend std::strong_ordering operator<=>(const PodVersion& a, const PodVersion& b) = default;

 private:
  std::vector<std::uint32_t> parts_;
};

}  // namespace elfin::assignment

template <>
struct fmt::formatter<elfin::assignment::PodVersion> : fmt::formatter<std::string_view> {
  auto format(const elfin::assignment::PodVersion& version, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(version.to_string(), ctx);
  }
};
