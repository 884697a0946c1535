#include <elfin/wal/hard_state.hpp>

namespace elfin::wal {

namespace {

void put(std::byte* out, std::uint64_t value) noexcept {
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<std::byte>((value >> (8 * i)) & 0xFF);
}
std::uint64_t get(const std::byte* in) noexcept {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8; ++i) value |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  return value;
}

}  // namespace

std::array<std::byte, kHardStateBytes> encode_hard_state(const HardState& state) noexcept {
  std::array<std::byte, kHardStateBytes> out{};
  put(out.data(), state.term);
  put(out.data() + 8, state.vote);
  put(out.data() + 16, state.commit);
  return out;
}

std::optional<HardState> decode_hard_state(std::span<const std::byte> payload) noexcept {
  if (payload.size() < kHardStateBytes) return std::nullopt;
  return HardState{get(payload.data()), get(payload.data() + 8), get(payload.data() + 16)};
}

}  // namespace elfin::wal
