// Fake pods for the shard manager's tests: a real actor group (`pods`, one actor per pod, keyed
// by a number) that answers the manager's PingPod, UnassignShards and AssignShards the way the
// test tells it to, and a World that records, in one order, everything the pods saw and every
// save the storage made. The World checks the invariants on every event:
//   - no shard is ever held by two pods (a pod holds a shard from its AssignShards to its
//     UnassignShards);
//   - no AssignShards or AssignmentsChanged carries an epoch that was not saved before.
// A FlakyStorage wraps a real FileStorage so a test can make saves fail or conflict.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/actors/shard_manager.hpp>
#include <elfin/actors/shard_manager/file_storage.hpp>
#include <elfin/elfin.hpp>
#include <elfin/protocols/sharding/manager_protocol.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>

namespace elfin::test {

/// Starts (or looks up) pod `key`: answers its actor's address, raw.
struct StartPod {
  std::uint32_t key = 0;
  protocols::sharding::PodRef pod;  ///< who the pod is
  ELFIN_REQUEST(test_sharding, StartPod, std::uint64_t, key, pod);
};
/// The pod's process dies: its actor ends, so its address reaches no one any more.
struct KillPod {
  std::uint32_t key = 0;
  ELFIN_MESSAGE(test_sharding, KillPod, key);
};

/// How a fake pod behaves; changed by the test at any time.
struct PodBehaviour {
  bool answer_pings = true;
  bool answer_commands = true;  ///< false: Assign/Unassign are held, never answered
  bool refuse_assigns = false;  ///< answer AssignShards with Draining
};

class World {
 public:
  void set_behaviour(std::uint32_t key, PodBehaviour behaviour) {
    std::lock_guard lock(mutex_);
    behaviours_[key] = behaviour;
  }
  PodBehaviour behaviour(std::uint32_t key) {
    std::lock_guard lock(mutex_);
    return behaviours_[key];
  }

  /// Who may hold which shard as the pods see it.
  void on_assign(const protocols::sharding::AssignShards& assign) {
    std::lock_guard lock(mutex_);
    events_.push_back(fmt::format("assign {} {} epoch {}", assign.pod, assign.shards.size(), assign.epoch));
    if (assign.epoch > saved_epoch_) {
      violations_.push_back(
          fmt::format("assign at epoch {} before it was saved (saved: {})", assign.epoch, saved_epoch_));
    }
    for (auto shard : assign.shards) {
      auto& holders = holders_[shard];
      holders.insert(assign.pod);
      if (holders.size() > 1) violations_.push_back(fmt::format("shard {} held by {} pods", shard, holders.size()));
      ++gains_[assign.pod];
    }
    assigns_.push_back(assign);
  }
  void on_unassign(const protocols::sharding::UnassignShards& unassign) {
    std::lock_guard lock(mutex_);
    events_.push_back(fmt::format("unassign {} {} epoch {}", unassign.pod, unassign.shards.size(), unassign.epoch));
    for (auto shard : unassign.shards) holders_[shard].erase(unassign.pod);
  }
  /// A dead pod holds nothing any more (its process is gone).
  void on_death(const protocols::sharding::PodRef& pod) {
    std::lock_guard lock(mutex_);
    for (auto& [shard, holders] : holders_) holders.erase(pod);
  }
  void on_notification(const protocols::sharding::PodRef& pod, std::uint64_t epoch) {
    std::lock_guard lock(mutex_);
    if (epoch > saved_epoch_) {
      violations_.push_back(fmt::format("{} notified of epoch {} before it was saved", pod, epoch));
    }
    notified_[pod] = std::max(notified_[pod], epoch);
  }
  void on_save(std::uint64_t epoch) {
    std::lock_guard lock(mutex_);
    events_.push_back(fmt::format("save epoch {}", epoch));
    if (epoch < saved_epoch_) violations_.push_back(fmt::format("saved epoch {} after {}", epoch, saved_epoch_));
    saved_epoch_ = std::max(saved_epoch_, epoch);
  }
  void set_address(std::uint32_t key, std::uint64_t addr) {
    std::lock_guard lock(mutex_);
    addresses_[key] = addr;
  }

  [[nodiscard]] std::vector<std::string> violations() {
    std::lock_guard lock(mutex_);
    return violations_;
  }
  [[nodiscard]] std::vector<std::string> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }
  [[nodiscard]] std::vector<protocols::sharding::AssignShards> assigns() {
    std::lock_guard lock(mutex_);
    return assigns_;
  }
  /// The shards `pod` holds as it believes.
  [[nodiscard]] std::set<std::uint32_t> held_by(const protocols::sharding::PodRef& pod) {
    std::lock_guard lock(mutex_);
    std::set<std::uint32_t> shards;
    for (const auto& [shard, holders] : holders_) {
      if (holders.contains(pod)) shards.insert(shard);
    }
    return shards;
  }
  [[nodiscard]] std::uint64_t notified_epoch(const protocols::sharding::PodRef& pod) {
    std::lock_guard lock(mutex_);
    return notified_[pod];
  }
  [[nodiscard]] std::uint64_t saved_epoch() {
    std::lock_guard lock(mutex_);
    return saved_epoch_;
  }

 private:
  std::mutex mutex_;
  std::map<std::uint32_t, PodBehaviour> behaviours_;
  std::map<std::uint32_t, std::uint64_t> addresses_;
  std::map<std::uint32_t, std::set<protocols::sharding::PodRef>> holders_;
  std::map<protocols::sharding::PodRef, std::uint64_t> notified_;
  std::map<protocols::sharding::PodRef, std::size_t> gains_;
  std::vector<protocols::sharding::AssignShards> assigns_;
  std::vector<std::string> events_;
  std::vector<std::string> violations_;
  std::uint64_t saved_epoch_ = 0;
};

/// A real storage (a FileStorage, or any other) whose saves the test can make fail (Unavailable)
/// or conflict, and which tells the World about every save that happened.
class FlakyStorage final : public actors::shard_manager::AssignmentStorage {
 public:
  struct Control {
    std::mutex mutex;
    bool fail = false;
    bool conflict = false;
    std::size_t saves = 0;
    std::size_t failed_saves = 0;
  };
  FlakyStorage(std::string path, std::shared_ptr<Control> control, std::shared_ptr<World> world)
      : FlakyStorage(std::make_unique<actors::shard_manager::FileStorage>(std::move(path)), std::move(control),
                     std::move(world)) {}
  FlakyStorage(std::unique_ptr<actors::shard_manager::AssignmentStorage> inner, std::shared_ptr<Control> control,
               std::shared_ptr<World> world)
      : inner_(std::move(inner)), control_(std::move(control)), world_(std::move(world)) {}

  Result<std::optional<actors::shard_manager::StoredState>, actors::shard_manager::StorageError> load() override {
    return inner_->load();
  }
  Result<void, actors::shard_manager::StorageError> save(const actors::shard_manager::StoredState& state) override {
    {
      std::lock_guard lock(control_->mutex);
      if (control_->fail) {
        ++control_->failed_saves;
        return Err{actors::shard_manager::StorageError{actors::shard_manager::StorageErrorKind::Unavailable,
                                                       "injected failure"}};
      }
      if (control_->conflict) {
        ++control_->failed_saves;
        return Err{actors::shard_manager::StorageError{actors::shard_manager::StorageErrorKind::Conflict,
                                                       "injected conflict"}};
      }
    }
    auto saved = inner_->save(state);
    if (saved) {
      world_->on_save(state.assignments.epoch);
      std::lock_guard lock(control_->mutex);
      ++control_->saves;
    }
    return saved;
  }
  std::string describe() const override { return "flaky " + inner_->describe(); }

 private:
  std::unique_ptr<actors::shard_manager::AssignmentStorage> inner_;
  std::shared_ptr<Control> control_;
  std::shared_ptr<World> world_;
};

/// The fake pod actor.
inline Task<> fake_pod(Context<NoConfig, std::uint32_t> ctx, std::shared_ptr<World> world) {
  const std::uint32_t key = ctx.key();
  world->set_address(key, ctx.addr().raw());
  std::vector<ResponseToken<protocols::sharding::PingPod>> held_pings;
  std::vector<ResponseToken<protocols::sharding::AssignShards>> held_assigns;
  std::vector<ResponseToken<protocols::sharding::UnassignShards>> held_unassigns;
  std::optional<protocols::sharding::PodRef> me;
  bool killed = false;
  while (!killed) {
    auto envelope = co_await ctx.recv();
    if (!envelope) break;
    co_await handle(
        *envelope,
        [&](const StartPod& start, ResponseToken<StartPod> token) {
          me = start.pod;
          ctx.respond(std::move(token), ctx.addr().raw());
        },
        [&](const KillPod&) {
          if (me) world->on_death(*me);
          killed = true;
        },
        [&](const protocols::sharding::PingPod&, ResponseToken<protocols::sharding::PingPod> token) {
          if (world->behaviour(key).answer_pings) {
            ctx.respond(std::move(token), *me);
          } else {
            held_pings.push_back(std::move(token));
          }
        },
        [&](const protocols::sharding::UnassignShards& unassign,
            ResponseToken<protocols::sharding::UnassignShards> token) {
          if (!world->behaviour(key).answer_commands) {
            held_unassigns.push_back(std::move(token));
            return;
          }
          world->on_unassign(unassign);  // entities stopped, then the answer
          ctx.respond(std::move(token), Unit{});
        },
        [&](const protocols::sharding::AssignShards& assign, ResponseToken<protocols::sharding::AssignShards> token) {
          const auto behaviour = world->behaviour(key);
          if (behaviour.refuse_assigns) {
            ctx.respond(std::move(token),
                        Err{protocols::sharding::ShardingError{protocols::sharding::ShardingErrorKind::Draining,
                                                               "stopping", std::nullopt}});
          } else if (!behaviour.answer_commands) {
            held_assigns.push_back(std::move(token));
          } else {
            world->on_assign(assign);
            ctx.respond(std::move(token), Unit{});
          }
        },
        [&](const protocols::sharding::AssignmentsChanged& changed) {
          if (me) world->on_notification(*me, changed.assignments.epoch);
        });
  }
}

inline Blueprint fake_pods(std::shared_ptr<World> world) {
  return ActorGroup()
      .router(MapRouter<std::uint32_t>([](const Envelope& e) {
        if (const auto* start = e.get<StartPod>()) return Outcome<std::uint32_t>::Unicast(start->key);
        if (const auto* kill = e.get<KillPod>()) return Outcome<std::uint32_t>::GentleUnicast(kill->key);
        return Outcome<std::uint32_t>::Default();  // Terminate reaches every pod
      }))
      .exec([world](Context<NoConfig, std::uint32_t> ctx) { return fake_pod(std::move(ctx), world); });
}

}  // namespace elfin::test
