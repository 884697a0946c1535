#include "sources/signal_dispatcher.hpp"

#include <future>

#include <asio/post.hpp>

#include <elfin/detail/signal_core.hpp>
#include <elfin/internal/thread_name.hpp>

namespace elfin::detail {

SignalDispatcher::~SignalDispatcher() {
  if (!thread_.joinable()) return;
  asio::post(io_, [this] {
    asio::error_code ignored;
    set_->cancel(ignored);
    set_->clear(ignored);  // restores the default dispositions
    work_.reset();
  });
  thread_.join();
}

void SignalDispatcher::subscribe(int signo, std::weak_ptr<SignalCore> source) {
  bool install = false;
  {
    std::lock_guard lock(mu_);
    subscribers_[signo].push_back(std::move(source));
    install = watched_.insert(signo).second;
    if (!thread_.joinable()) {
      set_.emplace(io_);
      work_.emplace(io_.get_executor());
      wait();  // nothing runs on io_ before the thread starts, so this is not concurrent
      thread_ = std::thread([this] {
        name_this_thread("elfin-signals");
        io_.run();
      });
    }
  }
  if (!install) return;
  // The set belongs to the io thread; add the signal there and wait, so the handler is in place
  // when `attach` returns.
  std::promise<void> added;
  asio::post(io_, [&] {
    asio::error_code ignored;
    set_->add(signo, ignored);
    added.set_value();
  });
  added.get_future().wait();
}

void SignalDispatcher::wait() {
  if (!set_) return;  // emplaced before the first call and never reset: this never returns
  set_->async_wait([this](const asio::error_code& ec, int signo) {
    if (ec) return;  // cancelled: the system stops
    deliver(signo);
    wait();
  });
}

void SignalDispatcher::deliver(int signo) {
  std::vector<std::shared_ptr<SignalCore>> targets;
  {
    std::lock_guard lock(mu_);
    auto& list = subscribers_[signo];
    std::erase_if(list, [](const std::weak_ptr<SignalCore>& s) { return s.expired(); });
    for (const auto& weak : list) {
      if (auto source = weak.lock()) targets.push_back(std::move(source));
    }
  }
  for (const auto& source : targets) source->on_signal();
}

}  // namespace elfin::detail
