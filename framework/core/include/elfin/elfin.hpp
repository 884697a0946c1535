// The whole elfin core API in one include.
#pragma once

#include <elfin/actor_group.hpp>
#include <elfin/actor_status.hpp>
#include <elfin/addr.hpp>
#include <elfin/any_message.hpp>
#include <elfin/blueprint.hpp>
#include <elfin/config.hpp>
#include <elfin/context.hpp>
#include <elfin/dumping.hpp>
#include <elfin/duration.hpp>
#include <elfin/envelope.hpp>
#include <elfin/errors.hpp>
#include <elfin/map_router.hpp>
#include <elfin/match.hpp>
#include <elfin/message.hpp>
#include <elfin/messages.hpp>
#include <elfin/outcome.hpp>
#include <elfin/request.hpp>
#include <elfin/result.hpp>
#include <elfin/singleton.hpp>
#include <elfin/system.hpp>
#include <elfin/task.hpp>
#include <elfin/telemetry.hpp>
#include <elfin/termination_policy.hpp>
#include <elfin/topology.hpp>
#include <elfin/trace_id.hpp>
