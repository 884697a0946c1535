// Rotating a running system's dump file as logrotate does: move the file away, then SIGHUP (or a
// ReopenDumpFile message). Dumps recorded before the signal end up in the moved file, later ones
// in a new file at the configured path.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <elfin/dumper/dumper.hpp>
#include <elfin/testing/proxy.hpp>

#include "../core/test_support.hpp"
#include "dumper_test_support.hpp"

using namespace elfin;
using namespace elfin::test;

namespace {

struct Say {
  std::string word;
  ELFIN_MESSAGE(rotation, Say, word);
};

Task<> listener(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* say = envelope->get<Say>()) journal().add("heard " + say->word);
  }
}

// No configurer here: SIGHUP would also make it reload configs, which is harmless but not tested.
Topology rotating() {
  Topology topology;
  topology.local("listeners").mount(ActorGroup().exec(listener));
  topology.local("system.dumpers").mount(dumper::blueprint());
  return topology;
}

bool has_word(const std::string& file, const std::string& word) {
  return elfin::test::read_file(file).find(fmt::format(R"("word":"{}")", word)) != std::string::npos;
}

// Says `word` to the listener and waits until it was heard: its In dump is recorded by then.
void say(testing::Proxy& proxy, const std::string& word) {
  proxy.send_to(proxy.system().group_addr("listeners"), Say{word});
  REQUIRE(journal().wait_for_line("heard " + word));
}

}  // namespace

TEST_CASE("a moved dump file is reopened at its path on SIGHUP and on ReopenDumpFile", "[dumper][battery]") {
  dumper::test::TempDir dir;
  const auto path = dir.file("app.dump");
  journal().clear();
  StartOptions options = quick_options();
  // The interval is long so that only flushes and reopens write: what goes where is deterministic.
  options.config_toml = fmt::format("[system.dumpers]\npath = \"{}\"\nwrite_interval = \"1h\"\n", path);
  auto proxy = testing::proxy(rotating(), "system.dumpers", std::move(options));

  say(proxy, "before");
  std::ignore = proxy.request(dumper::FlushDumps{});
  REQUIRE(has_word(path, "before"));

  SECTION("SIGHUP") {
    std::filesystem::rename(path, path + ".1");
    say(proxy, "between");  // recorded before the signal: belongs to the moved file
    REQUIRE(std::raise(SIGHUP) == 0);
    // The writer creates the new file when it reopens.
    REQUIRE(dumper::test::eventually([&] { return std::filesystem::exists(path); }));
    say(proxy, "after");
    std::ignore = proxy.request(dumper::FlushDumps{});
    CHECK(has_word(path + ".1", "before"));
    CHECK(has_word(path + ".1", "between"));
    CHECK_FALSE(has_word(path + ".1", "after"));
    CHECK(has_word(path, "after"));
    CHECK_FALSE(has_word(path, "before"));
    CHECK_FALSE(has_word(path, "between"));
  }

  SECTION("ReopenDumpFile, twice in a row") {
    for (const char* suffix : {".1", ".2"}) {
      std::filesystem::rename(path, path + suffix);
      say(proxy, std::string("between") + suffix);
      proxy.send(dumper::ReopenDumpFile{});
      // FlushDumps follows the reopen in the dumper's mailbox and waits for it in the writer.
      std::ignore = proxy.request(dumper::FlushDumps{});
      REQUIRE(std::filesystem::exists(path));
      say(proxy, std::string("after") + suffix);
      std::ignore = proxy.request(dumper::FlushDumps{});
    }
    CHECK(has_word(path + ".1", "before"));
    CHECK(has_word(path + ".1", "between.1"));
    CHECK_FALSE(has_word(path + ".1", "after.1"));
    CHECK(has_word(path + ".2", "after.1"));
    CHECK(has_word(path + ".2", "between.2"));
    CHECK_FALSE(has_word(path + ".2", "after.2"));
    CHECK(has_word(path, "after.2"));
    CHECK_FALSE(has_word(path, "between.2"));
  }
}
