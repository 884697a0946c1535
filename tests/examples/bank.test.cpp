// The bank example's groups under the test proxy. The proxy stands in for the customers: it is
// routed to the accounts, and, like the audit group, receives what the accounts send.
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "bank.hpp"
#include "protocol.hpp"

using namespace bank;

namespace {

elfin::testing::Proxy open_bank() { return elfin::testing::proxy(bank::topology(), "accounts", {}); }

std::vector<std::int64_t> trail_of(elfin::testing::Proxy& proxy, AccountId account) {
  auto trail = proxy.request_fallible(Trail{account}, proxy.system().group_addr("audit"));
  REQUIRE(trail.ok());
  return *trail;
}

}  // namespace

TEST_CASE("bank: a withdrawal answers the new balance, or a Refusal", "[bank]") {
  auto proxy = open_bank();
  proxy.send(Deposit{1, 100});

  auto withdrawn = proxy.request(Withdraw{1, 30});
  REQUIRE(withdrawn.ok());
  CHECK(*withdrawn == 70);

  auto refused = proxy.request(Withdraw{1, 500});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error() == Refusal{"insufficient funds", 430});
  CHECK(proxy.request(Withdraw{1, -5}).error().reason == "the amount must be positive");

  CHECK(proxy.request(Balance{1}) == 70);  // refusals leave the balance alone
}

TEST_CASE("bank: the router gives every account an actor of its own", "[bank]") {
  auto proxy = open_bank();
  proxy.send(Deposit{1, 10});
  proxy.send(Deposit{2, 20});
  proxy.send(Deposit{1, 5});
  CHECK(proxy.request(Balance{1}) == 15);
  CHECK(proxy.request(Balance{2}) == 20);
  CHECK(proxy.request(Balance{3}) == 0);  // the first message for an id starts its account
}

TEST_CASE("bank: every movement reaches the audit", "[bank]") {
  auto proxy = open_bank();
  proxy.send(Deposit{1, 100});
  REQUIRE(proxy.request(Withdraw{1, 40}).ok());
  REQUIRE_FALSE(proxy.request(Withdraw{1, 400}).ok());  // a refusal moves nothing

  // The account answers a withdrawal once the audit has it, so the trail is complete here.
  CHECK(trail_of(proxy, 1) == std::vector<std::int64_t>{100, -40});
  CHECK(trail_of(proxy, 2).empty());

  // The topology routes the movements; the proxy, routed from the accounts too, sees them.
  const Movement deposited = proxy.recv_as<Movement>();
  CHECK(deposited.amount == 100);
  CHECK(deposited.balance == 100);
  const Movement withdrawn = proxy.recv_as<Movement>();
  CHECK(withdrawn.amount == -40);
  CHECK(withdrawn.balance == 60);
}

TEST_CASE("bank: a failed account restarts with the balance the audit kept", "[bank]") {
  auto proxy = open_bank();
  proxy.send(Deposit{7, 100});
  // The balance would overflow: the account throws, fails, and its restart policy brings it back.
  proxy.send(Deposit{7, std::numeric_limits<std::int64_t>::max()});

  // The restarted account asks the audit (and, routed the same way, the proxy) for its balance.
  // The proxy drops its copy unanswered; the audit's answer is the one that counts.
  CHECK(proxy.recv_as<Movement>().balance == 100);
  CHECK(proxy.recv_as<Recover>().account == 7);

  CHECK(proxy.request(Balance{7}) == 100);
  CHECK(trail_of(proxy, 7) == std::vector<std::int64_t>{100});
}
