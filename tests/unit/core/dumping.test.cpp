// Dumping in the core: what is recorded where messages are received and sent, with which
// identities, and what the per-group and per-message controls leave out.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>
#include <thread>

#include <elfin/dumping.hpp>
#include <elfin/internal/dump_storage.hpp>
#include <elfin/testing/proxy.hpp>

#include "test_support.hpp"

using namespace elfin;
using namespace elfin::test;

namespace {

struct Login {
  std::string user;
  Hidden<std::string> password;
  ELFIN_MESSAGE(dumping_test, Login, user, password);
};
struct Bulk {
  std::string data;
  ELFIN_MESSAGE(dumping_test, Bulk, data);
  ELFIN_NO_DUMPING;
};
// Trivially copyable and small: dumps copy it (with a field hidden all the same).
struct Pin {
  std::uint32_t user = 0;
  Hidden<std::uint32_t> code;
  ELFIN_MESSAGE(dumping_test, Pin, user, code);
};
// Trivially copyable but over kDumpCopyMaxSize: dumps share it.
struct Wide {
  std::uint64_t a = 0, b = 0, c = 0, d = 0, e = 0;
  ELFIN_MESSAGE(dumping_test, Wide, a, b, c, d, e);
};
struct Burst {
  std::uint32_t count = 0;
  ELFIN_MESSAGE(dumping_test, Burst, count);
};

// The client runs a script at start: an Increment, an Echo request, a Login, a Bulk, then a burst
// of Increments if its config asks for one, then tells the journal it is done.
struct ClientConfig {
  std::uint32_t burst = 0;
  ELFIN_CONFIG(burst);
};

Task<> client(Context<ClientConfig> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<ConfigUpdated>()) continue;
    Increment increment{3};
    std::ignore = co_await ctx.send(increment);
    Echo echo{"hi"};
    auto answer = co_await ctx.request(std::move(echo));
    Login login{"ann", std::string{"s3cret"}};
    std::ignore = co_await ctx.send(std::move(login));
    std::ignore = co_await ctx.send(Pin{7, 1234U});
    Bulk bulk{"lots"};
    std::ignore = co_await ctx.send(std::move(bulk));
    for (std::uint32_t i = 0; i < ctx.config().burst; ++i) std::ignore = co_await ctx.send(Increment{1});
    GetValue get;
    auto value = co_await ctx.request(get);  // answered after everything before it
    journal().add(fmt::format("client done: {} {}", answer ? *answer : "?", value ? *value : 0));
  }
}

Task<> server(Context<> ctx) {
  std::uint64_t value = 0;
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* m = envelope->get<Increment>()) value += m->delta;
    if (const auto* m = envelope->get<Echo>()) ctx.respond(envelope->take_token<Echo>(), m->text);
    if (envelope->is<GetValue>()) ctx.respond(envelope->take_token<GetValue>(), value);
  }
}

Task<> idle_dumper(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

Topology dumping_topology(bool with_dumpers) {
  Topology topology;
  auto c = topology.local("client");
  auto s = topology.local("server");
  c.route_to(s, filters::all());
  c.mount(ActorGroup().config<ClientConfig>().exec(client)).entrypoint();
  s.mount(ActorGroup().exec(server));
  if (with_dumpers) topology.local("system.dumpers").mount(ActorGroup().exec(idle_dumper));
  return topology;
}

struct Recorded {
  std::string group;
  dumping::Direction direction;
  std::string name;
  MessageKind kind;
  std::uint64_t correlation_id;
  TraceId trace_id;
  std::uint64_t sequence_no;
  std::string body;  // msgpack, as the dumper would encode it
  bool copied;       // the body was copied into the dump, not shared
  std::uint64_t timestamp_ns;
};

std::vector<Recorded> run_and_drain(const std::string& config, std::string expected_done) {
  journal().clear();
  StartOptions options;
  options.workers = 2;
  options.config_toml = config;
  auto system = System::start(dumping_topology(true), std::move(options));
  REQUIRE(system.ok());
  CHECK(journal().wait_for_line(expected_done));
  auto drained = system->dump_storage()->drain();
  system->terminate("test over");
  system->join();
  std::vector<Recorded> out;
  for (const auto& d : drained.dumps) {
    if (*d.group == "system.dumpers") continue;
    out.push_back(Recorded{*d.group, d.direction, std::string{d.vtable->name}, d.kind, d.correlation_id, d.trace_id,
                           d.sequence_no, dumping::encode_body(d), d.body_copied, d.timestamp_ns});
  }
  std::sort(out.begin(), out.end(), [](const Recorded& a, const Recorded& b) {
    return std::tie(a.group, a.sequence_no) < std::tie(b.group, b.sequence_no);
  });
  return out;
}

std::vector<std::string> describe(const std::vector<Recorded>& dumps, const std::string& group) {
  std::vector<std::string> out;
  for (const auto& d : dumps) {
    if (d.group != group) continue;
    std::string_view kind = d.kind == MessageKind::Request    ? " request"
                            : d.kind == MessageKind::Response ? " response"
                                                              : "";
    out.push_back(fmt::format("{} {}{}", d.direction == dumping::Direction::In ? "in" : "out", d.name, kind));
  }
  return out;
}

const Recorded& find(const std::vector<Recorded>& dumps, const std::string& group, dumping::Direction direction,
                     const std::string& name, MessageKind kind = MessageKind::Regular) {
  for (const auto& d : dumps) {
    if (d.group == group && d.direction == direction && d.name == name && d.kind == kind) return d;
  }
  FAIL("no dump of " << name << " in " << group);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("without system.dumpers nothing is recorded", "[core][dumping]") {
  journal().clear();
  auto system = System::start(dumping_topology(false), quick_options());
  REQUIRE(system.ok());
  CHECK(journal().wait_for_line("client done: hi 3"));
  CHECK(system->dump_storage() == nullptr);
  system->terminate("test over");
  system->join();
}

TEST_CASE("every message received and sent is dumped, requests and responses linked", "[core][dumping]") {
  auto dumps = run_and_drain("", "client done: hi 3");
  CHECK(describe(dumps, "client") == std::vector<std::string>{"in UpdateConfig", "out Increment", "out Echo request",
                                                              "in Echo response", "out Login", "out Pin",
                                                              "out GetValue request", "in GetValue response"});
  // The server's start-up UpdateConfig comes from the system's thread and races the client (an
  // entrypoint, started first): it may come before, among or after the client's messages, or only
  // after the drain.
  auto server = describe(dumps, "server");
  CHECK(std::count(server.begin(), server.end(), "in UpdateConfig") <= 1);
  const std::size_t server_dumps = server.size();
  std::erase(server, "in UpdateConfig");
  CHECK(server == std::vector<std::string>{"in Increment", "in Echo request", "out Echo response", "in Login", "in Pin",
                                           "in GetValue request", "out GetValue response"});

  using dumping::Direction;
  // A message keeps its trace id from sender to receiver; a request and its response share a
  // correlation id that no other request has.
  CHECK(find(dumps, "client", Direction::Out, "Increment").trace_id ==
        find(dumps, "server", Direction::In, "Increment").trace_id);
  auto echo_id = find(dumps, "client", Direction::Out, "Echo", MessageKind::Request).correlation_id;
  CHECK(echo_id != 0);
  CHECK(find(dumps, "server", Direction::In, "Echo", MessageKind::Request).correlation_id == echo_id);
  CHECK(find(dumps, "server", Direction::Out, "Echo", MessageKind::Response).correlation_id == echo_id);
  CHECK(find(dumps, "client", Direction::In, "Echo", MessageKind::Response).correlation_id == echo_id);
  CHECK(find(dumps, "client", Direction::Out, "GetValue", MessageKind::Request).correlation_id != echo_id);

  // Bodies: a response is its value; sequence numbers count each group's dumps from 1.
  auto response = msgpack::unpack(find(dumps, "client", Direction::In, "Echo", MessageKind::Response).body.data(),
                                  find(dumps, "client", Direction::In, "Echo", MessageKind::Response).body.size());
  CHECK(response.get().as<std::string>() == "hi");
  std::vector<std::uint64_t> sequence;
  for (const auto& d : dumps) {
    if (d.group == "server") sequence.push_back(d.sequence_no);
  }
  std::vector<std::uint64_t> counted(server_dumps);
  std::iota(counted.begin(), counted.end(), 1);
  CHECK(sequence == counted);
}

TEST_CASE("a Hidden field is hidden in dumps only; ELFIN_NO_DUMPING types are never dumped", "[core][dumping]") {
  auto dumps = run_and_drain("", "client done: hi 3");
  const auto& login = find(dumps, "client", dumping::Direction::Out, "Login");
  auto body = msgpack::unpack(login.body.data(), login.body.size());
  auto fields = body.get().as<std::map<std::string, std::string>>();
  CHECK(fields == std::map<std::string, std::string>{{"password", "<hidden>"}, {"user", "ann"}});

  // Everywhere else (network, AnyMessage) the value travels.
  Login original{"ann", std::string{"s3cret"}};
  auto decoded = AnyMessage::decode("dumping_test", "Login", AnyMessage(original).encode());
  REQUIRE(decoded.ok());
  CHECK(decoded->get<Login>()->password.value == "s3cret");

  for (const auto& d : dumps) CHECK(d.name != "Bulk");
}

TEST_CASE("a small trivially copyable message is copied into its dump, any other is shared", "[core][dumping]") {
  CHECK(vtable_of<Increment>().copy_for_dump != nullptr);
  CHECK(vtable_of<Pin>().copy_for_dump != nullptr);
  CHECK(vtable_of<Login>().copy_for_dump == nullptr);  // std::string: not trivially copyable
  CHECK(vtable_of<Wide>().copy_for_dump == nullptr);   // 40 bytes
  static_assert(sizeof(Wide) > kDumpCopyMaxSize);

  // The bodies are read long after the actors freed the envelopes: a copy must stand on its own
  // (ASan checks that nothing points back), and Hidden still hides.
  const auto before = std::chrono::system_clock::now();
  auto dumps = run_and_drain("", "client done: hi 3");
  const auto after = std::chrono::system_clock::now();
  for (const auto& group : {"client", "server"}) {
    const auto direction = std::string_view{group} == "client" ? dumping::Direction::Out : dumping::Direction::In;
    const auto& increment = find(dumps, group, direction, "Increment");
    CHECK(increment.copied);
    CHECK(msgpack::unpack(increment.body.data(), increment.body.size()).get().as<std::map<std::string, int>>() ==
          std::map<std::string, int>{{"delta", 3}});
    const auto& pin = find(dumps, group, direction, "Pin");
    CHECK(pin.copied);
    auto handle = msgpack::unpack(pin.body.data(), pin.body.size());  // owns what `fields` points into
    auto fields = handle.get().as<std::map<std::string, msgpack::object>>();
    CHECK(fields.at("user").as<std::uint32_t>() == 7);
    CHECK(fields.at("code").as<std::string>() == "<hidden>");
    CHECK_FALSE(find(dumps, group, direction, "Login").copied);
  }
  // `ts` is unix time (from the TSC where the kernel uses it): within the test's run, give or
  // take the clocks' disagreement.
  const auto ns = [](auto t) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  };
  for (const auto& d : dumps) {
    CHECK(d.timestamp_ns + 1'000'000 >= ns(before));
    CHECK(d.timestamp_ns <= ns(after) + 1'000'000);
  }
}

TEST_CASE("the dump clock tells unix time before and after a drain re-anchors it", "[core][dumping]") {
  dumping::DumpStorage storage(1, 16);
  const auto realtime = [] {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
  };
  // Bracketed by two readings of the realtime clock, so a preemption between them widens the window
  // instead of failing the test; the 1 ms is for the two clocks' disagreement.
  const auto within_realtime = [&] {
    const std::uint64_t before = realtime();
    const std::uint64_t now = storage.now_ns();
    const std::uint64_t after = realtime();
    return now + 1'000'000 >= before && now <= after + 1'000'000;
  };
  CHECK(within_realtime());
  std::ignore = storage.drain_chunks();
  CHECK(within_realtime());
}

TEST_CASE("system.dumping.disabled turns one group's dumps off", "[core][dumping]") {
  auto dumps = run_and_drain("[client.system.dumping]\ndisabled = true\n", "client done: hi 3");
  CHECK(describe(dumps, "client").empty());
  CHECK(describe(dumps, "server").size() == 8);
}

TEST_CASE("system.dumping.max_rate drops dumps over the rate and counts them", "[core][dumping]") {
  // 1000 Increments within well under a second against 100 dumps/s (one second of burst): the
  // server keeps its first 100 dumps and drops the rest, counting them as limited.
  auto dumps =
      run_and_drain("[client]\nburst = 1000\n[server.system.dumping]\nmax_rate = 100\n", "client done: hi 1003");
  std::vector<std::uint64_t> sequence;
  for (const auto& d : dumps) {
    if (d.group == "server") sequence.push_back(d.sequence_no);
  }
  REQUIRE(sequence.size() >= 100);
  CHECK(sequence.size() < 1000);
  for (std::size_t i = 0; i < 100; ++i) CHECK(sequence[i] == i + 1);
  CHECK(describe(dumps, "client").size() == 1008);  // the client's own dumps are not limited
}

TEST_CASE("a stretch of dumps the rate limit dropped skips one sequence number, so a gap shows", "[core][dumping]") {
  detail::GroupDumping group;
  group.configure(DumpingConfig{false, 2});  // 2 per second: one every 500 ms, one second of burst
  const std::uint64_t t0 = 1'000'000'000'000;
  std::vector<std::uint64_t> admitted;
  auto offer = [&](std::uint64_t at_ms) {
    std::uint64_t seq = 0;
    if (group.admit(t0 + at_ms * 1'000'000, seq)) admitted.push_back(seq);
  };
  for (int i = 0; i < 5; ++i) offer(0);  // a burst: two pass (a second's worth), three are dropped
  offer(400);                            // too soon: dropped too, in the same stretch
  offer(500);                            // the next slot: one number skipped for the stretch
  offer(3000);                           // long after: the burst budget is back
  offer(3000);
  offer(3000);  // dropped: the next admitted one skips a number again
  offer(4000);
  CHECK(admitted == std::vector<std::uint64_t>{1, 2, 4, 5, 6, 8});
}

TEST_CASE("a limited group dumps at most its limit per second, with increasing sequence numbers", "[core][dumping]") {
  // 100 dumps a second, offered 100 every 10 ms for 5 s of a driven clock: the first second's
  // burst (100), then at most 100 in each further second.
  detail::GroupDumping group;
  group.configure(DumpingConfig{false, 100});
  const std::uint64_t t0 = 1'000'000'000'000;
  std::vector<std::uint64_t> per_second(5, 0);
  std::uint64_t last_seq = 0;
  bool increasing = true;
  for (std::uint64_t ms = 0; ms < 5000; ms += 10) {
    for (int i = 0; i < 100; ++i) {
      std::uint64_t seq = 0;
      if (!group.admit(t0 + ms * 1'000'000, seq)) continue;
      increasing = increasing && seq > last_seq;
      last_seq = seq;
      ++per_second[ms / 1000];
    }
  }
  CHECK(increasing);
  CHECK(per_second[0] <= 200);  // the burst and the first second's rate
  for (std::size_t s = 1; s < per_second.size(); ++s) {
    CHECK(per_second[s] <= 101);  // a window's edges may hold one more
    CHECK(per_second[s] >= 99);   // and the limit is not stricter than it says
  }
}

TEST_CASE("a limited group's dumps through the runtime: within the limit, numbers increase, limited ones counted",
          "[core][dumping]") {
  // The real path (the per-thread reuse of the limit's clock included), 5000 Increments against
  // 50 dumps a second at the server: what passes stays within the burst plus the time it took.
  journal().clear();
  StartOptions options;
  options.workers = 2;
  options.config_toml = "[client]\nburst = 5000\n[server.system.dumping]\nmax_rate = 50\n";
  const auto start = std::chrono::steady_clock::now();
  auto system = System::start(dumping_topology(true), std::move(options));
  REQUIRE(system.ok());
  CHECK(journal().wait_for_line("client done: hi 5003"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto drained = system->dump_storage()->drain();
  const auto counters = system->dump_storage()->counters();
  system->terminate("test over");
  system->join();
  // The storage keeps each worker thread's dumps apart, in the order that thread recorded them; the
  // one server actor may have run on both workers, so its numbers increase per thread.
  std::vector<std::uint64_t> server_seq;
  std::map<std::uint32_t, std::vector<std::uint64_t>> per_thread;
  for (const auto& d : drained.dumps) {
    if (*d.group != "server") continue;
    server_seq.push_back(d.sequence_no);
    per_thread[d.thread_no].push_back(d.sequence_no);
  }
  REQUIRE(server_seq.size() >= 50);
  CHECK(static_cast<double>(server_seq.size()) <= 50.0 * (1.0 + seconds) + 1.0);
  for (const auto& [thread, numbers] : per_thread) {
    INFO("worker thread " << thread);
    CHECK(std::is_sorted(numbers.begin(), numbers.end()));
  }
  std::sort(server_seq.begin(), server_seq.end());
  CHECK(std::adjacent_find(server_seq.begin(), server_seq.end()) == server_seq.end());  // no number twice
  // The server offers the 8 dumps of the script without a burst (see the test of `disabled`) and
  // one per Increment of the burst: each is either recorded or counted as limited (the client has
  // no limit, so it adds to neither).
  CHECK(counters.limited + server_seq.size() == 5000 + 8);
  // The first dump after the burst ran out skips a number: the gap shows the dropped ones.
  if (server_seq.size() > 50) CHECK(server_seq[50] >= 52);
}

TEST_CASE("a limited group that was idle dumps again: the limit's clock is read afresh after idling",
          "[core][dumping]") {
  // A burst exhausts 1000 dumps a second; once the server has been idle long enough for the
  // window to reopen (1 ms at this rate; waited for on the realtime clock the limit uses, whose
  // steps are a few ms), its next message is dumped, not refused by a time read before the idle.
  Topology topology;
  topology.local("server").mount(ActorGroup().exec(server));
  topology.local("system.dumpers").mount(ActorGroup().exec(idle_dumper));
  StartOptions start;
  start.workers = 1;
  start.config_toml = "[server.system.dumping]\nmax_rate = 1000\n";
  auto proxy = elfin::testing::proxy(std::move(topology), "server", std::move(start));
  for (int i = 0; i < 3000; ++i) proxy.send(Increment{1});
  CHECK(proxy.request(GetValue{}) == 3000);  // the server took them all
  const auto wait_until = std::chrono::system_clock::now() + std::chrono::milliseconds(30);
  while (std::chrono::system_clock::now() < wait_until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  proxy.send(Increment{7});
  CHECK(proxy.request(GetValue{}) == 3007);
  auto drained = proxy.system().dump_storage()->drain();
  bool last_seen = false;
  for (const auto& d : drained.dumps) {
    if (*d.group != "server" || d.direction != dumping::Direction::In || d.vtable->name != "Increment") continue;
    // The copied body of Increment{7}: the only Increment with that delta.
    const std::string body = dumping::encode_body(d);
    if (body.find('\x07') != std::string::npos) last_seen = true;
  }
  CHECK(last_seen);
}

TEST_CASE("max_rate 0 admits no dump, and 1e9 or more admits every one", "[core][dumping]") {
  const std::uint64_t now = 1'000'000'000'000;
  auto admitted_at_once = [&](std::uint64_t max_rate, int offered) {
    detail::GroupDumping group;
    group.configure(DumpingConfig{false, max_rate});
    int admitted = 0;
    std::uint64_t seq = 0;
    for (int i = 0; i < offered; ++i) admitted += group.admit(now, seq) ? 1 : 0;
    return admitted;
  };
  CHECK(admitted_at_once(0, 10) == 0);
  CHECK(admitted_at_once(1'000'000, 2'000'000) == 1'000'000);  // a second's worth, then none
  CHECK(admitted_at_once(1'000'000'000, 2'000'000) == 2'000'000);
  CHECK(admitted_at_once(std::numeric_limits<std::uint64_t>::max(), 2'000'000) == 2'000'000);
}

TEST_CASE("a full dump storage loses new dumps and counts them", "[core][dumping]") {
  dumping::DumpStorage storage(1, 2);
  int pushed = 0;
  for (int i = 0; i < 5; ++i) pushed += storage.push(dumping::Dump{}) ? 1 : 0;
  CHECK(pushed == 2);
  auto counters = storage.counters();
  CHECK(counters.emitted == 2);
  CHECK(counters.lost == 3);
  auto chunks = storage.drain_chunks();
  REQUIRE(chunks.size() == 1);
  CHECK(chunks[0].size() == 2);
  CHECK(storage.drain_chunks().empty());
  CHECK_FALSE(storage.push(dumping::Dump{}));  // drained, but not written yet: still full
  storage.recycle(std::move(chunks));          // the dumper wrote them
  CHECK(storage.push(dumping::Dump{}));
  CHECK(storage.push(dumping::Dump{}));
  CHECK_FALSE(storage.push(dumping::Dump{}));
}

TEST_CASE("one recording thread may fill the whole dump storage, several share it", "[core][dumping]") {
  // The capacity is the storage's, not a shard's: a single busy thread is not held to 1/16 of it.
  const std::size_t capacity = 3 * dumping::DumpStorage::kChunkSize + 5;
  dumping::DumpStorage storage(1, capacity);
  std::size_t pushed = 0;
  while (storage.push(dumping::Dump{})) ++pushed;
  CHECK(pushed == capacity);
  auto chunks = storage.drain_chunks();
  CHECK(chunks.size() == 4);  // three full chunks and the start of a fourth, in recording order
  CHECK(chunks[0].size() == dumping::DumpStorage::kChunkSize);
  CHECK(chunks[3].size() == 5);
  const dumping::Dump* last_recycled = chunks[3].dumps.data();
  storage.recycle(std::move(chunks));  // written: the slots are free, the chunks' memory is reused
  REQUIRE(storage.push(dumping::Dump{}));
  auto again = storage.drain_chunks();
  REQUIRE(again.size() == 1);
  CHECK(again[0].dumps.data() == last_recycled);  // the most recently recycled chunk, not a new one
  storage.recycle(std::move(again));

  // Two threads at once: together they store exactly the capacity, whatever their share.
  std::atomic<std::size_t> stored{0};
  auto record = [&] {
    for (std::size_t i = 0; i < capacity; ++i) {
      if (storage.push(dumping::Dump{})) stored.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::thread other(record);
  record();
  other.join();
  CHECK(stored.load() == capacity);
  CHECK(storage.drain().size() == capacity);
  CHECK(storage.counters().lost == 1 + capacity);  // the first loop's last push, then 2 x capacity offered
}

TEST_CASE("a dump chunk keeps the keys of its dumps alive, one handle per actor", "[core][dumping]") {
  // Dumps point to their actor's key; the chunk holds it, so a key outlives an actor that stopped
  // before the writer got to its dumps, and recording takes no reference count per dump.
  auto tea = std::make_shared<const std::string>("tea");
  auto milk = std::make_shared<const std::string>("milk");
  dumping::DumpChunk chunk;
  for (int i = 0; i < 1000; ++i) {
    CHECK(chunk.add(i % 2 == 0 ? tea : milk).key == (i % 2 == 0 ? tea.get() : milk.get()));
  }
  CHECK(chunk.add(nullptr).key == nullptr);
  CHECK(chunk.keys.size() == 2);
  const std::string* const tea_text = tea.get();
  tea.reset();  // the actor is gone
  CHECK(*chunk.dumps[0].key == "tea");
  CHECK(chunk.dumps[0].key == tea_text);
}

TEST_CASE("the backlog alarm rings once when enough chunks wait, and again after a drain", "[core][dumping]") {
  constexpr std::size_t kChunk = dumping::DumpStorage::kChunkSize;
  dumping::DumpStorage storage(1, 10 * kChunk);
  std::atomic<int> rings{0};
  storage.set_backlog_alarm(2, [&] { rings.fetch_add(1); });
  auto push = [&](std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) REQUIRE(storage.push(dumping::Dump{}));
  };
  push(2 * kChunk - 1);
  CHECK(rings.load() == 0);  // one full chunk, one nearly full
  push(1);
  CHECK(rings.load() == 1);  // the second chunk closed
  push(2 * kChunk);
  CHECK(rings.load() == 1);  // once until a drain
  storage.recycle(storage.drain_chunks());
  push(2 * kChunk);
  CHECK(rings.load() == 2);
  storage.set_backlog_alarm(0, {});
  storage.recycle(storage.drain_chunks());
  push(2 * kChunk);
  CHECK(rings.load() == 2);  // cleared
}

namespace {

// A request whose recipient throws: the dumps and the runtime's log record tell the whole story
// under the request's trace id.
Task<> crashing_client(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (!envelope->is<ConfigUpdated>()) continue;
    auto answer = co_await ctx.request(Echo{"boom"});
    journal().add(fmt::format("client got: {}", answer ? *answer : to_string(answer.error())));
  }
}

Task<> crashing_server(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    co_await handle(*envelope, [&](const Echo& m, ResponseToken<Echo>) { throw std::runtime_error(m.text); });
  }
}

Task<> journal_logger(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* record = envelope->get<LogRecord>()) {
      journal().add(fmt::format("log {} {}", record->trace_id, record->text));
    }
  }
}

}  // namespace

TEST_CASE("a crashed request is dumped as the error its requester got, under its trace", "[core][dumping]") {
  journal().clear();
  Topology topology;
  auto c = topology.local("client");
  auto s = topology.local("server");
  c.route_to(s, filters::all());
  c.mount(ActorGroup().exec(crashing_client)).entrypoint();
  s.mount(ActorGroup().exec(crashing_server));
  topology.local("system.dumpers").mount(ActorGroup().exec(idle_dumper));
  topology.local("system.loggers").mount(ActorGroup().exec(journal_logger));
  auto system = System::start(topology, quick_options());
  REQUIRE(system.ok());
  const std::string failure = "the recipient failed while handling it: boom";
  REQUIRE(journal().wait_for_line("client got: failed: " + failure));
  auto drained = system->dump_storage()->drain();
  std::vector<const dumping::Dump*> echoes;
  for (const auto& d : drained.dumps) {
    if (d.vtable == &vtable_of<Echo>()) echoes.push_back(&d);
  }
  REQUIRE(echoes.size() == 4);  // request out and in, the error out and in
  const TraceId trace = echoes[0]->trace_id;
  std::vector<std::string> story;
  for (const auto* d : echoes) {
    CHECK(d->trace_id == trace);
    CHECK(d->correlation_id == echoes[0]->correlation_id);
    if (d->kind != MessageKind::Response) continue;
    auto body = dumping::encode_body(*d);
    std::ostringstream text;
    text << msgpack::unpack(body.data(), body.size()).get();
    story.push_back(
        fmt::format("{} {} {}", *d->group, d->direction == dumping::Direction::In ? "in" : "out", text.str()));
  }
  const std::string error = R"({"RequestError":{"kind":"Failed","reason":")" + failure + R"("}})";
  std::sort(story.begin(), story.end());
  CHECK(story == std::vector<std::string>{"client in " + error, "server out " + error});
  // The runtime's record of the failure carries the same trace id.
  CHECK(journal().wait_for_line(fmt::format("log {} actor failed: boom", trace.raw())));
  system->terminate("test over");
  system->join();
}

TEST_CASE("a test proxy's sends and requests are dumped like an actor's", "[core][dumping]") {
  Topology topology;
  topology.local("server").mount(ActorGroup().exec(server));
  topology.local("system.dumpers").mount(ActorGroup().exec(idle_dumper));
  auto proxy = testing::proxy(std::move(topology), "server", quick_options());
  proxy.send(Increment{2});
  CHECK(proxy.request(GetValue{}) == 2);
  auto drained = proxy.system().dump_storage()->drain();
  std::vector<std::string> out;
  std::uint64_t correlation = 0;
  for (const auto& d : drained.dumps) {
    if (d.direction != dumping::Direction::Out || *d.group == "server") continue;
    out.push_back(std::string{d.vtable->name});
    if (d.vtable == &vtable_of<GetValue>()) correlation = d.correlation_id;
  }
  CHECK(out == std::vector<std::string>{"Increment", "GetValue"});
  // The server's answer shares the request's correlation id.
  bool answered = false;
  for (const auto& d : drained.dumps) {
    answered |= *d.group == "server" && d.kind == MessageKind::Response && d.correlation_id == correlation;
  }
  CHECK(correlation != 0);
  CHECK(answered);
}

TEST_CASE("the answer a test proxy got is dumped as delivered to it, like an actor's", "[core][dumping]") {
  Topology topology;
  topology.local("server").mount(ActorGroup().exec(server));
  topology.local("system.dumpers").mount(ActorGroup().exec(idle_dumper));
  auto proxy = testing::proxy(std::move(topology), "server", quick_options());
  CHECK(proxy.request(GetValue{}) == 0);
  auto drained = proxy.system().dump_storage()->drain();
  std::uint64_t sent = 0;
  std::uint64_t got = 0;
  for (const auto& d : drained.dumps) {
    if (*d.group != "system.testers" || d.vtable != &vtable_of<GetValue>()) continue;
    if (d.direction == dumping::Direction::Out && d.kind == MessageKind::Request) sent = d.correlation_id;
    if (d.direction == dumping::Direction::In && d.kind == MessageKind::Response) got = d.correlation_id;
  }
  CHECK(sent != 0);
  CHECK(got == sent);
}
