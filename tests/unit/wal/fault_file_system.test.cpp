// The fault-injecting file layer itself: its power-loss model keeps exactly what was synced.
// (A real power cut cannot be run in a test; this is the model the crash tests rely on.)
#include <catch2/catch.hpp>

#include <cerrno>
#include <filesystem>

#include <elfin/wal/fault_file_system.hpp>

#include "wal_test_support.hpp"

using namespace elfin::wal;
using namespace elfin::wal::test;
using elfin::test::TempDir;

namespace {
void write_text(File& file, std::uint64_t offset, std::string_view text) {
  REQUIRE(file.write_at(offset, bytes_of(text)));
}
}  // namespace

TEST_CASE("fault layer: a power loss keeps synced data and drops what was written after", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.path().string();
  FaultFileSystem fs(posix, dir);
  const auto path = join_path(dir, "f");
  {
    auto file = fs.open(path, OpenMode::CreateNew);
    REQUIRE(file);
    write_text(**file, 0, "synced");
    REQUIRE((*file)->sync());
    REQUIRE(fs.sync_dir(dir));
    write_text(**file, 6, "-lost");
    REQUIRE((*file)->truncate(3));
    CHECK(read_all(path) == "syn");
  }
  fs.power_loss();
  CHECK(read_all(path) == "synced");
}

TEST_CASE("fault layer: names are durable only after the directory is synced", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.path().string();
  write_all_text(join_path(dir, "old"), "old data");  // there before: durable
  FaultFileSystem fs(posix, dir);
  {
    auto file = fs.open(join_path(dir, "new.tmp"), OpenMode::CreateNew);
    REQUIRE(file);
    write_text(**file, 0, "new data");
    REQUIRE((*file)->sync());
  }
  REQUIRE(fs.rename(join_path(dir, "new.tmp"), join_path(dir, "new")));
  REQUIRE(fs.remove(join_path(dir, "old")));

  SECTION("without the directory fsync the rename and the removal are undone") {
    fs.power_loss();
    CHECK_FALSE(std::filesystem::exists(join_path(dir, "new")));
    CHECK_FALSE(std::filesystem::exists(join_path(dir, "new.tmp")));  // never durably named
    CHECK(read_all(join_path(dir, "old")) == "old data");
  }
  SECTION("with it they stay") {
    REQUIRE(fs.sync_dir(dir));
    fs.power_loss();
    CHECK(read_all(join_path(dir, "new")) == "new data");
    CHECK_FALSE(std::filesystem::exists(join_path(dir, "old")));
  }
}

TEST_CASE("fault layer: limited space cuts a write short and reports ENOSPC", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.path().string();
  FaultFileSystem fs(posix, dir);
  auto file = fs.open(join_path(dir, "f"), OpenMode::CreateNew);
  REQUIRE(file);
  write_text(**file, 0, "0123456789");
  fs.limit_space(4);
  write_text(**file, 2, "abcdefgh");  // grows the file by exactly 0: fits
  auto short_write = (*file)->write_at(10, bytes_of("ABCDEFGH"));
  REQUIRE_FALSE(short_write);
  CHECK(short_write.error() == Errno{ENOSPC});
  CHECK(read_all(join_path(dir, "f")) == "01abcdefghABCD");
  auto alloc = (*file)->allocate(100);
  REQUIRE_FALSE(alloc);
  CHECK(alloc.error() == Errno{ENOSPC});
}

TEST_CASE("fault layer: after crash_after(n) the n+1-th mutating call and all later ones fail", "[wal]") {
  TempDir tmp;
  PosixFileSystem posix;
  const auto dir = tmp.path().string();
  FaultFileSystem fs(posix, dir);
  fs.crash_after(2);
  auto file = fs.open(join_path(dir, "f"), OpenMode::CreateNew);  // 1
  REQUIRE(file);
  REQUIRE((*file)->write_at(0, bytes_of("a")));  // 2
  CHECK_FALSE(fs.crashed());
  CHECK((*file)->sync().error() == Errno{EIO});
  CHECK(fs.crashed());
  CHECK_FALSE((*file)->write_at(1, bytes_of("b")));
  CHECK(read_all(join_path(dir, "f")) == "a");
}
