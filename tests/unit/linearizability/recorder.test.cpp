// The recorder: clients on several threads record at once; what the history holds.
#include <catch2/catch.hpp>

#include <thread>
#include <vector>

#include <elfin/linearizability/checker.hpp>
#include <elfin/linearizability/kv_model.hpp>
#include <elfin/linearizability/recorder.hpp>

namespace lin = elfin::linearizability;

TEST_CASE("recorder: clients on many threads record without losing an operation", "[linearizability]") {
  lin::Recorder<lin::KvInput, lin::KvOutput> recorder;
  constexpr int kThreads = 8;
  constexpr int kOps = 1000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&recorder, t] {
      auto& client = recorder.client();
      const std::string key = "k" + std::to_string(t);  // a key per thread: a sequential history each
      std::uint64_t version = 0;
      for (int i = 0; i < kOps; ++i) {
        const std::string value = std::to_string(i);
        auto put = client.invoke(lin::KvInput::put(key, value));
        client.ok(put, lin::KvOutput::ok(++version));
        auto get = client.invoke(lin::KvInput::get(key));
        client.ok(get, lin::KvOutput::found(value, version));
      }
    });
  }
  for (auto& t : threads) t.join();
  const auto history = recorder.history();
  CHECK(history.size() == kThreads * kOps * 2);
  for (const auto& op : history.operations) {
    REQUIRE(op.complete);
    CHECK(*op.complete >= op.invoke);
  }
  const auto result = lin::check(lin::KvModel{}, history, {.threads = 2});
  INFO(result.summary());
  CHECK(result.ok());
  CHECK(result.keys == kThreads);
}

TEST_CASE("recorder: failed operations are left out, unanswered ones are pending", "[linearizability]") {
  lin::Time now = 0;
  lin::Recorder<lin::KvInput, lin::KvOutput> recorder([&now] { return now++; });  // an event counter
  auto& a = recorder.client();
  auto& b = recorder.client();
  CHECK(a.id() == 1);
  CHECK(b.id() == 2);
  auto refused = a.invoke(lin::KvInput::put("k", "x"));
  a.failed(refused);
  auto lost = a.invoke(lin::KvInput::put("k", "y"));
  a.unknown(lost);
  auto open = b.invoke(lin::KvInput::put("k", "z"));  // never closed
  (void)open;
  auto read = b.invoke(lin::KvInput::get("k"));
  b.ok(read, lin::KvOutput::found("y", 1));
  const auto history = recorder.history();
  REQUIRE(history.size() == 3);
  CHECK(history.operations[0].input.value == "y");
  CHECK(history.operations[0].pending());
  CHECK(history.operations[1].input.value == "z");
  CHECK(history.operations[1].pending());
  CHECK(history.operations[2].invoke == 3);
  CHECK(history.operations[2].complete == 4);
  CHECK(lin::check(lin::KvModel{}, history).ok());
}
