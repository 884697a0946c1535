// An actor's life in the runtime after its group made it: registered in the address book and the
// census, started (Initializing, then scheduled), and at the end either kept for a restart or
// closed for good and unregistered. register/start/forget/unregister are declared with the group
// runtime (elfin/detail/group_runtime.hpp), which calls them; these two are the runtime's own.
//
// Thread safety: each on the thread that owns the actor at that moment (the worker that ran its
// last step, or the system's destructor once no worker runs).
#pragma once

namespace elfin::detail {

class ActorCell;

/// Runs when an actor's exec has finished: its final status, a restart or its end.
void finish_actor(ActorCell& cell);

/// Ends an actor whose kill was requested (ActorCell::request_kill), on the worker that took it
/// instead of resuming it: closed for good (queued requests fail, sources and frame destroyed,
/// the frame's destructors running on this thread), Terminated with the kill's reason, never
/// restarted, unregistered.
void end_killed(ActorCell& cell);

/// The end of an actor's input, written once for every way an actor stops for good (it finished,
/// it was forgotten while waiting for a restart, or termination gave up on it at shutdown): refuse
/// new messages, make the cell Dead so a notify is a no-op, drop what is still queued (a request
/// among it fails: its recipient finished before handling it), then the actor's sources (timers
/// cancelled, signals unsubscribed) and its coroutine frame, while every cell is still alive.
void close_for_good(ActorCell& cell);

}  // namespace elfin::detail
