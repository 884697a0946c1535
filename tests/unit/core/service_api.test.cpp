// The service author's API as written in the guide: temporaries and discarded results in
// co_await, coroutine and member-function handlers, typed error responses, failed requests with
// their reason, and failed sends that give the message back. Run under ASan too (.ci/run).
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>
#include <msgpack.hpp>

#include <elfin/elfin.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_support.hpp"

using namespace elfin;
using namespace std::chrono_literals;

namespace bank {

/// Heap-owning fields (longer than any small-string buffer): a double destruction or a use after
/// free of a temporary shows under ASan.
struct Note {
  std::string text;
  std::vector<std::string> tags;
  ELFIN_MESSAGE(bank, Note, text, tags);
};
struct Deposit {
  std::int64_t amount = 0;
  ELFIN_MESSAGE(bank, Deposit, amount);
};
struct Refusal {
  std::string reason;
  std::int64_t short_by = 0;
  ELFIN_PART(reason, short_by);
  friend bool operator==(const Refusal&, const Refusal&) = default;
};
/// A domain error as a response: the comma inside the response type is harmless in parentheses.
struct Withdraw {
  std::int64_t amount = 0;
  ELFIN_REQUEST(bank, Withdraw, (Result<std::int64_t, Refusal>), amount);
};
struct Owner {
  std::string account;
  ELFIN_REQUEST(bank, Owner, std::optional<std::string>, account);
};
struct Describe {
  bool as_text = false;
  ELFIN_REQUEST(bank, Describe, (std::variant<std::int64_t, std::string>), as_text);
};
struct Audit {
  ELFIN_REQUEST(bank, Audit, (Result<void, std::string>));
};
/// The account forwards notes to the audit group with backpressure, inside a handler.
struct Forward {
  std::uint32_t count = 0;
  std::uint64_t audit = 0;  ///< the audit group's address (routed sends would reach the test's proxy too)
  ELFIN_REQUEST(bank, Forward, std::uint32_t, count, audit);
};
struct Crash {
  std::string why;
  ELFIN_REQUEST(bank, Crash, std::string, why);
};
struct CaughtCrash {
  ELFIN_REQUEST(bank, CaughtCrash, std::string);
};
struct NotesSeen {
  ELFIN_REQUEST(bank, NotesSeen, std::vector<std::string>);
};

std::string long_text(std::uint32_t i) { return "note number " + std::to_string(i) + std::string(40, '.'); }

/// Handlers as member functions: no wrapping lambdas.
class Account {
 public:
  explicit Account(Context<>& ctx) : ctx_(ctx) {}

  void on_deposit(const Deposit& m) { balance_ += m.amount; }
  Task<> on_withdraw(const Withdraw& m, ResponseToken<Withdraw> token) {
    if (m.amount > balance_) {
      ctx_.respond(std::move(token), Err{Refusal{"insufficient funds", m.amount - balance_}});
      co_return;
    }
    balance_ -= m.amount;
    // A request from inside a handler, suspending the actor until the audit answers.
    auto audited = co_await ctx_.request(Audit{});
    if (!audited || !audited->ok()) throw std::runtime_error("audit refused");
    ctx_.respond(std::move(token), balance_);
  }
  void on_owner(const Owner& m, ResponseToken<Owner> token) {
    ctx_.respond(std::move(token), m.account == "alice" ? std::optional<std::string>{"Alice"} : std::nullopt);
  }

  [[nodiscard]] std::int64_t balance() const { return balance_; }

 private:
  Context<>& ctx_;
  std::int64_t balance_ = 0;
};

Task<> account(Context<> ctx) {
  Account self(ctx);
  while (auto envelope = co_await ctx.recv()) {
    try {
      co_await handle(
          *envelope, &self, &Account::on_deposit, &Account::on_withdraw, &Account::on_owner,
          [&](const Describe& m, ResponseToken<Describe> token) {
            if (m.as_text) {
              ctx.respond(std::move(token), std::to_string(self.balance()) + " coins");
            } else {
              ctx.respond(std::move(token), self.balance());
            }
          },
          [&](const Forward& m, ResponseToken<Forward> token) -> Task<> {
            // Temporaries with heap-owning fields, results discarded, in a loop: the audit's
            // mailbox (capacity 4) fills, so each send may suspend the handler.
            for (std::uint32_t i = 0; i < m.count; ++i) {
              co_await ctx.send_to(Addr{m.audit}, Note{long_text(i), {"forwarded", long_text(i)}});
            }
            ctx.respond(std::move(token), m.count);
          },
          [&](const Crash& m, ResponseToken<Crash>) -> Task<> {
            co_await ctx.yield_now();
            throw std::runtime_error(m.why);
          },
          [&](const CaughtCrash&, ResponseToken<CaughtCrash>) { throw std::logic_error("caught by the loop"); },
          [&](const auto& other) { std::ignore = other; });
    } catch (const std::logic_error&) {
      // The actor survives: the dropped token answers Ignored, not Failed.
      continue;
    }
  }
}

Task<> audit(Context<> ctx) {
  ctx.set_mailbox_capacity(4);
  std::vector<std::string> seen;
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(
        *envelope,
        [&](const Note& note) {
          if (note.tags.size() == 2 && note.tags[1] == note.text) seen.push_back(note.text);
        },
        [&](const Audit&, ResponseToken<Audit> token) { ctx.respond(std::move(token), Result<void, std::string>{}); },
        [&](const NotesSeen&, ResponseToken<NotesSeen> token) { ctx.respond(std::move(token), seen); });
  }
}

Topology topology() {
  Topology topology;
  auto accounts = topology.local("accounts");
  auto audits = topology.local("audit");
  accounts.route_to(audits, [](const Envelope& e) { return e.is<Note>() || e.is<Audit>() || e.is<NotesSeen>(); });
  accounts.mount(ActorGroup().exec(account));
  audits.mount(ActorGroup().exec(audit));
  return topology;
}

}  // namespace bank

using namespace bank;

TEST_CASE("api: member-function handlers answer domain errors as typed responses", "[core][api]") {
  auto proxy = testing::proxy(topology(), "accounts", {});
  proxy.send(Deposit{100});
  auto ok = proxy.request(Withdraw{30});
  REQUIRE(ok.ok());
  CHECK(ok.value() == 70);
  auto refused = proxy.request(Withdraw{500});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error() == Refusal{"insufficient funds", 430});
  CHECK(proxy.request(Owner{"alice"}) == std::optional<std::string>{"Alice"});
  CHECK(proxy.request(Owner{"bob"}) == std::nullopt);
  CHECK(proxy.request(Describe{false}) == std::variant<std::int64_t, std::string>{std::int64_t{70}});
  CHECK(proxy.request(Describe{true}) == std::variant<std::int64_t, std::string>{std::string{"70 coins"}});
}

TEST_CASE("api: a coroutine handler sends temporaries with backpressure, results discarded", "[core][api]") {
  auto proxy = testing::proxy(topology(), "accounts", {});
  constexpr std::uint32_t kNotes = 200;
  CHECK(proxy.request(Forward{kNotes, proxy.system().group_addr("audit").raw()}) == kNotes);
  auto seen = proxy.request_fallible(NotesSeen{}, proxy.system().group_addr("audit"));
  REQUIRE(seen.ok());
  REQUIRE(seen->size() == kNotes);
  for (std::uint32_t i = 0; i < kNotes; ++i) CHECK((*seen)[i] == long_text(i));
}

TEST_CASE("api: a recipient that fails while handling answers Failed with the reason", "[core][api]") {
  auto proxy = testing::proxy(topology(), "accounts", {});
  auto crashed = proxy.request_fallible(Crash{"disk on fire"});
  REQUIRE_FALSE(crashed.ok());
  CHECK(crashed.error() == RequestError::Failed);
  CHECK(crashed.error().reason() == "the recipient failed while handling it: disk on fire");
  CHECK(to_string(crashed.error()) == "failed: the recipient failed while handling it: disk on fire");
  CHECK_FALSE(crashed.error().reached_no_one());  // it reached an actor, which may have done part of it
}

TEST_CASE("api: an exception the actor catches itself leaves the request Ignored", "[core][api]") {
  auto proxy = testing::proxy(topology(), "accounts", {});
  auto caught = proxy.request_fallible(CaughtCrash{});
  REQUIRE_FALSE(caught.ok());
  CHECK(caught.error() == RequestError::Ignored);
  proxy.send(Deposit{5});  // and the actor goes on
  CHECK(proxy.request(Describe{false}) == std::variant<std::int64_t, std::string>{std::int64_t{5}});
}

TEST_CASE("api: typed responses keep their shape through the network's encoding", "[core][api]") {
  // The request ops are what the network uses to carry answers between nodes.
  auto roundtrip = [](auto request, auto value) {
    using R = decltype(request);
    const auto* ops = vtable_of<R>().request_ops;
    auto answering = ops->make_remote_state(false, [](detail::RequestStateBase&) {});
    static_cast<detail::RequestState<typename R::Response>&>(*answering).respond(value, TraceId{});
    auto encoded = ops->take_answers(*answering);
    REQUIRE(encoded.size() == 1);
    auto asking = std::make_shared<detail::RequestState<typename R::Response>>(false, detail::Waker{});
    asking->add_delivery();  // the connection's one delivery
    std::vector<detail::AnswerView> views{{encoded[0].status, encoded[0].payload}};
    auto problem = ops->apply_answers(*asking, views, TraceId{});
    INFO(problem.value_or(""));
    REQUIRE_FALSE(problem);
    asking->release_sender();
    return asking->take_any();
  };
  using Withdrawn = Result<std::int64_t, Refusal>;
  CHECK(roundtrip(Withdraw{}, Withdrawn{7}).value() == Withdrawn{7});
  CHECK(roundtrip(Withdraw{}, Withdrawn{Err{Refusal{"no", 3}}}).value() == Withdrawn{Err{Refusal{"no", 3}}});
  CHECK(roundtrip(Owner{}, std::optional<std::string>{}).value() == std::nullopt);
  CHECK(roundtrip(Owner{}, std::optional<std::string>{"x"}).value() == std::optional<std::string>{"x"});
  using Shape = std::variant<std::int64_t, std::string>;
  CHECK(roundtrip(Describe{}, Shape{std::string{"s"}}).value() == Shape{std::string{"s"}});
  CHECK(roundtrip(Audit{}, Result<void, std::string>{Err{std::string{"late"}}}).value().error() == "late");
}

TEST_CASE("api: a Failed answer carries its reason through the network's encoding", "[core][api]") {
  const auto* ops = vtable_of<Crash>().request_ops;
  auto answering = ops->make_remote_state(false, [](detail::RequestStateBase&) {});
  answering->fail(RequestError{RequestError::Failed, "the recipient failed while handling it: boom"});
  auto encoded = ops->take_answers(*answering);
  REQUIRE(encoded.size() == 1);
  CHECK(encoded[0].status == detail::AnswerStatus::Failed);
  auto asking = std::make_shared<detail::RequestState<std::string>>(false, detail::Waker{});
  asking->add_delivery();
  std::vector<detail::AnswerView> views{{encoded[0].status, encoded[0].payload}};
  REQUIRE_FALSE(ops->apply_answers(*asking, views, TraceId{}));
  asking->release_sender();
  auto answer = asking->take_any();
  REQUIRE_FALSE(answer.ok());
  CHECK(answer.error().reason() == "the recipient failed while handling it: boom");
}

TEST_CASE("api: a Result response is serde's externally tagged map", "[core][api]") {
  // {"Ok": 7} and {"Err": {"reason": "no", "short_by": 3}}, as elfo encodes a Result.
  auto packed = [](const Result<std::int64_t, Refusal>& r) {
    msgpack::sbuffer buffer;
    msgpack::packer<msgpack::sbuffer> packer(buffer);
    detail::pack_value(packer, r);
    auto handle = msgpack::unpack(buffer.data(), buffer.size());
    std::ostringstream text;
    text << handle.get();
    return text.str();
  };
  CHECK(packed(7) == R"({"Ok":7})");
  CHECK(packed(Err{Refusal{"no", 3}}) == R"({"Err":{"reason":"no","short_by":3}})");
}

namespace {
struct Sink {
  ELFIN_MESSAGE(bank, Sink);
};
Task<> stuck(Context<> ctx) {
  ctx.set_mailbox_capacity(1);
  auto first = co_await ctx.recv();  // takes the start-up message, then handles nothing
  std::ignore = first;
  auto second = co_await ctx.request(Owner{});  // never answered: the test owns the proxy
  std::ignore = second;
}
}  // namespace

TEST_CASE("api: a failed send gives the message back", "[core][api]") {
  auto proxy = testing::proxy(ActorGroup().exec(stuck));
  proxy.send(Sink{});
  Envelope owner = proxy.recv();  // unanswered while held: the actor waits and its mailbox fills
  REQUIRE(owner.is<Owner>());
  int fitted = 0;
  while (fitted < 1000 && proxy.try_send(Note{"fits", {}})) ++fitted;
  REQUIRE(fitted < 1000);
  Note refused{long_text(1), {long_text(2), long_text(3)}};
  auto result = proxy.try_send(refused);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error() == SendErrorKind::Full);
  CHECK(result.error().message().tags.size() == 2);
  Note back = std::move(result).error().into_message();
  CHECK(back.text == refused.text);
  CHECK(back.tags == refused.tags);

  auto nowhere = proxy.try_send_to(Addr::group(proxy.addr().node_no(), 250), Note{long_text(4), {}});
  REQUIRE_FALSE(nowhere.ok());
  CHECK(nowhere.error() == SendErrorKind::UnknownAddr);
  const Note undelivered = std::move(nowhere).error().into_message();
  CHECK(undelivered.text == long_text(4));
}
