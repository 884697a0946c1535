// Writes the seed corpus of the frame-decoder fuzzer: a few streams of valid frames, each file a
// control byte (see frame_decoder.fuzz.cpp) followed by the stream.
// Usage: elfin_frame_corpus <directory>   (tests/fuzz/corpus/frame holds its output, checked in)
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <elfin/any_message.hpp>
#include <elfin/network/frame.hpp>

#include "fuzz_messages.hpp"

using namespace elfin::network;

namespace {

Hello hello(std::uint16_t node_no) {
  Hello h;
  h.node_no = node_no;
  h.launch_id = 0x1234;
  for (std::size_t i = 0; i < h.nonce.size(); ++i) h.nonce[i] = static_cast<std::uint8_t>(i);
  h.node_name = "seed";
  return h;
}

std::string message(bool request, const elfin::AnyMessage& m) {
  const std::string payload = m.encode();
  MessageFrame f;
  f.request = request;
  f.flow_id = 1;
  f.sender = 0x0002010000000005;
  f.group_no = 1;
  f.trace_id = 77;
  f.request_id = request ? 9 : 0;
  f.protocol = m.protocol();
  f.name = m.name();
  f.payload = payload;
  std::string out;
  encode(f, out);
  return out;
}

void write(const std::string& dir, const std::string& name, unsigned char control,
           const std::vector<std::string>& parts) {
  std::ofstream file(dir + "/" + name, std::ios::binary);
  file.put(static_cast<char>(control));
  for (const std::string& p : parts) file << p;
}

std::string bytes(const Frame& f) {
  std::string out;
  encode(f, out);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <directory>\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  elfin::fuzz::Reading reading{"t1", {1, -2, 300000}, {{"hot", true}}, {{1.5, -2.5}}};
  const std::string inc = message(false, elfin::AnyMessage(elfin::fuzz::Increment{3, "x"}));
  const std::string read = message(false, elfin::AnyMessage(reading));
  const std::string ask = message(true, elfin::AnyMessage(elfin::fuzz::Summarize{}));
  const std::string response =
      bytes(ResponseFrame{9, 77, {{ResponseStatus::Ok, "\x2a"}, {ResponseStatus::Failed, {}}}});
  const std::string welcome = bytes(Welcome{{{1, "counters"}, {2, "readings"}}});

  write(dir, "handshake-no-secret", 0x3F, {bytes(hello(2)), bytes(Auth{}), welcome, inc});
  write(dir, "handshake-secret", 0x80 | 7, {bytes(hello(2)), bytes(Auth{std::vector<std::uint8_t>(32, 1)})});
  write(dir, "messages", 0x00, {bytes(hello(2)), bytes(Auth{}), inc, read, ask, response});
  write(dir, "control-frames", 0x05,
        {bytes(Credit{1, 100}), bytes(Ping{1}), bytes(Pong{1}), bytes(Bye{"done"}), bytes(Refuse{"no"})});
  write(dir, "small-max", 0x40 | 3, {bytes(hello(2)), read});
  write(dir, "same-node", 0x10, {bytes(hello(1))});
  return 0;
}
