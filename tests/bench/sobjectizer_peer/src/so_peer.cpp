// SObjectizer 5.8 side of elfin's side-by-side benchmarks (see so_peer.hpp for the execution
// model and each workload's shape).
//
// Agents never throw: an exception escaping an event handler makes SObjectizer abort the process
// by default. They report a `failed` message to the main thread instead, which does every check
// and throw; the environment is stopped (all coops deregistered, threads joined) when the
// wrapped_env_t goes out of scope, after the clock has been read.
#include "elfin_bench/so_peer.hpp"

#include <so_5/all.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace elfin_bench::so_peer {
namespace {

// -- messages -----------------------------------------------------------------------------------

// The hot-path payload of every workload.
struct value final {
  std::uint64_t v;
};
// A request of request_response: the answer (`value{x + 1}`) goes to `reply_to`.
struct inc final {
  so_5::mbox_t reply_to;
  std::uint64_t x;
};
struct start final : so_5::signal_t {};
struct more final : so_5::signal_t {};
// The final report of a workload, to the main thread's mchain.
struct done final {
  std::uint64_t count;
  std::uint64_t checksum;
};
struct failed final {
  std::string why;
};

// -- helpers ------------------------------------------------------------------------------------

// How long the main thread waits for a report; the slowest SObjectizer case takes seconds.
constexpr std::chrono::seconds kReportDeadline{300};

struct Outcome {
  std::uint64_t count = 0;
  std::uint64_t checksum = 0;
};

std::string prefixed(const char* name, const std::string& what) { return std::string("so.") + name + ": " + what; }

void expect_equal(const char* name, const char* what, std::uint64_t got, std::uint64_t want) {
  if (got != want)
    throw std::runtime_error(prefixed(
        name, std::string("wrong ") + what + ": got " + std::to_string(got) + ", expected " + std::to_string(want)));
}

// Blocks the main thread until the workload's `done` (or `failed`) arrives on `reports`.
Outcome await_outcome(const char* name, const so_5::mchain_t& reports) {
  Outcome out;
  std::string failure;
  const auto result = so_5::receive(
      so_5::from(reports).handle_n(1).empty_timeout(kReportDeadline),
      [&](so_5::mhood_t<done> d) { out = Outcome{d->count, d->checksum}; },
      [&](so_5::mhood_t<failed> f) { failure = f->why; });
  if (result.handled() == 0) throw std::runtime_error(prefixed(name, "no report within 300 s"));
  if (!failure.empty()) throw std::runtime_error(prefixed(name, failure));
  return out;
}

// 0 + 1 + ... + (n - 1), the checksum of n ordinals.
constexpr std::uint64_t sum_below(std::uint64_t n) { return n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2); }

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

// What a workload gets: the environment, the binder of the `threads`-thread pool and the mchain
// on which the main thread receives the final report.
struct Setup {
  so_5::environment_t& env;
  so_5::disp_binder_shptr_t binder;
  so_5::mchain_t reports;
};

template <class Workload>
Figure with_env(const char* name, unsigned threads, Workload&& workload) {
  if (threads == 0) throw std::invalid_argument(prefixed(name, "threads must be >= 1"));
  Figure figure{};
  {
    so_5::wrapped_env_t sobj;
    namespace tp = so_5::disp::thread_pool;
    auto pool = tp::make_dispatcher(sobj.environment(), threads);
    Setup setup{sobj.environment(), pool.binder(tp::bind_params_t{}.fifo(tp::fifo_t::individual)),
                so_5::create_mchain(sobj)};
    figure = workload(setup);
  }  // stops the environment: deregisters every coop and joins its threads
  return figure;
}

// -- ping_pong ----------------------------------------------------------------------------------

class pong final : public so_5::agent_t {
 public:
  explicit pong(context_t ctx) : so_5::agent_t(std::move(ctx)) {}
  void set_ping(so_5::mbox_t ping) { ping_ = std::move(ping); }
  void so_define_agent() override { so_subscribe_self().event(&pong::on_ball); }

 private:
  void on_ball(so_5::mhood_t<value> ball) { so_5::send<value>(ping_, ball->v + 1); }
  so_5::mbox_t ping_;
};

// The ball's value is the number of completed round trips.
class ping final : public so_5::agent_t {
 public:
  ping(context_t ctx, so_5::mchain_t reports, std::uint64_t round_trips)
      : so_5::agent_t(std::move(ctx)), reports_(std::move(reports)), round_trips_(round_trips) {}
  void set_pong(so_5::mbox_t pong) { pong_ = std::move(pong); }
  void so_define_agent() override { so_subscribe_self().event(&ping::on_start).event(&ping::on_ball); }

 private:
  void on_start(so_5::mhood_t<start>) {
    if (round_trips_ == 0)
      so_5::send<done>(reports_, 0u, 0u);
    else
      so_5::send<value>(pong_, 0u);
  }
  void on_ball(so_5::mhood_t<value> ball) {
    if (ball->v == round_trips_)
      so_5::send<done>(reports_, ball->v, ball->v);
    else
      so_5::send<value>(pong_, ball->v);
  }
  so_5::mchain_t reports_;
  so_5::mbox_t pong_;
  std::uint64_t round_trips_;
};

// -- request_response ---------------------------------------------------------------------------

class server final : public so_5::agent_t {
 public:
  explicit server(context_t ctx) : so_5::agent_t(std::move(ctx)) {}
  void so_define_agent() override { so_subscribe_self().event(&server::on_inc); }

 private:
  void on_inc(so_5::mhood_t<inc> req) { so_5::send<value>(req->reply_to, req->x + 1); }
};

class client final : public so_5::agent_t {
 public:
  client(context_t ctx, so_5::mchain_t reports, so_5::mbox_t server, std::uint64_t requests)
      : so_5::agent_t(std::move(ctx)), reports_(std::move(reports)), server_(std::move(server)), requests_(requests) {}
  void so_define_agent() override { so_subscribe_self().event(&client::on_start).event(&client::on_answer); }

 private:
  void on_start(so_5::mhood_t<start>) { issue(); }
  void on_answer(so_5::mhood_t<value> answer) {
    const std::uint64_t x = next_ - 1;
    if (answer->v != x + 1) {
      so_5::send<failed>(reports_, "request " + std::to_string(x) + " answered with " + std::to_string(answer->v));
      return;
    }
    checksum_ += answer->v;
    issue();
  }
  void issue() {
    if (next_ == requests_) {
      so_5::send<done>(reports_, next_, checksum_);
      return;
    }
    so_5::send<inc>(server_, so_direct_mbox(), next_++);
  }
  so_5::mchain_t reports_;
  so_5::mbox_t server_;
  std::uint64_t requests_;
  std::uint64_t next_ = 0;
  std::uint64_t checksum_ = 0;
};

// -- throughput ---------------------------------------------------------------------------------

class consumer final : public so_5::agent_t {
 public:
  consumer(context_t ctx, so_5::mchain_t reports, std::uint64_t expected)
      : so_5::agent_t(std::move(ctx)), reports_(std::move(reports)), expected_(expected) {}
  void so_define_agent() override { so_subscribe_self().event(&consumer::on_value); }

 private:
  void on_value(so_5::mhood_t<value> m) {
    sum_ += m->v;
    if (++count_ == expected_) so_5::send<done>(reports_, count_, sum_);
  }
  so_5::mchain_t reports_;
  std::uint64_t expected_;
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;
};

// Messages sent per event before the producer asks itself for the next batch (as the CAF peer),
// so that one event stays short and the pool can interleave the producers.
constexpr std::uint64_t kBatch = 1024;

class producer final : public so_5::agent_t {
 public:
  producer(context_t ctx, so_5::mbox_t consumer, std::uint64_t messages)
      : so_5::agent_t(std::move(ctx)), consumer_(std::move(consumer)), messages_(messages) {}
  void so_define_agent() override { so_subscribe_self().event(&producer::on_start).event(&producer::on_more); }

 private:
  void on_start(so_5::mhood_t<start>) { so_5::send<more>(*this); }
  void on_more(so_5::mhood_t<more>) {
    const auto end = std::min(messages_, next_ + kBatch);
    for (; next_ < end; ++next_) so_5::send<value>(consumer_, next_);
    if (next_ < messages_) so_5::send<more>(*this);
  }
  so_5::mbox_t consumer_;
  std::uint64_t messages_;
  std::uint64_t next_ = 0;
};

// -- spawn --------------------------------------------------------------------------------------

class spawn_worker final : public so_5::agent_t {
 public:
  spawn_worker(context_t ctx, so_5::mbox_t collector)
      : so_5::agent_t(std::move(ctx)), collector_(std::move(collector)) {}
  void so_define_agent() override { so_subscribe_self().event(&spawn_worker::on_ordinal); }

 private:
  void on_ordinal(so_5::mhood_t<value> m) {
    so_5::send<value>(collector_, m->v);
    so_deregister_agent_coop_normally();
  }
  so_5::mbox_t collector_;
};

// Bounds the workers in flight like the CAF peer (which needs it to avoid a quadratic path in its
// scheduler); the workload stays "register, message, answer, deregister" either way.
constexpr std::uint64_t kSpawnWindow = 64;

class spawner final : public so_5::agent_t {
 public:
  spawner(context_t ctx, so_5::mchain_t reports, std::uint64_t actors)
      : so_5::agent_t(std::move(ctx)), reports_(std::move(reports)), actors_(actors) {}
  void so_define_agent() override { so_subscribe_self().event(&spawner::on_start).event(&spawner::on_answer); }

 private:
  void on_start(so_5::mhood_t<start>) {
    while (next_ < actors_ && next_ < kSpawnWindow) spawn_next();
  }
  void on_answer(so_5::mhood_t<value> m) {
    checksum_ += m->v;
    ++answers_;
    if (next_ < actors_) spawn_next();
    if (answers_ == actors_) so_5::send<done>(reports_, answers_, checksum_);
  }
  // register_coop returns once the worker's subscriptions exist, so the ordinal cannot be lost.
  void spawn_next() {
    auto coop = so_5::create_child_coop(*this, so_this_agent_disp_binder());
    const so_5::mbox_t worker = coop->make_agent<spawn_worker>(so_direct_mbox())->so_direct_mbox();
    so_environment().register_coop(std::move(coop));
    so_5::send<value>(worker, next_++);
  }
  so_5::mchain_t reports_;
  std::uint64_t actors_;
  std::uint64_t next_ = 0;
  std::uint64_t answers_ = 0;
  std::uint64_t checksum_ = 0;
};

// -- skynet -------------------------------------------------------------------------------------

constexpr std::uint64_t kSkynetLeaves = 1'000'000;
constexpr std::uint64_t kSkynetFanout = 10;
constexpr std::uint64_t kSkynetActors = 1'111'111;  // 1 + 10 + ... + 10^6
constexpr std::uint64_t kSkynetSum = 499'999'500'000;
static_assert(sum_below(kSkynetLeaves) == kSkynetSum);

class skynet_leaf final : public so_5::agent_t {
 public:
  skynet_leaf(context_t ctx, so_5::mbox_t parent, std::uint64_t ordinal)
      : so_5::agent_t(std::move(ctx)), parent_(std::move(parent)), ordinal_(ordinal) {}
  void so_evt_start() override { so_5::send<value>(parent_, ordinal_); }

 private:
  so_5::mbox_t parent_;
  std::uint64_t ordinal_;
};

// Covers ordinals [first, first + size): starts its ten children as one child coop, sums their
// answers, reports to its parent and deregisters the children.
class skynet_node final : public so_5::agent_t {
 public:
  skynet_node(context_t ctx, so_5::mbox_t parent, std::uint64_t first, std::uint64_t size)
      : so_5::agent_t(std::move(ctx)), parent_(std::move(parent)), first_(first), size_(size) {}
  void so_define_agent() override { so_subscribe_self().event(&skynet_node::on_partial); }
  void so_evt_start() override {
    auto coop = so_5::create_child_coop(*this, so_this_agent_disp_binder());
    const auto child_size = size_ / kSkynetFanout;
    for (std::uint64_t i = 0; i < kSkynetFanout; ++i) {
      const auto child_first = first_ + i * child_size;
      if (child_size == 1)
        coop->make_agent<skynet_leaf>(so_direct_mbox(), child_first);
      else
        coop->make_agent<skynet_node>(so_direct_mbox(), child_first, child_size);
    }
    children_ = so_environment().register_coop(std::move(coop));
  }

 private:
  void on_partial(so_5::mhood_t<value> m) {
    sum_ += m->v;
    if (++answers_ == kSkynetFanout) {
      so_5::send<value>(parent_, sum_);
      so_environment().deregister_coop(children_, so_5::dereg_reason::normal);
    }
  }
  so_5::mbox_t parent_;
  std::uint64_t first_;
  std::uint64_t size_;
  so_5::coop_handle_t children_;
  std::uint64_t sum_ = 0;
  std::uint64_t answers_ = 0;
};

// -- fan_out ------------------------------------------------------------------------------------

class fan_worker final : public so_5::agent_t {
 public:
  fan_worker(context_t ctx, so_5::mbox_t rounds, so_5::mbox_t driver)
      : so_5::agent_t(std::move(ctx)), rounds_(std::move(rounds)), driver_(std::move(driver)) {}
  void so_define_agent() override { so_subscribe(rounds_).event(&fan_worker::on_round); }

 private:
  void on_round(so_5::mhood_t<value> m) { so_5::send<value>(driver_, m->v); }
  so_5::mbox_t rounds_;
  so_5::mbox_t driver_;
};

class fan_driver final : public so_5::agent_t {
 public:
  fan_driver(context_t ctx, so_5::mchain_t reports, so_5::mbox_t rounds_mbox, std::uint64_t actors,
             std::uint64_t rounds)
      : so_5::agent_t(std::move(ctx)),
        reports_(std::move(reports)),
        rounds_mbox_(std::move(rounds_mbox)),
        actors_(actors),
        rounds_(rounds) {}
  void so_define_agent() override { so_subscribe_self().event(&fan_driver::on_start).event(&fan_driver::on_reply); }

 private:
  void on_start(so_5::mhood_t<start>) { begin_round(); }
  void on_reply(so_5::mhood_t<value> m) {
    ++replies_;
    checksum_ += m->v;
    if (--pending_ == 0) {
      ++round_;
      begin_round();
    }
  }
  void begin_round() {
    if (round_ == rounds_ || actors_ == 0) {
      so_5::send<done>(reports_, replies_, checksum_);
      return;
    }
    pending_ = actors_;
    so_5::send<value>(rounds_mbox_, round_);
  }
  so_5::mchain_t reports_;
  so_5::mbox_t rounds_mbox_;
  std::uint64_t actors_;
  std::uint64_t rounds_;
  std::uint64_t round_ = 0;
  std::uint64_t pending_ = 0;
  std::uint64_t replies_ = 0;
  std::uint64_t checksum_ = 0;
};

}  // namespace

// -- public entry points --------------------------------------------------------------------------

Figure ping_pong(std::uint64_t round_trips, unsigned threads) {
  constexpr const char* name = "ping_pong";
  return with_env(name, threads, [&](Setup& s) {
    const so_5::mbox_t ping_mbox = s.env.introduce_coop(s.binder, [&](so_5::coop_t& coop) {
      auto* p = coop.make_agent<ping>(s.reports, round_trips);
      auto* q = coop.make_agent<pong>();
      p->set_pong(q->so_direct_mbox());
      q->set_ping(p->so_direct_mbox());
      return p->so_direct_mbox();
    });
    Stopwatch clock;
    so_5::send<start>(ping_mbox);
    const auto out = await_outcome(name, s.reports);
    const double seconds = clock.seconds();
    expect_equal(name, "round trips", out.count, round_trips);
    return Figure{seconds, round_trips};
  });
}

Figure request_response(std::uint64_t requests, unsigned threads) {
  constexpr const char* name = "request_response";
  return with_env(name, threads, [&](Setup& s) {
    const so_5::mbox_t client_mbox = s.env.introduce_coop(s.binder, [&](so_5::coop_t& coop) {
      auto* srv = coop.make_agent<server>();
      return coop.make_agent<client>(s.reports, srv->so_direct_mbox(), requests)->so_direct_mbox();
    });
    Stopwatch clock;
    so_5::send<start>(client_mbox);
    const auto out = await_outcome(name, s.reports);
    const double seconds = clock.seconds();
    expect_equal(name, "response count", out.count, requests);
    expect_equal(name, "response checksum", out.checksum, sum_below(requests + 1));
    return Figure{seconds, requests};
  });
}

Figure throughput(unsigned producers, std::uint64_t messages_per_producer, unsigned threads) {
  constexpr const char* name = "throughput";
  const std::uint64_t total = std::uint64_t{producers} * messages_per_producer;
  if (total == 0) throw std::invalid_argument("so.throughput: needs at least one producer and one message");
  return with_env(name, threads, [&](Setup& s) {
    const auto producer_mboxes = s.env.introduce_coop(s.binder, [&](so_5::coop_t& coop) {
      const so_5::mbox_t sink = coop.make_agent<consumer>(s.reports, total)->so_direct_mbox();
      std::vector<so_5::mbox_t> mboxes;
      mboxes.reserve(producers);
      for (unsigned i = 0; i < producers; ++i)
        mboxes.push_back(coop.make_agent<producer>(sink, messages_per_producer)->so_direct_mbox());
      return mboxes;
    });
    Stopwatch clock;
    for (const auto& mbox : producer_mboxes) so_5::send<start>(mbox);
    const auto out = await_outcome(name, s.reports);
    const double seconds = clock.seconds();
    expect_equal(name, "message count", out.count, total);
    expect_equal(name, "payload checksum", out.checksum, std::uint64_t{producers} * sum_below(messages_per_producer));
    return Figure{seconds, total};
  });
}

Figure spawn(std::uint64_t actors, unsigned threads) {
  constexpr const char* name = "spawn";
  if (actors == 0) throw std::invalid_argument("so.spawn: needs at least one actor");
  return with_env(name, threads, [&](Setup& s) {
    const so_5::mbox_t spawner_mbox = s.env.introduce_coop(
        s.binder, [&](so_5::coop_t& coop) { return coop.make_agent<spawner>(s.reports, actors)->so_direct_mbox(); });
    Stopwatch clock;
    so_5::send<start>(spawner_mbox);
    const auto out = await_outcome(name, s.reports);
    const double seconds = clock.seconds();
    expect_equal(name, "answer count", out.count, actors);
    expect_equal(name, "ordinal checksum", out.checksum, sum_below(actors));
    return Figure{seconds, actors};
  });
}

Figure skynet(unsigned threads) {
  constexpr const char* name = "skynet";
  return with_env(name, threads, [&](Setup& s) {
    Stopwatch clock;
    s.env.introduce_coop(s.binder, [&](so_5::coop_t& coop) {
      coop.make_agent<skynet_node>(s.reports->as_mbox(), std::uint64_t{0}, kSkynetLeaves);
    });
    std::uint64_t sum = 0;
    const auto result = so_5::receive(so_5::from(s.reports).handle_n(1).empty_timeout(kReportDeadline),
                                      [&](so_5::mhood_t<value> m) { sum = m->v; });
    const double seconds = clock.seconds();
    if (result.handled() == 0) throw std::runtime_error(prefixed(name, "no sum within 300 s"));
    expect_equal(name, "sum", sum, kSkynetSum);
    return Figure{seconds, kSkynetActors};
  });
}

Figure fan_out(std::uint64_t actors, std::uint64_t rounds, unsigned threads) {
  constexpr const char* name = "fan_out";
  return with_env(name, threads, [&](Setup& s) {
    const so_5::mbox_t rounds_mbox = s.env.create_mbox();
    const so_5::mbox_t driver_mbox = s.env.introduce_coop(s.binder, [&](so_5::coop_t& coop) {
      const so_5::mbox_t driver = coop.make_agent<fan_driver>(s.reports, rounds_mbox, actors, rounds)->so_direct_mbox();
      for (std::uint64_t i = 0; i < actors; ++i) coop.make_agent<fan_worker>(rounds_mbox, driver);
      return driver;
    });
    Stopwatch clock;
    so_5::send<start>(driver_mbox);
    const auto out = await_outcome(name, s.reports);
    const double seconds = clock.seconds();
    expect_equal(name, "reply count", out.count, actors * rounds);
    expect_equal(name, "reply checksum", out.checksum, actors * sum_below(rounds));
    return Figure{seconds, actors * rounds};
  });
}

bool available() { return true; }

const char* version() {
  static const std::string text = "5." + std::to_string(SO_5_VERSION_MAJOR) + "." + std::to_string(SO_5_VERSION_MINOR);
  return text.c_str();
}

}  // namespace elfin_bench::so_peer
