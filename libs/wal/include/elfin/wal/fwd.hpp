// Forward declarations of libs/wal's types, for headers that only name them.
#pragma once

#include <cstdint>

namespace elfin::wal {

enum class ErrorKind : std::uint8_t;
enum class IoOp : std::uint8_t;
struct Error;
struct Errno;

class File;
class FileSystem;
class PosixFileSystem;
class FaultFileSystem;

struct Record;
struct Entry;
struct HardState;
struct SegmentHeader;
struct RecordHeader;
struct SegmentScan;
struct SegmentInfo;
struct LogState;
struct Recovery;
struct RecoveryOptions;

struct WriterOptions;
struct Durable;
class Writer;

}  // namespace elfin::wal
