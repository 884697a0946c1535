// The manager's requests to pods, each run as a Stream next to its mailbox: one request, its
// answer (or the reason there is none) delivered to the manager as a message, so the manager
// never waits on a pod and several requests are in flight at once.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>

#include <elfin/actors/shard_manager/config.hpp>
#include <elfin/actors/shard_manager/health_check.hpp>
#include <elfin/context.hpp>
#include <elfin/protocols/sharding/pod_protocol.hpp>
#include <elfin/task.hpp>

#include "internal_messages.hpp"

namespace elfin::actors::shard_manager::internal {

using ManagerContext = Context<Config>;

inline Task<PingDone> ping_task(ManagerContext ctx, Addr to, protocols::sharding::PodRef pod, std::uint64_t op,
                                PingPurpose purpose) {
  PingDone done;
  done.op = op;
  done.purpose = static_cast<std::uint8_t>(purpose);
  done.pod = pod;
  protocols::sharding::PingPod ping{pod};
  auto answer = co_await ctx.request_to(to, std::move(ping));
  PingOutcome outcome = PingOutcome::Answered;
  if (!answer) {
    outcome = answer.error() == RequestError::Ignored ? PingOutcome::NoAnswer : PingOutcome::Unreachable;
  } else if (*answer != pod) {
    outcome = PingOutcome::OtherIncarnation;
  }
  done.outcome = static_cast<std::uint8_t>(outcome);
  co_return done;
}

template <class R>
Task<CommandDone> command_task(ManagerContext ctx, Addr to, R request, std::uint64_t round, bool unassign) {
  CommandDone done;
  done.round = round;
  done.unassign = unassign;
  done.pod = request.pod;
  done.shards = request.shards;
  done.epoch = request.epoch;
  auto answer = co_await ctx.request_to(to, std::move(request));
  if (!answer) {
    done.result = static_cast<std::uint8_t>(answer.error() == RequestError::Ignored ? CommandResult::NoAnswer
                                                                                    : CommandResult::Failed);
    done.detail = to_string(answer.error());
  } else if (!*answer) {
    done.result = static_cast<std::uint8_t>(CommandResult::Refused);
    done.detail = fmt::format("{}", answer->error());
  } else {
    done.result = static_cast<std::uint8_t>(CommandResult::Ok);
  }
  co_return done;
}

}  // namespace elfin::actors::shard_manager::internal
