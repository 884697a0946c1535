// Messages shared by the core's tests. Every one is round-tripped through msgpack in
// messages.test.cpp, so add new ones there too, and to the ELFIN_EXTERN_MESSAGE list at the end
// (with its ELFIN_INSTANTIATE_MESSAGE in test_protocol.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <msgpack.hpp>

#include <elfin/message.hpp>

namespace elfin::test {

struct Increment {
  std::uint32_t delta = 1;
  ELFIN_MESSAGE(test, Increment, delta);
  friend bool operator==(const Increment&, const Increment&) = default;
};
struct GetValue {
  ELFIN_REQUEST(test, GetValue, std::uint64_t);
  friend bool operator==(const GetValue&, const GetValue&) = default;
};
struct Numbered {
  std::uint32_t sender = 0;
  std::uint64_t seq = 0;
  ELFIN_MESSAGE(test, Numbered, sender, seq);
  friend bool operator==(const Numbered&, const Numbered&) = default;
};
struct Boom {
  std::string why;
  ELFIN_MESSAGE(test, Boom, why);
  friend bool operator==(const Boom&, const Boom&) = default;
};
struct Echo {
  std::string text;
  ELFIN_REQUEST(test, Echo, std::string, text);
  friend bool operator==(const Echo&, const Echo&) = default;
};
/// A message a router steers by `mode` ("unicast", "multicast", ...) to `key` or `keys`.
struct Keyed {
  std::uint64_t key = 0;
  std::vector<std::uint64_t> keys;
  std::string mode;
  ELFIN_MESSAGE(test, Keyed, key, keys, mode);
  friend bool operator==(const Keyed&, const Keyed&) = default;
};
/// What an actor reports it saw: its key, a word, and a trace id (or any other number).
struct Seen {
  std::uint64_t key = 0;
  std::string what;
  std::uint64_t trace = 0;
  ELFIN_MESSAGE(test, Seen, key, what, trace);
  friend bool operator==(const Seen&, const Seen&) = default;
};

/// Kicks an actor (or a group of them) into action.
struct Start {
  ELFIN_MESSAGE(test, Start);
  friend bool operator==(const Start&, const Start&) = default;
};
/// An actor asks the test for permission to go on; the answer tells it what to do next.
struct Gate {
  std::string what;
  ELFIN_REQUEST(test, Gate, std::string, what);
  friend bool operator==(const Gate&, const Gate&) = default;
};
/// A request routed like Keyed; responders answer by their own rules.
struct Question {
  std::uint64_t key = 0;
  std::vector<std::uint64_t> keys;
  std::string mode;
  ELFIN_REQUEST(test, Question, std::string, key, keys, mode);
  friend bool operator==(const Question&, const Question&) = default;
};
/// Tells a requester actor to issue `Question{key, keys, mode}` ("any" or "all" per `how`) and
/// report the outcome as Answers.
struct Ask {
  std::string how;
  std::uint64_t key = 0;
  std::vector<std::uint64_t> keys;
  std::string mode;
  ELFIN_MESSAGE(test, Ask, how, key, keys, mode);
  friend bool operator==(const Ask&, const Ask&) = default;
};
/// The outcomes of a request, one line each ("ok:<value>", "err:Failed", "err:Ignored"), and the
/// requester's trace id once they arrived.
struct Answers {
  std::vector<std::string> results;
  std::uint64_t trace = 0;
  ELFIN_MESSAGE(test, Answers, results, trace);
  friend bool operator==(const Answers&, const Answers&) = default;
};
/// Asks an actor to `try_send_to(Addr{to}, Keyed{key, {}, mode})` (or a routed `try_send` if
/// `to` is 0) and answer with the result's name ("ok", "Full", "Closed", ...).
struct Probe {
  std::uint64_t to = 0;
  std::uint64_t key = 0;
  std::string mode;
  ELFIN_REQUEST(test, Probe, std::string, to, key, mode);
  friend bool operator==(const Probe&, const Probe&) = default;
};
/// Asks a producer to send `count` Numbered messages.
struct Produce {
  std::uint64_t count = 0;
  ELFIN_MESSAGE(test, Produce, count);
  friend bool operator==(const Produce&, const Produce&) = default;
};
/// The actor's own address, as a raw number.
struct WhoAmI {
  std::uint64_t key = 0;
  ELFIN_REQUEST(test, WhoAmI, std::uint64_t, key);
  friend bool operator==(const WhoAmI&, const WhoAmI&) = default;
};
/// A message an actor sends to itself, forever.
struct Tick {
  std::uint64_t n = 0;
  ELFIN_MESSAGE(test, Tick, n);
  friend bool operator==(const Tick&, const Tick&) = default;
};
/// A sender's last word in the ordering test: how many it sent, on how many threads.
struct SenderDone {
  std::uint32_t sender = 0;
  std::uint64_t sent = 0;
  std::uint64_t threads = 0;
  ELFIN_MESSAGE(test, SenderDone, sender, sent, threads);
  friend bool operator==(const SenderDone&, const SenderDone&) = default;
};
/// What the consumer of the ordering test saw. Not a message: a response type (with a msgpack
/// map nevertheless, as a response crossing the network would need).
struct FifoReport {
  std::uint64_t received = 0;
  std::uint64_t out_of_order = 0;         ///< messages whose seq was not the sender's previous + 1
  std::vector<std::uint64_t> per_sender;  ///< messages received from each sender
  std::vector<std::uint64_t> threads;     ///< distinct worker threads each sender ran on
  MSGPACK_DEFINE_MAP(received, out_of_order, per_sender, threads)
  friend bool operator==(const FifoReport&, const FifoReport&) = default;
};
/// Answered by the ordering test's consumer once every sender is done.
struct GetFifoReport {
  ELFIN_REQUEST(test, GetFifoReport, FifoReport);
  friend bool operator==(const GetFifoReport&, const GetFifoReport&) = default;
};

}  // namespace elfin::test

// A second protocol, for filters::protocol.
namespace elfin::test::other {

struct Note {
  std::string text;
  ELFIN_MESSAGE(other, Note, text);
  friend bool operator==(const Note&, const Note&) = default;
};

}  // namespace elfin::test::other

// Compiled once, in test_protocol.cpp: most core test files include this header.
ELFIN_EXTERN_MESSAGE(elfin::test::Increment);
ELFIN_EXTERN_MESSAGE(elfin::test::GetValue);
ELFIN_EXTERN_MESSAGE(elfin::test::Numbered);
ELFIN_EXTERN_MESSAGE(elfin::test::Boom);
ELFIN_EXTERN_MESSAGE(elfin::test::Echo);
ELFIN_EXTERN_MESSAGE(elfin::test::Keyed);
ELFIN_EXTERN_MESSAGE(elfin::test::Seen);
ELFIN_EXTERN_MESSAGE(elfin::test::Start);
ELFIN_EXTERN_MESSAGE(elfin::test::Gate);
ELFIN_EXTERN_MESSAGE(elfin::test::Question);
ELFIN_EXTERN_MESSAGE(elfin::test::Ask);
ELFIN_EXTERN_MESSAGE(elfin::test::Answers);
ELFIN_EXTERN_MESSAGE(elfin::test::Probe);
ELFIN_EXTERN_MESSAGE(elfin::test::Produce);
ELFIN_EXTERN_MESSAGE(elfin::test::WhoAmI);
ELFIN_EXTERN_MESSAGE(elfin::test::Tick);
ELFIN_EXTERN_MESSAGE(elfin::test::SenderDone);
ELFIN_EXTERN_MESSAGE(elfin::test::GetFifoReport);
ELFIN_EXTERN_MESSAGE(elfin::test::other::Note);
