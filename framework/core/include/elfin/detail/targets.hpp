// Targets: the actors one send resolved to. Unicast is the common case, so a few fit inline (and
// only the used ones are constructed and destroyed) and a send does not allocate for its list.
// The first target may be borrowed from the sending actor's route cache (route_cache.hpp): then
// the Targets holds no reference to it, and pins the cache entry that does until it is destroyed.
#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include <elfin/detail/route_cache.hpp>

namespace elfin::detail {

class ActorCell;

class Targets {
 public:
  Targets() = default;
  Targets(Targets&& other) noexcept
      : overflow_(std::move(other.overflow_)),
        size_(other.size_),
        absorbed_(other.absorbed_),
        borrowed_(other.borrowed_),
        pinned_(other.pinned_) {
    for (std::size_t i = first_owned(); i < std::min(size_, kInline); ++i) {
      std::construct_at(&inline_[i].cell, std::move(other.inline_[i].cell));
    }
    other.pinned_ = nullptr;  // the pin moved here with the borrowed target
    if (pinned_ != nullptr) {
      for (std::size_t i = 1; i < std::min(other.size_, kInline); ++i) std::destroy_at(&other.inline_[i].cell);
      other.borrowed_ = nullptr;
      other.overflow_.clear();
      other.size_ = 0;
      return;
    }
    other.clear();
  }
  Targets& operator=(Targets&&) = delete;
  Targets(const Targets&) = delete;
  Targets& operator=(const Targets&) = delete;
  ~Targets() { clear(); }

  void push(std::shared_ptr<ActorCell> cell) {
    // clang-tidy 19 reports the two branches as identical; they are not (an inline slot, the vector).
    if (size_ < kInline) {  // NOLINT(bugprone-branch-clone)
      std::construct_at(&inline_[size_].cell, std::move(cell));
    } else {
      overflow_.push_back(std::move(cell));
    }
    ++size_;
  }
  /// The first target, kept alive by `cache` (which stays pinned while this Targets lives).
  void push_borrowed(ActorCell* cell, RouteCache& cache) {
    assert(size_ == 0 && pinned_ == nullptr);
    borrowed_ = cell;
    pinned_ = &cache;
    ++cache.pins;
    size_ = 1;
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
    if (i == 0 && pinned_ != nullptr) return borrowed_;
    return i < kInline ? inline_[i].cell.get() : overflow_[i - kInline].get();
  }

 private:
  /// The first inline slot in use (slot 0 stays empty while the first target is borrowed).
  [[nodiscard]] std::size_t first_owned() const { return pinned_ != nullptr ? 1 : 0; }
  void clear() {
    for (std::size_t i = first_owned(); i < std::min(size_, kInline); ++i) std::destroy_at(&inline_[i].cell);
    if (pinned_ != nullptr) --std::exchange(pinned_, nullptr)->pins;
    borrowed_ = nullptr;
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
  ActorCell* borrowed_ = nullptr;  // the first target while pinned_ is set
  RouteCache* pinned_ = nullptr;
};

}  // namespace elfin::detail
