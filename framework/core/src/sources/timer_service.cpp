#include <elfin/detail/timer_service.hpp>
#include <elfin/internal/thread_name.hpp>

#include <vector>

namespace elfin::detail {

TimerService::TimerService(bool virtual_time, std::optional<TimePoint> virtual_start)
    : virtual_(virtual_time), virtual_now_(virtual_start.value_or(Clock::now()).time_since_epoch().count()) {}

TimerService::~TimerService() { shutdown(); }

void TimerService::set_fire_batch(std::function<void()> begin, std::function<void()> end) {
  batch_begin_ = std::move(begin);
  batch_end_ = std::move(end);
}

TimerService::TimePoint TimerService::now() const {
  if (!virtual_) return Clock::now();
  return TimePoint{Clock::duration{virtual_now_.load(std::memory_order_relaxed)}};
}

TimerService::TimerId TimerService::schedule_at(TimePoint when, std::function<void()> fire) {
  bool wake = false;
  TimerId id = 0;
  {
    std::lock_guard lock(mu_);
    id = next_id_++;
    if (stopping_) return id;  // never fires: the system is gone
    // The thread wakes only when the new timer becomes the earliest one.
    wake = queue_.empty() || Key{when, id} < queue_.begin()->first;
    queue_.emplace(Key{when, id}, std::move(fire));
    deadlines_.emplace(id, when);
    if (!virtual_ && !thread_.joinable()) {
      thread_ = std::thread([this] {
        name_this_thread("elfin-timers");
        thread_main();
      });
    }
  }
  if (wake && !virtual_) cv_.notify_one();
  return id;
}

TimerService::TimerId TimerService::schedule_after(std::chrono::nanoseconds delay, std::function<void()> fire) {
  return schedule_at(now() + std::chrono::duration_cast<Clock::duration>(delay), std::move(fire));
}

bool TimerService::cancel(TimerId id) {
  std::function<void()> dropped;  // destroyed outside the lock: it may own things that cancel timers
  std::lock_guard lock(mu_);
  auto it = deadlines_.find(id);
  if (it == deadlines_.end()) return false;
  auto node = queue_.extract(Key{it->second, id});
  deadlines_.erase(it);
  dropped = std::move(node.mapped());
  return true;
}

std::size_t TimerService::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

std::optional<TimerService::TimePoint> TimerService::next_deadline() const {
  std::lock_guard lock(mu_);
  if (queue_.empty()) return std::nullopt;
  return queue_.begin()->first.first;
}

bool TimerService::pop_due(TimePoint limit, Key& key, std::function<void()>& fire) {
  if (queue_.empty() || queue_.begin()->first.first > limit) return false;
  auto node = queue_.extract(queue_.begin());
  key = node.key();
  fire = std::move(node.mapped());
  deadlines_.erase(key.second);
  return true;
}

void TimerService::thread_main() {
  // At most this many callbacks per pass: a pass holds the actors it woke until its end.
  static constexpr std::size_t kMaxPerPass = 1024;
  std::vector<std::function<void()>> due;
  std::unique_lock lock(mu_);
  while (!stopping_) {
    Key key;
    std::function<void()> fire;
    const TimePoint now = Clock::now();
    while (due.size() < kMaxPerPass && pop_due(now, key, fire)) due.push_back(std::move(fire));
    if (!due.empty()) {
      // Once popped, a timer can no longer be cancelled: `cancel` returns false from here on.
      lock.unlock();
      if (batch_begin_) batch_begin_();
      for (auto& f : due) f();
      if (batch_end_) batch_end_();
      due.clear();  // outside the lock: callbacks may own things that cancel timers
      lock.lock();
      continue;
    }
    if (queue_.empty()) {
      cv_.wait(lock);
    } else {
      // A copy: wait_until reads the deadline again after waking, and by then a `cancel` may
      // have freed the node it lives in.
      const TimePoint deadline = queue_.begin()->first.first;
      cv_.wait_until(lock, deadline);
    }
  }
}

Result<void, TimeError> TimerService::advance_to(TimePoint until,
                                                 const std::function<Result<void, TimeError>()>& settle) {
  if (!virtual_) return Err{TimeError(TimeError::RealTime, "time can only be advanced under virtual time")};
  for (;;) {
    std::vector<std::function<void()>> batch;
    {
      std::lock_guard lock(mu_);
      if (stopping_ || queue_.empty() || queue_.begin()->first.first > until) break;
      const TimePoint at = queue_.begin()->first.first;
      // Never backwards: an overdue timer fires "now".
      if (at > now()) virtual_now_.store(at.time_since_epoch().count(), std::memory_order_relaxed);
      Key key;
      std::function<void()> fire;
      while (pop_due(at, key, fire)) batch.push_back(std::move(fire));
    }
    // Callbacks of one instant run in order; one that schedules another timer for this same
    // instant (a zero delay) gets it fired in the next round, after the system settled.
    for (auto& fire : batch) fire();
    batch.clear();
    if (auto settled = settle(); !settled) return settled;
  }
  if (until > now()) virtual_now_.store(until.time_since_epoch().count(), std::memory_order_relaxed);
  return {};
}

void TimerService::shutdown() {
  std::map<Key, std::function<void()>> dropped;
  std::thread thread;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    dropped.swap(queue_);
    deadlines_.clear();
    thread = std::move(thread_);
  }
  cv_.notify_all();
  // Never called from a callback (the system stops from another thread), so joining is safe.
  if (thread.joinable()) thread.join();
  // `dropped` dies here, outside the lock: callbacks may own state whose destructors cancel timers.
}

}  // namespace elfin::detail
