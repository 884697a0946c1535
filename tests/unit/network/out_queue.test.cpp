// The connection's queue of bytes for its socket: order whatever way bytes come in and leave,
// big batches queued without a copy, written buffers given back for the next batch.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "out_queue.hpp"

// Named: the test binary may be built as one unit with the other network tests.
namespace out_queue_test {
namespace {

using elfin::network::detail::OutQueue;

std::string contents(const OutQueue& queue) {
  std::string all;
  queue.for_each_buffer([&all](const char* data, std::size_t size) { all.append(data, size); });
  return all;
}

std::vector<const char*> buffer_starts(const OutQueue& queue) {
  std::vector<const char*> starts;
  queue.for_each_buffer([&starts](const char* data, std::size_t) { starts.push_back(data); });
  return starts;
}

}  // namespace

TEST_CASE("an out queue gives back its bytes in the order they were queued, however they came", "[network]") {
  OutQueue queue;
  CHECK(queue.empty());
  std::string big(OutQueue::kOwnBufferBytes, 'B');
  std::string small = "small";
  queue.append("head:");
  queue.take(small);
  CHECK(small.empty());
  queue.take(big);
  CHECK(big.empty());
  queue.append_with([](std::string& tail) { tail += ":tail"; });
  const std::string expected = "head:small" + std::string(OutQueue::kOwnBufferBytes, 'B') + ":tail";
  CHECK(queue.bytes() == expected.size());
  CHECK(contents(queue) == expected);

  SECTION("consumed in pieces, across buffers") {
    std::size_t consumed = 0;
    for (const std::size_t step : {std::size_t{3}, std::size_t{9}, OutQueue::kOwnBufferBytes - 2, std::size_t{1}}) {
      queue.consume(step);
      consumed += step;
      REQUIRE(contents(queue) == expected.substr(consumed));
      REQUIRE(queue.bytes() == expected.size() - consumed);
    }
    queue.consume(queue.bytes());
    CHECK(queue.empty());
    CHECK(contents(queue).empty());
  }
  SECTION("partly written, then followed by what was queued meanwhile") {
    OutQueue later;
    later.append("later");
    queue.consume(7);
    queue.splice(later);
    CHECK(later.empty());
    CHECK(contents(queue) == expected.substr(7) + "later");
  }
}

TEST_CASE("an out queue keeps a big batch's buffer instead of copying it, and gives written buffers back",
          "[network]") {
  OutQueue queue;
  std::string batch(OutQueue::kOwnBufferBytes * 4, 'x');
  const char* const batch_data = batch.data();
  const std::size_t batch_capacity = batch.capacity();
  queue.take(batch);
  // The same memory is what the socket is given: no byte was copied.
  REQUIRE(buffer_starts(queue) == std::vector<const char*>{batch_data});

  // Written: its buffer is a spare, and the next batch handed over gets it back, capacity and all.
  OutQueue writing;
  swap(writing, queue);
  writing.consume(writing.bytes());
  swap(writing, queue);  // as the connection's writer hands the queue back and forth
  std::string next(OutQueue::kOwnBufferBytes, 'y');
  queue.take(next);
  CHECK(next.empty());
  CHECK(next.capacity() == batch_capacity);
  CHECK(next.data() == batch_data);
}

}  // namespace out_queue_test
