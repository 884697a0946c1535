// A small bank: one actor per account behind a MapRouter keyed by account id, and an audit group
// that every movement is reported to.
//
//   accounts  Deposit, Withdraw (answers the new balance or a Refusal), Balance. An account that
//             fails is restarted, and takes its balance back from the audit.
//   audit     records each Movement; answers Recover and Trail.
//
// topology() wires them: whatever the accounts send of protocol `audit` goes to the audit group.
#pragma once

#include <optional>

#include <elfin/elfin.hpp>

namespace bank {

elfin::Blueprint accounts();
elfin::Blueprint audit();

/// The groups `accounts` and `audit`, routed as above; `customers`, when given, is mounted as the
/// entrypoint group `customers`, whose `bank` messages go to the accounts.
elfin::Topology topology(std::optional<elfin::Blueprint> customers = std::nullopt);

}  // namespace bank
