// RingBuffer: a growable FIFO over one array, so a busy mailbox stops allocating once it has
// reached its working size (std::deque keeps allocating blocks).
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

namespace elfin::detail {

template <class T>
class RingBuffer {
 public:
  RingBuffer() = default;
  RingBuffer(RingBuffer&& other) noexcept { swap(other); }
  RingBuffer& operator=(RingBuffer&& other) noexcept {
    RingBuffer tmp(std::move(other));
    swap(tmp);
    return *this;
  }
  ~RingBuffer() { clear(); }

  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] std::size_t size() const { return size_; }

  void push_back(T value) {
    if (size_ == cap_) grow();
    std::construct_at(&data_[(head_ + size_) & (cap_ - 1)].value, std::move(value));
    ++size_;
  }
  void push_front(T value) {
    if (size_ == cap_) grow();
    head_ = (head_ + cap_ - 1) & (cap_ - 1);
    std::construct_at(&data_[head_].value, std::move(value));
    ++size_;
  }
  T pop_front() {
    Slot& slot = data_[head_];
    T value = std::move(slot.value);
    std::destroy_at(&slot.value);
    head_ = (head_ + 1) & (cap_ - 1);
    --size_;
    return value;
  }
  T pop_back() {
    Slot& slot = data_[(head_ + size_ - 1) & (cap_ - 1)];
    T value = std::move(slot.value);
    std::destroy_at(&slot.value);
    --size_;
    return value;
  }
  void clear() {
    while (!empty()) pop_front();
  }
  void swap(RingBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(cap_, other.cap_);
    std::swap(head_, other.head_);
    std::swap(size_, other.size_);
  }

 private:
  union Slot {
    Slot() {}
    ~Slot() {}
    T value;
  };
  void grow() {
    std::size_t cap = cap_ ? cap_ * 2 : 8;
    auto data = std::make_unique<Slot[]>(cap);
    for (std::size_t i = 0; i < size_; ++i) {
      Slot& from = data_[(head_ + i) & (cap_ - 1)];
      std::construct_at(&data[i].value, std::move(from.value));
      std::destroy_at(&from.value);
    }
    data_ = std::move(data);
    cap_ = cap;
    head_ = 0;
  }

  std::unique_ptr<Slot[]> data_;
  std::size_t cap_ = 0;  // a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace elfin::detail
