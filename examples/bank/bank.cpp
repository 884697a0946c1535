// The bank's groups (see bank.hpp).
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <elfin/elfin.hpp>

#include "bank.hpp"
#include "protocol.hpp"

namespace bank {

namespace {

using namespace elfin;
using namespace std::chrono_literals;
using Outcome = elfin::Outcome<AccountId>;

/// One account: its key is its id. The handlers are member functions, given to `handle` after
/// `this`.
class Account {
 public:
  explicit Account(Context<NoConfig, AccountId> ctx) : ctx_(ctx) {}

  Task<> main() {
    if (ctx_.start_info().is_restart()) {
      // The failure took the balance with the old actor; the audit has seen every movement.
      auto recovered = co_await ctx_.request(Recover{ctx_.key()});
      if (recovered) balance_ = recovered->value_or(balance_);
      log::info("account {} is back with {}", ctx_.key(), balance_);
    }
    while (auto envelope = co_await ctx_.recv()) {
      co_await handle(*envelope, this, &Account::on_deposit, &Account::on_withdraw, &Account::on_balance);
    }
  }

 private:
  Task<> on_deposit(const Deposit& deposit) {
    std::int64_t after = 0;
    if (__builtin_add_overflow(balance_, deposit.amount, &after)) {
      // A balance that cannot be represented is a bug upstream, not a customer's mistake: fail,
      // and let the restart start over from the audited balance.
      throw std::overflow_error(fmt::format("a deposit of {} overflows the balance", deposit.amount));
    }
    balance_ = after;
    co_await report(deposit.amount);
  }

  /// A handler that waits: it answers only once the audit has the movement.
  Task<> on_withdraw(const Withdraw& withdraw, ResponseToken<Withdraw> token) {
    if (withdraw.amount <= 0) {
      ctx_.respond(std::move(token), Err{Refusal{"the amount must be positive", 0}});
      co_return;
    }
    if (withdraw.amount > balance_) {
      ctx_.respond(std::move(token), Err{Refusal{"insufficient funds", withdraw.amount - balance_}});
      co_return;
    }
    balance_ -= withdraw.amount;
    co_await report(-withdraw.amount);
    ctx_.respond(std::move(token), balance_);
  }

  void on_balance(const Balance&, ResponseToken<Balance> token) { ctx_.respond(std::move(token), balance_); }

  Task<> report(std::int64_t amount) {
    // A bounded send: an audit that falls behind slows the accounts down instead of letting its
    // mailbox grow.
    auto sent = co_await ctx_.send(Movement{ctx_.key(), amount, balance_});
    if (!sent) log::warn("account {}: movement of {} not audited: {}", ctx_.key(), amount, sent.error());
  }

  Context<NoConfig, AccountId> ctx_;
  std::int64_t balance_ = 0;
};

Task<> account(Context<NoConfig, AccountId> ctx) {
  Account actor(ctx);
  co_await actor.main();
}

Outcome route(const Envelope& envelope) {
  if (const auto* m = envelope.get<Deposit>()) return Outcome::Unicast(m->account);
  if (const auto* m = envelope.get<Withdraw>()) return Outcome::Unicast(m->account);
  if (const auto* m = envelope.get<Balance>()) return Outcome::Unicast(m->account);
  return Outcome::Default();
}

Task<> auditor(Context<> ctx) {
  std::map<AccountId, std::vector<Movement>> movements;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope, [&](const Movement& movement) { movements[movement.account].push_back(movement); },
        [&](const Recover& recover, ResponseToken<Recover> token) {
          std::optional<std::int64_t> last;
          if (auto it = movements.find(recover.account); it != movements.end()) last = it->second.back().balance;
          ctx.respond(std::move(token), last);
        },
        [&](const Trail& trail, ResponseToken<Trail> token) {
          std::vector<std::int64_t> amounts;
          if (auto it = movements.find(trail.account); it != movements.end()) {
            for (const Movement& movement : it->second) amounts.push_back(movement.amount);
          }
          ctx.respond(std::move(token), std::move(amounts));
        });
  }
}

}  // namespace

Blueprint accounts() {
  return ActorGroup()
      .router(MapRouter<AccountId>(route))
      // An account that keeps failing at once comes back after 100 ms, 200 ms, 400 ms, ... up to
      // 10 s; messages for it wait in its mailbox meanwhile.
      .restart_policy(RestartPolicy::on_failure(RestartParams{100ms, 10s}))
      .exec(account);
}

Blueprint audit() { return ActorGroup().exec(auditor); }

Topology topology(std::optional<Blueprint> customers) {
  Topology topology;
  auto accounts_group = topology.local("accounts");
  auto audit_group = topology.local("audit");
  if (customers) {
    auto customers_group = topology.local("customers");
    customers_group.route_to(accounts_group, filters::protocol("bank"));
    customers_group.mount(std::move(*customers)).entrypoint();
  }
  accounts_group.route_to(audit_group, filters::protocol("audit"));
  accounts_group.mount(accounts());
  audit_group.mount(audit());
  return topology;
}

}  // namespace bank
