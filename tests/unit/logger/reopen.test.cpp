// Rotating a running system's log file as logrotate does: move the file away, then SIGHUP (or a
// ReopenLogFile message); records from then on go to a new file at the configured path.
#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <elfin/logger/logger.hpp>
#include <elfin/logging.hpp>
#include <elfin/testing/proxy.hpp>

#include "../core/test_support.hpp"
#include "../temp_dir.hpp"

using namespace elfin;
using namespace elfin::test;

namespace {

struct Say {
  std::string word;
  ELFIN_MESSAGE(log_rotation, Say, word);
};

Task<> word_sayer(Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
    if (const auto* say = envelope->get<Say>()) log::info("said {}", say->word);
  }
}

// No configurer here: SIGHUP would also make it reload configs, which is harmless but not tested.
Topology rotating() {
  Topology topology;
  topology.local("talkers").mount(ActorGroup().exec(word_sayer));
  topology.local("system.loggers").mount(logger::blueprint());
  return topology;
}

bool has_line(const std::string& file, const std::string& word) {
  return elfin::test::read_file(file).find(" - said " + word + "\n") != std::string::npos;
}

void say(testing::Proxy& proxy, const std::string& word) {
  proxy.send_to(proxy.system().group_addr("talkers"), Say{word});
}

}  // namespace

TEST_CASE("a moved log file is reopened at its path on SIGHUP and on ReopenLogFile", "[logger]") {
  TempDir dir;
  const auto path = dir.file("app.log");
  StartOptions options = quick_options();
  options.config_toml = fmt::format("[system.loggers]\nsink = \"file\"\npath = \"{}\"\n", path);
  auto proxy = testing::proxy(rotating(), "system.loggers", std::move(options));

  say(proxy, "before");
  REQUIRE(eventually([&] { return has_line(path, "before"); }));

  SECTION("SIGHUP") {
    std::filesystem::rename(path, path + ".1");
    REQUIRE(std::raise(SIGHUP) == 0);
    REQUIRE(eventually([&] { return std::filesystem::exists(path); }));  // the logger reopened
    say(proxy, "after");
    REQUIRE(eventually([&] { return has_line(path, "after"); }));
    CHECK(has_line(path + ".1", "before"));
    CHECK_FALSE(has_line(path + ".1", "after"));
    CHECK_FALSE(has_line(path, "before"));
  }

  SECTION("ReopenLogFile, twice in a row") {
    for (const char* suffix : {".1", ".2"}) {
      std::filesystem::rename(path, path + suffix);
      proxy.send(logger::ReopenLogFile{});
      REQUIRE(eventually([&] { return std::filesystem::exists(path); }));
      say(proxy, std::string("after") + suffix);
      REQUIRE(eventually([&] { return has_line(path, std::string("after") + suffix); }));
    }
    CHECK(has_line(path + ".1", "before"));
    CHECK_FALSE(has_line(path + ".1", "after.1"));
    CHECK(has_line(path + ".2", "after.1"));
    CHECK_FALSE(has_line(path + ".2", "after.2"));
    CHECK(has_line(path, "after.2"));
  }
}
