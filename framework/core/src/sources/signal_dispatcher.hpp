// SignalDispatcher: the system's one listener for Unix signals, delivering each to every
// attached Signal source that waits for it.
//
// One Asio signal set on an io thread of its own, both started by the first subscription, so a
// system without Signal sources installs no handler at all (and `elfin::run` behaves as before).
// Asio lets several signal sets in a process watch the same signal and tells each of them, so
// `elfin::run`'s own SIGTERM/SIGINT set keeps working next to this one. The set only grows: a
// signal stays caught until the system stops, like tokio's.
//
// Thread safety: `subscribe` from any thread (it waits until the handler is installed, so a
// signal raised right after `ctx.attach` returns is not missed); delivery on the io thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>

namespace elfin::detail {

class SignalCore;

class SignalDispatcher {
 public:
  SignalDispatcher() = default;
  SignalDispatcher(const SignalDispatcher&) = delete;
  SignalDispatcher& operator=(const SignalDispatcher&) = delete;
  ~SignalDispatcher();

  void subscribe(int signo, std::weak_ptr<SignalCore> source);

 private:
  void wait();
  void deliver(int signo);

  std::mutex mu_;
  std::map<int, std::vector<std::weak_ptr<SignalCore>>> subscribers_;  // guarded by mu_
  std::set<int> watched_;                                              // guarded by mu_
  asio::io_context io_;
  std::optional<asio::signal_set> set_;  // created with the thread; used on the io thread only
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

}  // namespace elfin::detail
