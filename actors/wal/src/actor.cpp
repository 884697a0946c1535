// A WAL actor. Its state is a pipeline of batches:
//
//   collecting  appends admitted since the last batch was sealed
//   sealed      full batches waiting for the I/O thread (max_batch_bytes / max_batch_entries)
//   in flight   the one batch the I/O thread is writing and syncing
//
// At most one commit is posted at a time, so what arrives during an fdatasync collects into the
// next batch, which is posted the moment that fdatasync returns (no timer needed: batches grow
// with the load). With nothing in flight a batch is posted at once (after `linger`, if set),
// after the actor took whatever was already in its mailbox. Waiters are answered only from the
// commit's completion, after its fdatasync returned.
//
// While it waits for the requests the last batch answered (regrouping, see `pump`), the actor
// yields once when its mailbox runs dry instead of going idle: the requesters it just woke are
// usually queued on its worker, and each of their requests would otherwise wake the actor for
// itself (a turn per request); behind them it takes them all in one turn.
//
// A batch that fails with NoSpace/WriteFailed was rolled back by the writer; the partitions in it
// roll back to their durable index, and their entries still waiting in later batches (which may
// follow the lost ones) fail with the same error. A failed fdatasync fails every waiter and the
// WAL itself: afterwards everything is answered WalFailed.
//
// Time comes from the system's clock, and under virtual time the I/O runs on the actor's worker
// instead of the I/O thread (see `post`): a simulated cluster's seed then replays the WAL's
// batching exactly.
#include "actor.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <elfin/delay.hpp>
#include <elfin/detail/send_op.hpp>
#include <elfin/detail/timer_service.hpp>
#include <elfin/envelope.hpp>
#include <elfin/handle.hpp>
#include <elfin/internal/system_hooks.hpp>
#include <elfin/logging.hpp>
#include <elfin/messages.hpp>
#include <elfin/wal/format.hpp>
#include <elfin/wal/hard_state.hpp>
#include <elfin/wal/posix_file_system.hpp>

#include "io_thread.hpp"
#include "store.hpp"

namespace elfin::actors::wal::internal {

/// From the I/O thread: completions are waiting (see io_thread.hpp).
struct IoDone {
  ELFIN_MESSAGE(wal_actor, IoDone);
  ELFIN_NO_DUMPING;
};
/// The linger after a first entry ran out.
struct LingerExpired {
  ELFIN_MESSAGE(wal_actor, LingerExpired);
  ELFIN_NO_DUMPING;
};
/// The wait for the partitions answered by the last batch ran out (`generation` tells a stale one).
struct RegroupExpired {
  std::uint64_t generation = 0;
  ELFIN_MESSAGE(wal_actor, RegroupExpired, generation);
  ELFIN_NO_DUMPING;
};

namespace {

namespace pw = protocols::wal;
namespace lw = elfin::wal;

/// After a regroup that counted the waiting requests missed, they are counted every this many
/// batches only (see WalActor::on_committed).
constexpr std::uint64_t kRegroupRetry = 64;

using AppendToken = std::variant<ResponseToken<pw::Append>, ResponseToken<pw::AppendBatch>,
                                 ResponseToken<pw::TruncateAfter>, ResponseToken<pw::SaveHardState>>;

void answer(AppendToken& token, Result<pw::Appended, pw::WalError> result) {
  std::visit([&](auto& t) { std::move(t).respond(std::move(result)); }, token);
}

/// One request admitted into a batch: its records are `records[first, first + count)`.
struct Waiter {
  AppendToken token;
  pw::PartitionId partition = 0;
  std::uint64_t last_index = 0;
  std::uint64_t last_term = 0;
  std::size_t first = 0;
  std::size_t count = 0;
  std::size_t envelope = 0;  ///< which of the batch's envelopes holds the payloads
};

struct Batch {
  std::vector<Envelope> envelopes;  ///< the requests; the records' payloads point into them
  std::vector<lw::Record> records;
  std::vector<Waiter> waiters;
  std::vector<ResponseToken<pw::Flush>> flushes;  ///< answered when this batch is durable
  /// Encoded hard states (SaveHardState): their records point here.
  std::vector<std::unique_ptr<std::array<std::byte, lw::kHardStateBytes>>> payloads;
  std::uint64_t bytes = 0;
  [[nodiscard]] bool empty() const { return waiters.empty(); }
  /// Empty again, keeping the vectors' room for the next batch.
  void clear() {
    envelopes.clear();
    records.clear();
    waiters.clear();
    flushes.clear();
    payloads.clear();
    bytes = 0;
  }
};

std::span<const std::byte> bytes_of(const pw::Payload& payload) {
  return std::as_bytes(std::span(payload.data(), payload.size()));
}

/// The kind of a commit error that left the writer usable (rolled back).
pw::WalErrorKind kind_of(const lw::Error& error) {
  switch (error.kind) {
    case lw::ErrorKind::NoSpace:
      return pw::WalErrorKind::NoSpace;
    case lw::ErrorKind::RecordTooLarge:
      return pw::WalErrorKind::TooLarge;
    default:
      return pw::WalErrorKind::WriteFailed;  // a write, or a rotation's open, rename or header
  }
}

/// Where a partition's log stands for the actor.
struct PartitionState {
  std::uint64_t accepted_index = 0;  ///< last index admitted (durable or in a batch)
  std::uint64_t accepted_term = 0;
  std::uint64_t durable_index = 0;  ///< last index acknowledged
  std::uint64_t durable_term = 0;
};

class WalActor {
 public:
  WalActor(WalContext ctx, FileSystemFactory factory) : ctx_(ctx), factory_(std::move(factory)) {}

  Task<Result<void, std::string>> run() {
    config_ = ctx_.config();
    wal_id_ = ctx_.key();
    if (const auto errors = validate(config_); !errors.empty()) {
      co_return Err{fmt::format("WAL {}: invalid config: {}", wal_id_, fmt::join(errors, "; "))};
    }
    start();
    std::uint64_t taken = 0;  // envelopes taken since the last pump
    bool yielded = false;     // the mailbox ran dry while regrouping and the actor let others run
    for (;;) {
      std::optional<Envelope> envelope;
      if (ready_ && !deferred_.empty()) {
        // What arrived during recovery, in its order, before anything newer.
        envelope = std::move(deferred_.front());
        deferred_.pop_front();
      } else if (taken < config_.max_batch_entries) {
        // Group commit: whatever is queued already joins the batch before it is written.
        if (auto more = ctx_.try_recv()) envelope = std::move(*more);
      }
      if (!envelope && !yielded && regrouping()) {
        // The requesters just answered are likely queued behind this actor: let them run first.
        yielded = true;
        co_await ctx_.yield_now();
        continue;
      }
      yielded = false;
      if (!envelope) {
        pump();
        taken = 0;
        envelope = co_await ctx_.recv();
        if (!envelope) break;
      }
      ++taken;
      if (co_await handle(*envelope, this, &WalActor::on_io_done, &WalActor::on_linger_expired,
                          &WalActor::on_regroup_expired, &WalActor::on_terminate_message, &WalActor::on_config_updated,
                          &WalActor::on_validate_config, &WalActor::on_get_stats)) {
        continue;
      }
      if (!ready_) {
        deferred_.push_back(std::move(*envelope));  // nothing is answered before recovery
        continue;
      }
      // The appends keep their envelope: the batch's records point into its payloads.
      Envelope& held = *envelope;
      co_await handle(
          held,
          [&](const pw::Append& m, ResponseToken<pw::Append> token) {
            on_append(m, std::move(token), std::move(held));
          },
          [&](const pw::AppendBatch& m, ResponseToken<pw::AppendBatch> token) {
            on_append_batch(m, std::move(token), std::move(held));
          },
          [&](const pw::TruncateAfter& m, ResponseToken<pw::TruncateAfter> token) {
            on_truncate(m, std::move(token), std::move(held));
          },
          [&](const pw::SaveHardState& m, ResponseToken<pw::SaveHardState> token) {
            on_save_hard_state(m, std::move(token), std::move(held));
          },
          this, &WalActor::on_read, &WalActor::on_checkpoint, &WalActor::on_flush,
          [&](const Envelope& other) {
            log::warn("WAL {}: unexpected {}.{}", wal_id_, other.protocol(), other.name());
          });
    }
    finish();
    co_return Result<void, std::string>{};
  }

  // --- start --------------------------------------------------------------------------------

  void start() {
    fs_ = factory_ ? factory_(wal_id_) : std::make_shared<lw::PosixFileSystem>();
    detail::SystemCore* system = &detail::ActorCellAccess::cell(ctx_)->group().system();
    timers_ = &detail::timers_of(*system);
    inline_io_ = timers_->is_virtual();
    const Addr self = ctx_.addr();
    io_.emplace([system, self] {
      detail::SendOp op{*system, self, Envelope::make(IoDone{}, Addr{}, TraceId::generate()),
                        detail::SendMode::Unbounded};
      std::ignore = op.run(nullptr);  // a closed mailbox: the actor ends and drains by itself
    });
    StoreOptions options;
    options.dir = config_.dir;
    options.wal_id = wal_id_;
    options.wal_count = config_.wal_count;
    options.writer.segment_bytes = config_.segment_bytes.bytes;
    options.writer.preallocate = config_.preallocate;
    options.writer.max_payload_bytes = config_.max_payload_bytes.bytes;
    ++jobs_in_flight_;
    post([this, fs = fs_.get(), options]() -> IoThread::Completion {
      auto opened = Store::open(*fs, options);
      if (!opened) {
        return [this, error = std::move(opened).error()] {
          --jobs_in_flight_;
          on_open_failed(error);
        };
      }
      store_ = std::move(*opened);  // from now on touched by the I/O thread only
      return [this, ends = store_->ends(), segments = store_->segments()] {
        --jobs_in_flight_;
        on_opened(ends, segments);
      };
    });
  }

  void on_opened(const std::map<pw::PartitionId, PartitionEnd>& ends, std::uint64_t segments) {
    for (const auto& [partition, end] : ends) {
      partitions_[partition] = {end.last_index, end.last_term, end.last_index, end.last_term};
    }
    stats_.segments = segments;
    ready_ = true;  // the run loop takes the deferred requests next
    log::info("WAL {}: recovered {} partition(s) from {} segment(s) in {}", wal_id_, ends.size(), segments,
              config_.dir);
  }

  void on_open_failed(const lw::Error& error) {
    start_error_ = fmt::format("WAL {} in {}: {}", wal_id_, config_.dir, lw::to_string(error));
    log::error("{}; it answers StartFailed until restarted", *start_error_);
    ctx_.set_status(ActorStatus::ALARMING.with_details(*start_error_));
    ready_ = true;
  }

  // --- messages -----------------------------------------------------------------------------

  void on_io_done(const IoDone&) {
    if (io_) io_->drain();
    close_if_done();
  }

  void on_linger_expired(const LingerExpired&) {
    linger_armed_ = false;
    lingered_ = true;
  }

  void on_regroup_expired(const RegroupExpired& regroup) {
    if (regroup.generation != regroup_generation_) return;
    regroup_target_ = 0;  // they are not all coming
    if (regroup_counts_waiting_) {
      // Those that waited came from requesters that do not append again at once (no closed loop):
      // counting them makes every batch wait out the half sync. Count them only now and then.
      regroup_missed_ = true;
      rounds_since_miss_ = 0;
    }
  }

  void on_terminate_message(const Terminate& terminate) {
    if (!terminate.force_close) on_terminate();
  }

  void on_config_updated(const ConfigUpdated&) {
    const Config& next = ctx_.config();
    if (const auto errors = validate_change(config_, next); !errors.empty()) {
      log::error("WAL {}: config update ignored: {}", wal_id_, fmt::join(errors, "; "));
      return;
    }
    // The batch limits and linger apply at once; the file settings at the next start.
    config_.max_batch_bytes = next.max_batch_bytes;
    config_.max_batch_entries = next.max_batch_entries;
    config_.linger = next.linger;
  }

  void on_validate_config(const ValidateConfig& validate, ResponseToken<ValidateConfig> token) {
    auto next = validate.config.decode<Config>();
    if (!next) {
      std::move(token).respond(next.error().message());
      return;
    }
    const auto errors = validate_change(config_, *next);
    std::move(token).respond(errors.empty() ? std::string{} : fmt::format("{}", fmt::join(errors, "; ")));
  }

  void on_get_stats(const pw::GetStats&, ResponseToken<pw::GetStats> token) { std::move(token).respond(stats()); }

  /// The error every request gets in the current state, if any.
  [[nodiscard]] std::optional<pw::WalError> refusal(pw::PartitionId partition) const {
    if (start_error_) return pw::WalError{pw::WalErrorKind::StartFailed, partition, 0, *start_error_};
    if (failed_) return pw::WalError{pw::WalErrorKind::WalFailed, partition, 0, *failed_};
    if (shutting_down_) return pw::WalError{pw::WalErrorKind::ShuttingDown, partition, 0, "the WAL is terminating"};
    return std::nullopt;
  }

  /// Checks that entries `first..first + count - 1` may follow the partition's log.
  [[nodiscard]] std::optional<pw::WalError> order_error(pw::PartitionId partition, std::uint64_t first,
                                                        std::uint64_t count) const {
    const auto it = partitions_.find(partition);
    const std::uint64_t next = it == partitions_.end() ? 1 : it->second.accepted_index + 1;
    const bool known = it != partitions_.end() && it->second.accepted_index != 0;
    if (count == 0) return pw::WalError{pw::WalErrorKind::OutOfOrder, partition, next, "no entries"};
    if (first == 0 || (known && first > next)) {
      return pw::WalError{pw::WalErrorKind::OutOfOrder, partition, next,
                          fmt::format("index {} does not follow the log, which ends at {}", first, next - 1)};
    }
    return std::nullopt;
  }

  std::optional<pw::WalError> size_error(pw::PartitionId partition, std::size_t bytes) const {
    if (bytes <= config_.max_payload_bytes.bytes) return std::nullopt;
    return pw::WalError{
        pw::WalErrorKind::TooLarge, partition, 0,
        fmt::format("{} bytes of payload, over max_payload_bytes = {}", bytes, config_.max_payload_bytes.bytes)};
  }

  void on_append(const pw::Append& m, AppendToken token, Envelope envelope) {
    std::optional<pw::WalError> error = refusal(m.partition);
    if (!error) error = order_error(m.partition, m.index, 1);
    if (!error) error = size_error(m.partition, m.payload.size());
    if (error) return answer(token, Err{std::move(*error)});
    const std::size_t first = collecting_.records.size();
    collecting_.records.push_back({kEntryType, m.partition, m.term, m.index, bytes_of(m.payload)});
    admit(std::move(envelope), std::move(token), m.partition, first);
  }

  void on_append_batch(const pw::AppendBatch& m, AppendToken token, Envelope envelope) {
    std::optional<pw::WalError> error = refusal(m.partition);
    if (!error) error = order_error(m.partition, m.entries.empty() ? 0 : m.entries.front().index, m.entries.size());
    for (std::size_t i = 1; !error && i < m.entries.size(); ++i) {
      if (m.entries[i].index != m.entries[i - 1].index + 1) {
        error = pw::WalError{pw::WalErrorKind::OutOfOrder, m.partition, m.entries[i - 1].index + 1,
                             fmt::format("entry {} of the batch has index {}", i, m.entries[i].index)};
      }
    }
    for (std::size_t i = 0; !error && i < m.entries.size(); ++i)
      error = size_error(m.partition, m.entries[i].payload.size());
    if (error) return answer(token, Err{std::move(*error)});
    const std::size_t first = collecting_.records.size();
    for (const auto& e : m.entries) {
      collecting_.records.push_back({kEntryType, m.partition, e.term, e.index, bytes_of(e.payload)});
    }
    admit(std::move(envelope), std::move(token), m.partition, first);
  }

  void on_truncate(const pw::TruncateAfter& m, AppendToken token, Envelope envelope) {
    if (auto error = refusal(m.partition)) return answer(token, Err{std::move(*error)});
    const std::size_t first = collecting_.records.size();
    collecting_.records.push_back({kTruncateType, m.partition, 0, m.index, {}});
    admit(std::move(envelope), std::move(token), m.partition, first);
  }

  void on_save_hard_state(const pw::SaveHardState& m, AppendToken token, Envelope envelope) {
    if (auto error = refusal(m.partition)) return answer(token, Err{std::move(*error)});
    // The payload lives in the batch (the request holds the fields, not their encoding).
    auto payload = std::make_unique<std::array<std::byte, lw::kHardStateBytes>>(
        lw::encode_hard_state({m.state.term, m.state.vote, m.state.commit}));
    const std::size_t first = collecting_.records.size();
    collecting_.records.push_back({kHardStateType, m.partition, m.state.term, 0, *payload});
    collecting_.payloads.push_back(std::move(payload));
    admit(std::move(envelope), std::move(token), m.partition, first);
  }

  /// Puts a checked request into the collecting batch, whose records from `first` on are its own
  /// (appended by the caller).
  void admit(Envelope envelope, AppendToken token, pw::PartitionId partition, std::size_t first) {
    Batch& batch = collecting_;
    const std::size_t count = batch.records.size() - first;
    Waiter waiter{std::move(token), partition, 0, 0, first, count, batch.envelopes.size()};
    PartitionState& state = partitions_[partition];
    const lw::Record& last = batch.records.back();
    if (last.type == kHardStateType) {
      // No entry: the answer carries the partition's log end as it stands.
    } else if (last.type == kTruncateType) {
      // The term of the entry now last is known only to the store; the answer carries 0 when
      // it was not the actor's own (acknowledged or admitted) last entry.
      state.accepted_term = last.index == state.accepted_index ? state.accepted_term : 0;
      state.accepted_index = std::min(state.accepted_index, last.index);
    } else {
      state.accepted_index = last.index;
      state.accepted_term = last.term;
    }
    waiter.last_index = state.accepted_index;
    waiter.last_term = state.accepted_term;
    for (std::size_t i = first; i < batch.records.size(); ++i) {
      batch.bytes += lw::record_bytes(batch.records[i].payload.size());
    }
    batch.envelopes.push_back(std::move(envelope));
    batch.waiters.push_back(std::move(waiter));
    if (batch.bytes >= config_.max_batch_bytes.bytes || batch.records.size() >= config_.max_batch_entries) seal();
  }

  void seal() {
    if (collecting_.empty()) return;
    // The next collecting batch reuses the room of the last one answered, if there is one.
    std::unique_ptr<Batch> next = spare_ ? std::move(spare_) : std::make_unique<Batch>();
    std::swap(*next, collecting_);
    sealed_.push_back(std::move(next));
    lingered_ = false;
  }

  void on_read(const pw::ReadRange& request, ResponseToken<pw::ReadRange> token) {
    // Reads go on while terminating: a partition may still read what it wrote.
    if (start_error_ || failed_) {
      std::move(token).respond(Err{refusal(request.partition).value_or(pw::WalError{})});
      return;
    }
    ++jobs_in_flight_;
    auto shared = std::make_shared<ResponseToken<pw::ReadRange>>(std::move(token));
    post([this, request, shared]() -> IoThread::Completion {
      auto range = store_->read(request);
      return [this, request, shared, range = std::move(range)]() mutable {
        --jobs_in_flight_;
        if (range) {
          std::move(*shared).respond(std::move(*range));
        } else {
          std::move(*shared).respond(
              Err{pw::WalError{pw::WalErrorKind::WalFailed, request.partition, 0, lw::to_string(range.error())}});
        }
      };
    });
  }

  void on_checkpoint(const pw::Checkpoint& request, ResponseToken<pw::Checkpoint> token) {
    if (auto error = refusal(request.partition)) {
      std::move(token).respond(Err{std::move(*error)});
      return;
    }
    ++jobs_in_flight_;
    auto shared = std::make_shared<ResponseToken<pw::Checkpoint>>(std::move(token));
    post([this, request, shared]() -> IoThread::Completion {
      auto retired = store_->checkpoint(request.partition, request.index);
      const std::uint64_t segments = store_->segments();
      return [this, request, shared, retired = std::move(retired), segments]() mutable {
        --jobs_in_flight_;
        stats_.segments = segments;
        if (retired) {
          std::move(*shared).respond(pw::Checkpointed{request.partition, request.index, *retired});
          return;
        }
        if (retired.error().kind == lw::ErrorKind::SyncFailed) fail(lw::to_string(retired.error()));
        std::move(*shared).respond(
            Err{pw::WalError{pw::WalErrorKind::WalFailed, request.partition, 0, lw::to_string(retired.error())}});
      };
    });
  }

  void on_flush(const pw::Flush&, ResponseToken<pw::Flush> token) {
    if (start_error_ || failed_) {
      std::move(token).respond(Err{refusal(0).value_or(pw::WalError{})});
      return;
    }
    // Answered with the batch that makes everything received so far durable.
    if (!collecting_.empty()) {
      collecting_.flushes.push_back(std::move(token));
      seal();
    } else if (!sealed_.empty()) {
      sealed_.back()->flushes.push_back(std::move(token));
    } else if (in_flight_) {
      in_flight_->flushes.push_back(std::move(token));
    } else {
      std::move(token).respond(stats());
    }
  }

  void on_terminate() {
    shutting_down_ = true;
    seal();  // what was admitted is written and answered; nothing more is admitted
    pump();
    close_if_done();
  }

  // --- committing ---------------------------------------------------------------------------

  /// Waiting for more of the requests the last batch answered (see `pump`).
  [[nodiscard]] bool regrouping() const {
    return ready_ && !in_flight_ && sealed_.empty() && !collecting_.empty() &&
           collecting_.waiters.size() < regroup_target_ && !shutting_down_;
  }

  /// Posts the next batch if no commit is in flight.
  void pump() {
    if (!ready_ || in_flight_) return;
    if (sealed_.empty() && !collecting_.empty()) {
      if (regroup_target_ > 0 && collecting_.waiters.size() >= regroup_target_ && regroup_counts_waiting_) {
        regroup_missed_ = false;  // everybody counted came back in time
      }
      if (collecting_.waiters.size() < regroup_target_ && !shutting_down_) {
        // The requests the last batch answered usually come back at once; the first of them to
        // arrive would otherwise go out alone, and the rest wait a whole sync behind it (batches
        // alternating 1 and N-1). Wait until they and those that waited during the sync are all
        // here, at most half a sync.
        if (!regroup_armed_) {
          regroup_armed_ = true;
          ctx_.attach(Delay(last_sync_ / 2, RegroupExpired{regroup_generation_}));
        }
        return;
      }
      if (config_.linger.count() > 0 && !lingered_ && !shutting_down_) {
        if (!linger_armed_) {
          linger_armed_ = true;
          ctx_.attach(Delay(config_.linger, LingerExpired{}));
        }
        return;
      }
      seal();
    }
    if (sealed_.empty()) return;
    in_flight_ = std::move(sealed_.front());
    sealed_.pop_front();
    posted_at_ = timers_->now();
    ++jobs_in_flight_;
    post([this, batch = in_flight_.get()]() -> IoThread::Completion {
      auto durable = store_->commit(batch->records);
      const bool writer_failed = store_->failed();
      return [this, durable = std::move(durable), writer_failed]() mutable {
        --jobs_in_flight_;
        on_committed(std::move(durable), writer_failed);
      };
    });
  }

  /// `writer_failed`: the writer refuses everything from now on (a failed fdatasync); otherwise a
  /// failed commit was rolled back and only its batch is lost.
  void on_committed(lw::WalResult<lw::Durable> durable, bool writer_failed) {
    std::unique_ptr<Batch> batch = std::move(in_flight_);
    last_sync_ = std::chrono::duration_cast<std::chrono::nanoseconds>(timers_->now() - posted_at_);
    ++regroup_generation_;
    regroup_armed_ = false;
    // The requests already waiting joined during the sync: with those answered now, they are the
    // requesters of the next batch. Counting only the answered ones, two requesters that got out of
    // step (one syncing while the other waits) would stay so, a sync each, batch after batch. Once
    // a regroup counting them missed (see on_regroup_expired) they count every kRegroupRetry-th
    // batch only: enough to bring requesters back in step, which counting the answered keeps.
    const bool count_waiting = !regroup_missed_ || ++rounds_since_miss_ % kRegroupRetry == 0;
    regroup_counts_waiting_ = durable && count_waiting && !collecting_.empty();
    regroup_target_ = durable ? batch->waiters.size() + (regroup_counts_waiting_ ? collecting_.waiters.size() : 0) : 0;
    if (durable) {
      ++stats_.batches;
      ++stats_.syncs;
      stats_.bytes += durable->bytes;
      stats_.appends += batch->records.size();
      if (durable->rotated) ++stats_.segments;
      for (Waiter& w : batch->waiters) {
        PartitionState& state = partitions_[w.partition];
        state.durable_index = w.last_index;
        state.durable_term = w.last_term;
        answer(w.token, pw::Appended{w.partition, w.last_index, w.last_term});
      }
      for (auto& token : batch->flushes) std::move(token).respond(stats());
    } else {
      reject(*batch, durable.error(), writer_failed);
    }
    batch->clear();  // the requests go; the vectors' room stays for the next batch
    spare_ = std::move(batch);
    if (!collecting_.empty()) lingered_ = true;  // it collected during the sync: it waited enough
    pump();
    close_if_done();
  }

  /// A batch that did not become durable: its waiters fail, and so does the WAL when the error
  /// leaves the log's state unknown.
  void reject(Batch& batch, const lw::Error& error, bool writer_failed) {
    if (writer_failed) fail(lw::to_string(error));
    const pw::WalErrorKind kind = failed_ ? pw::WalErrorKind::WalFailed : kind_of(error);
    const std::string detail = failed_ ? *failed_ : lw::to_string(error);
    std::unordered_set<pw::PartitionId> touched;
    for (Waiter& w : batch.waiters) {
      touched.insert(w.partition);
      answer(w.token, Err{pw::WalError{kind, w.partition, 0, detail}});
    }
    for (auto& token : batch.flushes) {
      std::move(token).respond(Err{pw::WalError{kind, 0, 0, detail}});
    }
    if (kind == pw::WalErrorKind::WalFailed) {
      // Everything waiting fails too: the WAL accepts nothing more.
      for (auto& sealed : sealed_) reject_all(*sealed, kind, detail);
      sealed_.clear();
      reject_all(collecting_, kind, detail);
      collecting_ = Batch{};
      return;
    }
    // Rolled back: the partitions are back at their durable index, and their later entries in
    // waiting batches may follow the lost ones, so they fail with the same error.
    for (auto partition : touched) {
      PartitionState& state = partitions_[partition];
      state.accepted_index = state.durable_index;
      state.accepted_term = state.durable_term;
    }
    for (auto& sealed : sealed_) *sealed = without(std::move(*sealed), touched, kind, detail);
    std::erase_if(sealed_, [](const auto& b) { return b->empty() && b->flushes.empty(); });
    collecting_ = without(std::move(collecting_), touched, kind, detail);
  }

  void reject_all(Batch& batch, pw::WalErrorKind kind, const std::string& detail) {
    for (Waiter& w : batch.waiters) answer(w.token, Err{pw::WalError{kind, w.partition, 0, detail}});
    for (auto& token : batch.flushes) std::move(token).respond(Err{pw::WalError{kind, 0, 0, detail}});
  }

  /// `batch` without the waiters of `partitions` (answered with the error).
  Batch without(Batch batch, const std::unordered_set<pw::PartitionId>& partitions, pw::WalErrorKind kind,
                const std::string& detail) {
    Batch kept;
    kept.flushes = std::move(batch.flushes);
    kept.payloads = std::move(batch.payloads);  // records of kept waiters may point here
    for (Waiter& w : batch.waiters) {
      if (partitions.contains(w.partition)) {
        answer(w.token, Err{pw::WalError{kind, w.partition, 0, detail}});
        continue;
      }
      Waiter moved = std::move(w);
      const std::size_t first = kept.records.size();
      for (std::size_t i = 0; i < moved.count; ++i) {
        kept.records.push_back(batch.records[moved.first + i]);
        kept.bytes += lw::record_bytes(batch.records[moved.first + i].payload.size());
      }
      moved.first = first;
      kept.envelopes.push_back(std::move(batch.envelopes[moved.envelope]));
      moved.envelope = kept.envelopes.size() - 1;
      kept.waiters.push_back(std::move(moved));
      PartitionState& state = partitions_[kept.waiters.back().partition];
      state.accepted_index = kept.waiters.back().last_index;
      state.accepted_term = kept.waiters.back().last_term;
    }
    return kept;
  }

  void fail(std::string why) {
    if (failed_) return;
    failed_ = fmt::format("WAL {} failed: {}", wal_id_, why);
    log::error("{}; it answers WalFailed until restarted (recovery reads what is on disk)", *failed_);
    ctx_.set_status(ActorStatus::ALARMING.with_details(*failed_));
  }

  [[nodiscard]] pw::WalStats stats() const {
    pw::WalStats out = stats_;
    out.wal_id = wal_id_;
    out.failed = failed_.has_value();
    out.pending = collecting_.records.size() + (in_flight_ ? in_flight_->records.size() : 0);
    for (const auto& batch : sealed_) out.pending += batch->records.size();
    return out;
  }

  void close_if_done() {
    if (shutting_down_ && !in_flight_ && sealed_.empty() && collecting_.empty() && jobs_in_flight_ == 0) ctx_.close();
  }

  /// The mailbox is closed: whatever is still admitted is written and answered before the actor
  /// ends. After a polite Terminate nothing is left here; after a forced close (or when recovery
  /// had not finished) the worker waits for the I/O thread: the one place it does.
  void finish() {
    if (!io_) return;
    shutting_down_ = true;
    io_->stop();
    io_stopped_ = true;
    io_->drain();  // the completions of everything posted (recovery included)
    seal();
    pump();  // the rest runs inline, batch after batch (see post)
  }

  /// Hands a job to the I/O thread; once that stopped (finish), or under virtual time, runs it and
  /// its completion here, at once.
  ///
  /// Virtual time (a test proxy's, a simulated cluster's) runs the I/O inline so that a run
  /// replays exactly: with the thread, where a completion lands among the messages of one instant
  /// is up to the machine, and so is the batching that follows. Inline, the job's fdatasync takes
  /// no virtual time, batches are what the mailbox held, and the order is the messages' own.
  void post(IoThread::Job job) {
    if (io_ && !io_stopped_ && !inline_io_) {
      io_->post(std::move(job));
      return;
    }
    IoThread::Completion done = job();
    done();
  }

  WalContext ctx_;
  /// The system's clock (virtual in a simulated cluster), for the sync time that paces regrouping.
  detail::TimerService* timers_ = nullptr;
  bool inline_io_ = false;  ///< virtual time: I/O runs on the actor's worker (see `post`)
  FileSystemFactory factory_;
  Config config_;
  std::uint32_t wal_id_ = 0;
  std::shared_ptr<lw::FileSystem> fs_;
  std::unique_ptr<Store> store_;  ///< the I/O thread's; created and used there only
  bool io_stopped_ = false;

  bool ready_ = false;  ///< recovery finished (successfully or not)
  std::optional<std::string> start_error_;
  std::optional<std::string> failed_;
  bool shutting_down_ = false;
  bool linger_armed_ = false;
  bool lingered_ = false;
  // Regrouping: the number of requests the last batch answered plus those waiting when it was;
  // the next batch waits for as many (or half a sync, whichever comes first).
  std::size_t regroup_target_ = 0;
  std::uint64_t regroup_generation_ = 0;
  bool regroup_armed_ = false;
  bool regroup_counts_waiting_ = false;  ///< the target includes requests that waited during the sync
  bool regroup_missed_ = false;          ///< such a target was not reached in time (open loop)
  std::uint64_t rounds_since_miss_ = 0;
  detail::TimerService::TimePoint posted_at_;
  std::chrono::nanoseconds last_sync_{0};
  std::deque<Envelope> deferred_;

  std::unordered_map<pw::PartitionId, PartitionState> partitions_;
  Batch collecting_;
  std::deque<std::unique_ptr<Batch>> sealed_;
  std::unique_ptr<Batch> in_flight_;
  std::unique_ptr<Batch> spare_;      ///< the last batch answered, emptied: the next one to collect into
  std::uint64_t jobs_in_flight_ = 0;  ///< posted jobs whose completion has not run
  pw::WalStats stats_;
  // Last, so it is destroyed first: its destructor joins the thread, which may still use the
  // batches, the store and the file layer above.
  std::optional<IoThread> io_;
};

}  // namespace

Task<Result<void, std::string>> exec(WalContext ctx, FileSystemFactory file_system) {
  WalActor actor(ctx, std::move(file_system));
  co_return co_await actor.run();
}

}  // namespace elfin::actors::wal::internal
