// The bank at work: a customer deposits, withdraws, is refused, and reads the balance; then the
// system ends.
#include <cstdint>
#include <initializer_list>
#include <utility>

#include <fmt/format.h>

#include <elfin/elfin.hpp>

#include "bank.hpp"
#include "protocol.hpp"

namespace {

using namespace elfin;
using namespace bank;

Task<> customer(Context<> ctx) {
  constexpr AccountId kAccount = 1;
  co_await ctx.send(Deposit{kAccount, 100});  // the first message for account 1 starts its actor

  for (const std::int64_t amount : {30, 500}) {
    // Two layers: the request's (did the account answer?) and the answer's (was it a Refusal?).
    auto withdrawn = co_await ctx.request(Withdraw{kAccount, amount});
    if (!withdrawn) {
      fmt::print("customer: withdraw {}: no answer ({})\n", amount, withdrawn.error());
      continue;
    }
    const Result<std::int64_t, Refusal>& answer = *withdrawn;
    if (answer) {
      fmt::print("customer: withdrew {}, {} left\n", amount, *answer);
    } else {
      fmt::print("customer: withdraw {} refused: {} (short by {})\n", amount, answer.error().reason,
                 answer.error().short_by);
    }
  }

  auto balance = co_await ctx.request(Balance{kAccount});
  if (balance) fmt::print("customer: account {} holds {}\n", kAccount, *balance);

  ctx.terminate_system("the customer is done");
}

}  // namespace

int main() { return elfin::run(bank::topology(ActorGroup().exec(customer))); }
