// Recorder: collects a History while a program runs. Each client (a thread, a coroutine, a
// simulated user) takes a Client of its own and records into that client's buffer with no lock
// and no shared write: `invoke` before the request leaves, then exactly one of `ok` (the answer),
// `failed` (certainly not applied: left out of the history) or `unknown` (no answer: pending).
// An operation left open when the history is taken counts as unknown.
//
//   Recorder<KvInput, KvOutput> recorder;
//   auto& client = recorder.client();                 // once per client
//   auto op = client.invoke(KvInput::put("k", "v"));
//   auto answer = store.put("k", "v");
//   answer ? client.ok(op, KvOutput::ok(answer->version)) : client.unknown(op);
//   ...
//   auto history = recorder.history();                // once the clients stopped
//
// Time comes from the recorder's clock: by default nanoseconds of the steady clock since the
// recorder was made; a simulation passes its own (virtual time, or an event counter when one
// thread plays every client, which orders every event exactly).
//
// Thread safety: `client()` from any thread; a Client from one thread at a time; `history()`
// once no client records any more.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <elfin/linearizability/history.hpp>

namespace elfin::linearizability {

template <class Input, class Output>
class Recorder {
 public:
  using Clock = std::function<Time()>;
  using Op = Operation<Input, Output>;

  /// An operation a client started: what `ok`, `failed` and `unknown` close.
  class Ticket {
   public:
    Ticket() = default;

   private:
    friend class Recorder;
    explicit Ticket(std::size_t index) : index_(index) {}
    std::size_t index_ = SIZE_MAX;
  };

  class Client {
   public:
    [[nodiscard]] std::uint64_t id() const { return id_; }
    [[nodiscard]] Ticket invoke(Input input) {
      ops_.push_back(Op{id_, clock_(), std::nullopt, std::move(input), std::nullopt});
      state_.push_back(State::Open);
      return Ticket{ops_.size() - 1};
    }
    /// The answer came back.
    void ok(Ticket ticket, Output output) {
      Op& op = ops_.at(ticket.index_);
      op.complete = clock_();
      op.output = std::move(output);
      state_.at(ticket.index_) = State::Done;
    }
    /// Certainly not applied (refused before anything happened): not part of the history.
    void failed(Ticket ticket) { state_.at(ticket.index_) = State::Failed; }
    /// No answer: it may have been applied at any time from its invocation on, or never.
    void unknown(Ticket ticket) { state_.at(ticket.index_) = State::Done; }

    Client(std::uint64_t id, Clock clock) : id_(id), clock_(std::move(clock)) {}

   private:
    friend class Recorder;
    enum class State : std::uint8_t { Open, Done, Failed };
    std::uint64_t id_;
    Clock clock_;
    std::vector<Op> ops_;
    std::vector<State> state_;
  };

  explicit Recorder(Clock clock = {}) : clock_(std::move(clock)) {
    if (!clock_) {
      clock_ = [start = std::chrono::steady_clock::now()] {
        return static_cast<Time>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
      };
    }
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  /// A new client (ids 1, 2, ...). The reference stays valid as long as the recorder.
  [[nodiscard]] Client& client() {
    std::lock_guard lock(mutex_);
    return clients_.emplace_back(clients_.size() + 1, clock_);
  }

  /// Every recorded operation but the failed ones, clients in order of creation.
  [[nodiscard]] History<Input, Output> history() const {
    std::lock_guard lock(mutex_);
    History<Input, Output> out;
    for (const Client& c : clients_) {
      for (std::size_t i = 0; i < c.ops_.size(); ++i) {
        if (c.state_[i] == Client::State::Failed) continue;
        out.operations.push_back(c.ops_[i]);
      }
    }
    return out;
  }

 private:
  Clock clock_;
  mutable std::mutex mutex_;
  std::deque<Client> clients_;  // a deque: clients keep their address as more are added
};

}  // namespace elfin::linearizability
