// Template bodies for message.hpp.
#pragma once

#include <cstring>

#include <elfin/detail/envelope_block.hpp>
#include <elfin/detail/request_ops.hpp>
#include <elfin/message.hpp>

namespace elfin {

namespace detail {
/// A msgpack stream appending to a std::string.
struct StringSink {
  std::string& out;
  void write(const char* data, std::size_t size) { out.append(data, size); }
};

/// Declared with ELFIN_NO_DUMPING.
template <class M>
inline constexpr bool kNoDumping = requires { typename M::elfin_no_dumping; };

/// MessageVTable::copy_for_dump of an `M`: a copy of its bytes is a valid `M` only for a
/// trivially copyable type (an implicit-lifetime type: memcpy creates the object). The size is a
/// constant here, so the copy is a couple of moves, not a call to memcpy.
template <class M>
constexpr auto copy_for_dump_of() noexcept -> void (*)(const void*, void*) noexcept {
  if constexpr (std::is_trivially_copyable_v<M> && sizeof(M) <= kDumpCopyMaxSize && alignof(M) <= 8) {
    return [](const void* msg, void* out) noexcept { std::memcpy(out, msg, sizeof(M)); };
  } else {
    return nullptr;
  }
}

template <class M>
const RequestOps* request_ops_of() noexcept {
  if constexpr (Request<M>) {
    static_assert(is_encodable<typename M::Response>(),
                  "a request's response type must be encodable: a number, bool, std::string, an ELFIN_ENUM, "
                  "an ELFIN_PART or ELFIN_MESSAGE struct, or std::optional, std::variant, std::vector, "
                  "elfin::Result, std::map of those (elfin/evolution.hpp)");
    return request_ops_for<typename M::Response>();
  } else {
    return nullptr;
  }
}
}  // namespace detail

template <Message M>
const MessageVTable& vtable_of() noexcept {
  static const MessageVTable vtable{
      .protocol = M::elfin_protocol,
      .name = M::elfin_name,
      .is_request = Request<M>,
      .is_system = detail::kIsSystemMessage<M>,
      .dumping_allowed = !detail::kNoDumping<M>,
      .copy_for_dump = detail::copy_for_dump_of<M>(),
      .clone = [](const void* m) -> void* { return new M(*static_cast<const M*>(m)); },
      .destroy = [](void* m) noexcept { delete static_cast<M*>(m); },
      .pack =
          [](const void* m, std::string& out) {
            detail::StringSink sink{out};
            msgpack::packer<detail::StringSink> packer(sink);
            packer.pack(*static_cast<const M*>(m));
          },
      .unpack = [](const msgpack::object& obj) -> void* {
        auto m = std::make_unique<M>();
        obj.convert(*m);
        return m.release();
      },
      .make_block = [](void* m) -> detail::EnvelopeBlock* {
        auto* block = new detail::TypedBlock<M>(std::move(*static_cast<M*>(m)));
        block->vtable = &vtable_of<M>();
        return block;
      },
      .unpack_block = [](const msgpack::object& obj) -> detail::EnvelopeBlock* {
        auto block = std::make_unique<detail::TypedBlock<M>>(M{});
        obj.convert(block->message);
        block->vtable = &vtable_of<M>();
        return block.release();
      },
      .destroy_block = [](detail::EnvelopeBlock* b) noexcept { delete static_cast<detail::TypedBlock<M>*>(b); },
      .data = [](const detail::EnvelopeBlock* b) noexcept -> const void* {
        return &static_cast<const detail::TypedBlock<M>*>(b)->message;
      },
      .request_ops = detail::request_ops_of<M>(),
  };
  return vtable;
}

}  // namespace elfin
