// Two different types claiming the same (protocol, name). The message registry is process-wide,
// so this makes every System::start in the process fail: it has a test binary of its own.
#include <catch2/catch.hpp>

#include <elfin/elfin.hpp>

namespace dup_first {
struct Twin {
  std::uint32_t a = 0;
  ELFIN_MESSAGE(dup, Twin, a);
};
}  // namespace dup_first

namespace dup_second {
struct Twin {
  std::string b;
  ELFIN_MESSAGE(dup, Twin, b);
};
}  // namespace dup_second

namespace {

elfin::Task<> idle(elfin::Context<> ctx) {
  while (auto envelope = co_await ctx.recv()) {
  }
}

}  // namespace

TEST_CASE("System::start refuses two message types with the same protocol and name, naming them", "[core][messages]") {
  elfin::Topology topology;
  topology.local("idle").mount(elfin::ActorGroup().exec(idle));
  auto system = elfin::System::start(std::move(topology));
  REQUIRE_FALSE(system.ok());
  CHECK_THAT(system.error().message(), Catch::Contains("dup.Twin"));
}

TEST_CASE("the message registry lists a (protocol, name) claimed by two types as a conflict", "[core][messages]") {
  const auto conflicts = elfin::MessageRegistry::instance().conflicts();
  REQUIRE(conflicts.size() == 1);
  CHECK_THAT(conflicts.front(), Catch::Contains("dup.Twin"));
  CHECK(&elfin::vtable_of<dup_first::Twin>() != &elfin::vtable_of<dup_second::Twin>());
}
