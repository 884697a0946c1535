// DumpReadError: a dump file that could not be opened or read, a line that is not a dump record, or
// a temporary file of a sort that failed.
//
// `message()` is the text `elfin dump` prints ("dumps.jsonl: cannot open: No such file or
// directory"); `kind()`, `file()` and `code()` say the same to a program (e.g. to wait for a file
// that does not exist yet).
//
// Thread safety: a plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <system_error>
#include <utility>

#include <elfin/detail/error_formatter.hpp>

namespace elfin::dumper {

class DumpReadError {
 public:
  using elfin_error = void;

  /// Unscoped on purpose: `error.kind() == DumpReadError::Open` reads as the kind it compares.
  enum Kind : std::uint8_t {
    Open,       ///< the file could not be opened (code() says why)
    Read,       ///< reading it failed (code() says why)
    Malformed,  ///< a line that is not a dump record (parse_dump_line)
    TempFile,   ///< sorting could not create, write or read back a temporary file (code() says why)
  };

  DumpReadError(Kind kind, std::string message, std::string file = {}, std::error_code code = {})
      : message_(std::move(message)), file_(std::move(file)), code_(code), kind_(kind) {}

  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }
  /// Empty for Malformed (the reader reports the file and line in MalformedLine).
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  /// The system's reason for Open and Read.
  [[nodiscard]] std::error_code code() const noexcept { return code_; }

 private:
  std::string message_;
  std::string file_;
  std::error_code code_;
  Kind kind_;
};

}  // namespace elfin::dumper
