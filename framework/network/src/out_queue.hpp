// OutQueue: the bytes a connection has queued for its socket, kept as a list of buffers that one
// gathering write (`sendmsg`, asio's buffer sequences) sends in order.
//
// A forwarder hands over a whole batch of encoded frames at a time, up to a few hundred KiB.
// Appending it to one growing string copies every byte once more and, as the string outgrows its
// allocation, touches fresh pages: with 64 KiB messages that cost as much as encoding them. Here a
// big batch joins the list as it is (its buffer moves, its bytes do not) and the caller gets a
// spare buffer back, one that an earlier write emptied, with its capacity. Small frames (a
// Response, a Credit, a batch of a few messages) are appended to the last buffer while it is
// small, so a stream of them still leaves in few, large buffers.
//
// Not thread-safe: the connection guards its queues with its own lock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace elfin::network::detail {

class OutQueue {
 public:
  /// A batch at least this big joins the list as its own buffer; a smaller one is copied.
  static constexpr std::size_t kOwnBufferBytes = std::size_t{16} * 1024;

  [[nodiscard]] bool empty() const { return bytes_ == 0; }
  /// Bytes queued and not yet consumed.
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

  /// `write(std::string&)` appends frames to the queue's last buffer.
  template <class Write>
  void append_with(Write&& write) {
    std::string& tail = small_tail();
    const std::size_t before = tail.size();
    std::forward<Write>(write)(tail);
    bytes_ += tail.size() - before;
  }
  void append(const std::string& bytes) {
    append_with([&bytes](std::string& tail) { tail += bytes; });
  }
  /// Queues `frames` and leaves it empty, holding a spare buffer's capacity if there is one.
  void take(std::string& frames) {
    if (frames.empty()) return;
    if (frames.size() < kOwnBufferBytes) {
      append(frames);
      frames.clear();
      return;
    }
    bytes_ += frames.size();
    chunks_.push_back(std::move(frames));
    frames = pop_spare();
  }
  /// Moves everything `later` holds to the end of this queue (its spares stay with it).
  void splice(OutQueue& later) {
    if (later.empty()) return;
    later.compact_front();
    for (auto& chunk : later.chunks_) chunks_.push_back(std::move(chunk));
    bytes_ += later.bytes_;
    later.chunks_.clear();
    later.bytes_ = 0;
  }

  /// Calls `f(const char* data, std::size_t size)` for each buffer, in order, from the first
  /// unconsumed byte on.
  template <class F>
  void for_each_buffer(F&& f) const {
    for (std::size_t i = 0; i < chunks_.size(); ++i) {
      const std::size_t skip = i == 0 ? offset_ : 0;
      if (chunks_[i].size() > skip) f(chunks_[i].data() + skip, chunks_[i].size() - skip);
    }
  }
  /// Drops the first `n` bytes (written); emptied buffers become spares.
  void consume(std::size_t n) {
    bytes_ -= n;
    n += offset_;
    offset_ = 0;
    std::size_t done = 0;
    while (done < chunks_.size() && n >= chunks_[done].size()) {
      n -= chunks_[done].size();
      ++done;
    }
    if (done < chunks_.size()) offset_ = n;
    recycle(done);
  }
  /// Drops everything; the buffers become spares.
  void clear() {
    recycle(chunks_.size());
    offset_ = 0;
    bytes_ = 0;
  }

  friend void swap(OutQueue& a, OutQueue& b) noexcept {
    std::swap(a.chunks_, b.chunks_);
    std::swap(a.spares_, b.spares_);
    std::swap(a.offset_, b.offset_);
    std::swap(a.bytes_, b.bytes_);
  }

 private:
  /// Spares kept, and the largest capacity worth keeping: enough for a forwarder's batches in
  /// flight without hoarding what a burst once needed.
  static constexpr std::size_t kMaxSpares = 4;
  static constexpr std::size_t kMaxSpareCapacity = std::size_t{512} * 1024;

  std::string& small_tail() {
    if (chunks_.empty() || chunks_.back().size() >= kOwnBufferBytes) chunks_.push_back(pop_spare());
    return chunks_.back();
  }
  std::string pop_spare() {
    if (spares_.empty()) return {};
    std::string spare = std::move(spares_.back());
    spares_.pop_back();
    return spare;
  }
  /// The first buffer without its consumed bytes (before its bytes move to another queue).
  void compact_front() {
    if (offset_ == 0) return;
    chunks_.front().erase(0, offset_);
    offset_ = 0;
  }
  /// The first `n` buffers leave the list; those worth keeping become spares.
  void recycle(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      std::string& chunk = chunks_[i];
      if (spares_.size() < kMaxSpares && chunk.capacity() <= kMaxSpareCapacity) {
        chunk.clear();
        spares_.push_back(std::move(chunk));
      }
    }
    chunks_.erase(chunks_.begin(), chunks_.begin() + static_cast<std::ptrdiff_t>(n));
  }

  std::vector<std::string> chunks_;
  std::vector<std::string> spares_;
  std::size_t offset_ = 0;  // consumed bytes of chunks_.front()
  std::size_t bytes_ = 0;   // unconsumed bytes in chunks_
};

}  // namespace elfin::network::detail
