// Waker: a handle that makes a suspended actor (or a blocked test proxy) run again.
#pragma once

#include <memory>

namespace elfin::detail {

class ActorCell;

class Waker {
 public:
  Waker() = default;
  explicit Waker(std::shared_ptr<ActorCell> cell) : cell_(std::move(cell)) {}
  /// Schedules the actor (or signals the proxy's thread). Safe from any thread.
  void wake() const;
  [[nodiscard]] explicit operator bool() const { return static_cast<bool>(cell_); }
  [[nodiscard]] ActorCell* cell() const { return cell_.get(); }
  void reset() { cell_.reset(); }

 private:
  std::shared_ptr<ActorCell> cell_;
};

}  // namespace elfin::detail
