// Targets: the actors one send resolved to. Unicast is the common case, so a few fit inline (and
// only the used ones are constructed and destroyed) and a send does not allocate for its list.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace elfin::detail {

class ActorCell;

class Targets {
 public:
  Targets() = default;
  Targets(Targets&& other) noexcept
      : overflow_(std::move(other.overflow_)), size_(other.size_), absorbed_(other.absorbed_) {
    for (std::size_t i = 0; i < std::min(size_, kInline); ++i) {
      std::construct_at(&inline_[i].cell, std::move(other.inline_[i].cell));
    }
    other.clear();
  }
  Targets& operator=(Targets&&) = delete;
  Targets(const Targets&) = delete;
  Targets& operator=(const Targets&) = delete;
  ~Targets() { clear(); }

  void push(std::shared_ptr<ActorCell> cell) {
    if (size_ < kInline) {
      std::construct_at(&inline_[size_].cell, std::move(cell));
    } else {
      overflow_.push_back(std::move(cell));
    }
    ++size_;
  }
  void reserve(std::size_t n) {
    if (n > kInline) overflow_.reserve(n - kInline);
  }
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  /// The group's supervisor took the message itself (e.g. SubscribeToActorStatuses): delivered,
  /// though to no actor.
  void absorb() { absorbed_ = true; }
  [[nodiscard]] bool absorbed() const { return absorbed_; }
  [[nodiscard]] ActorCell* operator[](std::size_t i) const {
    return i < kInline ? inline_[i].cell.get() : overflow_[i - kInline].get();
  }

 private:
  void clear() {
    for (std::size_t i = 0; i < std::min(size_, kInline); ++i) std::destroy_at(&inline_[i].cell);
    overflow_.clear();
    size_ = 0;
  }
  union Slot {
    Slot() {}
    ~Slot() {}
    std::shared_ptr<ActorCell> cell;
  };
  static constexpr std::size_t kInline = 4;
  std::array<Slot, kInline> inline_;
  std::vector<std::shared_ptr<ActorCell>> overflow_;
  std::size_t size_ = 0;
  bool absorbed_ = false;
};

}  // namespace elfin::detail
