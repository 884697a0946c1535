// The bank's two protocols: `bank` (what customers send to accounts) and `audit` (what accounts
// tell the audit group). Only messages here, no logic: the groups include this header, never
// each other.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <elfin/message.hpp>
#include <elfin/result.hpp>

namespace bank {

using AccountId = std::uint64_t;

struct Deposit {
  AccountId account = 0;
  std::int64_t amount = 0;
  ELFIN_MESSAGE(bank, Deposit, account, amount);
};

/// Why a withdrawal was turned down: an answer the customer can act on, not a failure.
struct Refusal {
  std::string reason;
  std::int64_t short_by = 0;
  ELFIN_PART(reason, short_by);
  friend bool operator==(const Refusal&, const Refusal&) = default;
};

/// Answered with the new balance, or a Refusal. The response type holds a comma, hence the
/// parentheses around it.
struct Withdraw {
  AccountId account = 0;
  std::int64_t amount = 0;
  ELFIN_REQUEST(bank, Withdraw, (elfin::Result<std::int64_t, Refusal>), account, amount);
};

struct Balance {
  AccountId account = 0;
  ELFIN_REQUEST(bank, Balance, std::int64_t, account);
};

/// A change to an account, as the audit records it: `amount` is negative for a withdrawal.
struct Movement {
  AccountId account = 0;
  std::int64_t amount = 0;
  std::int64_t balance = 0;  ///< after the movement
  ELFIN_MESSAGE(audit, Movement, account, amount, balance);
};

/// Asked by an account restarted after a failure: its last audited balance, if it had one.
struct Recover {
  AccountId account = 0;
  ELFIN_REQUEST(audit, Recover, std::optional<std::int64_t>, account);
};

/// The amounts of an account's movements, oldest first.
struct Trail {
  AccountId account = 0;
  ELFIN_REQUEST(audit, Trail, std::vector<std::int64_t>, account);
};

}  // namespace bank
