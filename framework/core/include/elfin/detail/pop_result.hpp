// PopResult: what taking an actor's next message gave — the one fact about the mailbox that the
// receiving templates (Context::try_recv, the recv awaitable) need; the mailbox itself is the
// runtime's (elfin/internal/mailbox.hpp).
#pragma once

namespace elfin::detail {

enum class PopResult : unsigned char { Item, Empty, Closed };

}  // namespace elfin::detail
