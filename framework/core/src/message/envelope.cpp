#include <elfin/envelope.hpp>

#include <elfin/request.hpp>

namespace elfin {

void Envelope::release() noexcept {
  if (block_ == nullptr) return;
  if ((flags_ & kObligated) != 0) settle_obligation();
  // The last handle skips the read-modify-write (on a receiver's core, a stall of its own in a
  // many-to-one stream): a count of 1 is this handle's reference, and only a handle can add one.
  // Acquire pairs with the decrement of a handle that went before, on whatever thread.
  if (block_->refs.load(std::memory_order_acquire) == 1 || block_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    block_->vtable->destroy_block(block_);
  }
  block_ = nullptr;
}

void Envelope::settle_obligation() noexcept {
  // A request dropped by its recipient: Ignored if the actor received it (and chose not to
  // answer), Failed if it never got that far (its mailbox was dropped with the message inside).
  if (block_->request) {
    if ((flags_ & kReceived) != 0) {
      detail::abandon_answer(block_->request, RequestError::Ignored);
    } else {
      block_->request->fail(RequestError{RequestError::Failed, std::string(detail::kFinishedFirst)});
    }
  }
  flags_ &= static_cast<std::uint8_t>(~kObligated);
}

}  // namespace elfin
