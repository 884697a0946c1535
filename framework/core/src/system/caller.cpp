#include <elfin/caller.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include <elfin/actor_group.hpp>
#include <elfin/detail/actor_cell.hpp>
#include <elfin/detail/group_runtime.hpp>
#include <elfin/detail/observation.hpp>
#include <elfin/detail/supervisor.hpp>
#include <elfin/map_router.hpp>
#include <elfin/messages.hpp>

#include <elfin/internal/thread_name.hpp>

namespace elfin {

namespace detail {

// The outstanding calls of one caller by deadline, and the thread that expires them.
//
// Lock order: `mu_` is never held while a call is settled (settling runs the callback, which
// delists, which takes `mu_`): the timer and `stop` take calls out of the book under the lock
// and settle them after releasing it.
class CallRegistry : public std::enable_shared_from_this<CallRegistry> {
 public:
  CallRegistry() = default;
  CallRegistry(const CallRegistry&) = delete;
  CallRegistry& operator=(const CallRegistry&) = delete;
  ~CallRegistry() { stop("the caller was dropped"); }

  /// The calls outstanding with this one; 0 if stopped (not enlisted).
  std::size_t enlist(std::shared_ptr<RequestStateBase> state, CallBook& book,
                     std::chrono::steady_clock::time_point deadline) {
    bool earliest = false;
    std::size_t outstanding = 0;
    {
      std::lock_guard lock(mu_);
      if (stopped_) return 0;
      if (!timer_.joinable()) timer_ = std::thread([this] { expire_loop(); });
      book.registry = weak_from_this();
      book.at = timeline_.emplace(deadline, CallEntry{std::move(state), &book});
      book.listed = true;
      earliest = book.at == timeline_.begin();
      outstanding = timeline_.size();
    }
    if (earliest) cv_.notify_one();
    return outstanding;
  }

  void delist(CallBook& book) {
    std::lock_guard lock(mu_);
    if (!book.listed) return;
    book.listed = false;
    timeline_.erase(book.at);
  }

  void stop(const std::string& reason) {
    std::vector<std::shared_ptr<RequestStateBase>> left;
    std::thread timer;
    {
      std::lock_guard lock(mu_);
      if (stopped_) return;
      stopped_ = true;
      left = take_locked(timeline_.end());
      timer = std::move(timer_);
    }
    cv_.notify_all();
    if (timer.joinable()) timer.join();
    const RequestError error{RequestError::Stopped, fmt::format("the caller stopped: {}", reason)};
    for (auto& state : left) state->expire(error);
  }

  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(mu_);
    return timeline_.size();
  }

 private:
  /// Takes the calls before `end` out of the book (mu_ held).
  std::vector<std::shared_ptr<RequestStateBase>> take_locked(CallTimeline::iterator end) {
    std::vector<std::shared_ptr<RequestStateBase>> taken;
    for (auto it = timeline_.begin(); it != end;) {
      it->second.book->listed = false;  // the state's completion must not erase it again
      taken.push_back(std::move(it->second.state));
      it = timeline_.erase(it);
    }
    return taken;
  }

  void expire_loop() {
    name_this_thread("elfin-caller");
    std::unique_lock lock(mu_);
    while (!stopped_) {
      if (timeline_.empty()) {
        cv_.wait(lock);
        continue;
      }
      const auto next = timeline_.begin()->first;
      if (std::chrono::steady_clock::now() < next) {
        cv_.wait_until(lock, next);
        continue;
      }
      auto due = take_locked(timeline_.upper_bound(std::chrono::steady_clock::now()));
      lock.unlock();
      for (auto& state : due) {
        state->expire(RequestError{RequestError::TimedOut, "no answer by the call's deadline"});
      }
      due.clear();  // the last references may go here, outside the lock
      lock.lock();
    }
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  CallTimeline timeline_;  // guarded by mu_

  bool stopped_ = false;  // guarded by mu_
  std::thread timer_;     // guarded by mu_
};

void delist_call(CallBook& book) noexcept {
  if (auto registry = book.registry.lock()) registry->delist(book);
}

}  // namespace detail

namespace {
using CallerKey = std::uint32_t;
using Callers = detail::Supervisor<NoConfig, CallerKey>;
std::atomic<CallerKey> g_next_key{0};
}  // namespace

struct Caller::Shared {
  std::shared_ptr<detail::ActorCell> cell;
  std::shared_ptr<detail::CallRegistry> registry = std::make_shared<detail::CallRegistry>();
  // Dumping and telemetry record per actor, from the thread running it; a caller has many threads.
  std::mutex observe_mu;

  ~Shared() { registry->stop("the caller was dropped"); }
};

Blueprint Caller::blueprint() {
  return ActorGroup()
      .router(MapRouter<CallerKey>([](const Envelope& e) {
        if (e.is<ValidateConfig>()) return Outcome<CallerKey>::Default();
        return Outcome<CallerKey>::Discard();  // callers take no config and no routed messages
      }))
      .external();
}

Result<Caller, std::string> Caller::attach(System& system) {
  auto* group = system.core_group(kGroup);
  if (group == nullptr) {
    return Err{fmt::format("the system has no group `{}`: mount elfin::Caller::blueprint() there", kGroup)};
  }
  if (!group->traits().external) return Err{fmt::format("the group `{}` is not Caller::blueprint()", kGroup)};
  auto shared = std::make_shared<Shared>();
  shared->cell = static_cast<Callers*>(group)->actor(g_next_key.fetch_add(1), true);
  if (!shared->cell) return Err{std::string("the system is terminating: no caller can join it")};
  shared->cell->set_trace_id(TraceId::generate());
  std::ignore = shared->cell->close_mailbox();  // a caller receives only responses
  return Caller{std::move(shared)};
}

Caller::Caller(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
Caller::~Caller() = default;

Addr Caller::addr() const { return shared_->cell->addr(); }

void Caller::stop(const std::string& reason) { shared_->registry->stop(reason); }

std::size_t Caller::outstanding() const { return shared_->registry->size(); }

void Caller::observe(const Envelope& envelope) const {
  auto& group = shared_->cell->group();
  if (!group.dumping().active() && !group.telemetry().active()) return;
  std::lock_guard lock(shared_->observe_mu);
  detail::observe_sent(*shared_->cell, envelope);
}

detail::SendOp Caller::make_op(Addr to, Envelope envelope, detail::SendMode mode, bool alone) const {
  detail::SendOp op{shared_->cell->group().system(), to, std::move(envelope), mode};
  op.carry_directly(alone);
  return op;
}

bool Caller::run_op(detail::SendOp& op, Clock::time_point deadline) const {
  detail::ActorCell* cell = shared_->cell.get();
  for (;;) {
    // Read the count first: a slot freed after this read wakes the wait below.
    const std::uint64_t seen = cell->external_signals();
    if (op.run(cell)) return true;
    if (!cell->wait_external_after(seen, deadline) && Clock::now() >= deadline) return op.run_until_full();
  }
}

std::size_t Caller::enlist(std::shared_ptr<detail::RequestStateBase> state, detail::CallBook& book,
                           Clock::time_point deadline) const {
  return shared_->registry->enlist(std::move(state), book, deadline);
}

}  // namespace elfin
