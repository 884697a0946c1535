// SignalCore: the message-independent part of `Signal<M>` — its subscription to the system's
// signal dispatcher and the "a signal arrived" flag.
//
// Thread safety: the dispatcher's io thread calls `on_signal`; the rest runs on the actor's
// thread; shared state is guarded by `mu_`.
#pragma once

#include <memory>
#include <mutex>

#include <elfin/detail/source.hpp>

namespace elfin::detail {

class SignalCore : public SourceBase, public std::enable_shared_from_this<SignalCore> {
 public:
  explicit SignalCore(int signo) : signo_(signo) {}

  void attach(ActorCell& cell) override;
  Poll poll(ActorCell& cell, Envelope& out) override;
  void detach() override;
  [[nodiscard]] bool finished() const override;

  /// The dispatcher got our signal: mark it pending and wake the actor. Any thread.
  void on_signal();
  [[nodiscard]] int signo() const { return signo_; }

 protected:
  /// A new envelope for one delivery (a copy of the message, a new trace id).
  virtual Envelope make_message(ActorCell& cell) = 0;

 private:
  const int signo_;
  mutable std::mutex mu_;
  std::weak_ptr<ActorCell> cell_;
  bool pending_ = false;
  bool done_ = false;
};

}  // namespace elfin::detail
