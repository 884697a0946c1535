// Pods and versions: identity is address + incarnation, versions compare as Shardcake's do.
#include "assignment_test_support.hpp"

using namespace assignment_test;

TEST_CASE("versions are read as Shardcake reads them: numbers split at . and -, the rest dropped", "[assignment]") {
  CHECK(PodVersion::parse("1.2.3") == PodVersion{1, 2, 3});
  CHECK(PodVersion::parse("1.2.3-SNAPSHOT") == PodVersion{1, 2, 3});
  CHECK(PodVersion::parse("2-rc1") == PodVersion{2});
  CHECK(PodVersion::parse("v1.2") == PodVersion{2});
  CHECK(PodVersion::parse("") == PodVersion{});
  CHECK(PodVersion::parse("99999999999.1") == PodVersion{1});
  CHECK(PodVersion::parse("1.2.3").to_string() == "1.2.3");
  CHECK(PodVersion{}.to_string() == "-");
}

TEST_CASE("versions compare number by number, a prefix first", "[assignment]") {
  CHECK(PodVersion{1, 10} > PodVersion{1, 9});
  CHECK(PodVersion{2} > PodVersion{1, 99, 99});
  CHECK(PodVersion{1, 2} < PodVersion{1, 2, 0});
  CHECK(PodVersion{} < PodVersion{0});
  CHECK(PodVersion::parse("1.2.0-SNAPSHOT") == PodVersion::parse("1.2.0"));
}

TEST_CASE("a pod is its address and its incarnation", "[assignment]") {
  const PodId a{"10.0.0.1:54321", 1};
  const PodId a_again{"10.0.0.1:54321", 2};
  CHECK(a != a_again);
  CHECK(a < a_again);
  CHECK(PodId{"10.0.0.1:54321", 9} < PodId{"10.0.0.2:54321", 1});
  CHECK(fmt::format("{}", a) == "10.0.0.1:54321#1");
  CHECK(fmt::format("{}", Pod{a, PodVersion::parse("1.4.0")}) == "10.0.0.1:54321#1 v1.4.0");
}
