// What an answer of the KV service (protocols/kv, from a front or elfin::kv::Client) means for a
// linearizability history (libs/linearizability's KvModel):
//
//   a value                        the operation's output
//   VersionMismatch (cas, delete_if_version)
//                                  a mismatch with the current version only (the answer carries
//                                  no value): KvOutput::mismatch_version
//   Timeout                        unknown: pending, it may have applied
//   Unavailable                    not applied: the operation leaves the history (what the
//                                  service promises; a check then holds it to that)
//   anything else                  unexpected: a problem of the run
//
// Shared by the simulated runs (tests/unit/partition_sim) and the multi-process fault runs
// (tests/integration/support/kv_workload.hpp). Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include <elfin/linearizability/kv_model.hpp>
#include <elfin/protocols/kv.hpp>
#include <elfin/result.hpp>

namespace elfin::test {

struct KvAnswer {
  enum class Kind { Output, Unknown, NotApplied, Unexpected };
  Kind kind = Kind::Output;
  std::optional<linearizability::KvOutput> output;  ///< Kind::Output only
  std::string unexpected;                           ///< Kind::Unexpected: what came
};

template <class T>
[[nodiscard]] KvAnswer kv_answer(const linearizability::KvInput& input,
                                 const Result<T, protocols::kv::KvError>& answer) {
  namespace lin = linearizability;
  namespace pk = protocols::kv;
  if (!answer) {
    const pk::KvError& error = answer.error();
    const bool conditional = input.call == lin::KvCall::Cas || input.call == lin::KvCall::DeleteIfVersion;
    if (error.kind == pk::KvErrorKind::VersionMismatch && conditional) {
      return {KvAnswer::Kind::Output, lin::KvOutput::mismatch_version(error.current_version), {}};
    }
    if (error.kind == pk::KvErrorKind::Timeout) return {KvAnswer::Kind::Unknown, std::nullopt, {}};
    if (error.kind == pk::KvErrorKind::Unavailable) return {KvAnswer::Kind::NotApplied, std::nullopt, {}};
    return {KvAnswer::Kind::Unexpected, std::nullopt,
            fmt::format("{} answered {}", lin::KvModel{}.describe(input, std::nullopt), pk::to_string(error))};
  }
  const T& value = *answer;
  if constexpr (std::is_same_v<T, pk::Written>) {
    return {KvAnswer::Kind::Output, lin::KvOutput::ok(value.version), {}};
  } else if constexpr (std::is_same_v<T, pk::Found>) {
    return {KvAnswer::Kind::Output,
            value.found ? lin::KvOutput::found(value.value, value.version) : lin::KvOutput::not_found(),
            {}};
  } else {
    static_assert(std::is_same_v<T, pk::Deleted>);
    if (input.call == lin::KvCall::Delete && !value.existed)
      return {KvAnswer::Kind::Output, lin::KvOutput::not_found(), {}};
    return {KvAnswer::Kind::Output, lin::KvOutput::ok(), {}};
  }
}

}  // namespace elfin::test
