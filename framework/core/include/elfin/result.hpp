// Result<T, E>: a value or an error (elfin's `std::expected`, which libstdc++ 12 lacks in C++20).
//
// Expected failures in elfin (a full mailbox, an ignored request, a bad config) are values, never
// exceptions. `Result` is deliberately small: construct from a value or from `Err(e)`, test with
// `ok()` / `operator bool`, read with `value()` / `error()`.
//
// Thread safety: a plain value type.
#pragma once

#include <cassert>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace elfin {

/// Wraps an error so `Result<T, E>` can be built from it even when `T` and `E` are the same type.
template <class E>
struct Err {
  E error;
};
template <class E>
Err(E) -> Err<E>;

template <class T, class E>
class [[nodiscard]] Result {
 public:
  using value_type = T;
  using error_type = E;

  /// A default value, as std::expected has (decoders fill a Result in place).
  Result()
    requires std::is_default_constructible_v<T>
      : storage_(std::in_place_index<0>) {}
  template <class U = T, class = std::enable_if_t<std::is_constructible_v<T, U&&>>>
  Result(U&& value) : storage_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT: implicit on purpose
  template <class G>
  Result(Err<G> err) : storage_(std::in_place_index<1>, std::move(err.error)) {}  // NOLINT

  [[nodiscard]] bool ok() const noexcept { return storage_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return assert(ok()), std::get<0>(storage_); }
  const T& value() const& { return assert(ok()), std::get<0>(storage_); }
  T&& value() && { return assert(ok()), std::get<0>(std::move(storage_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const& { return assert(!ok()), std::get<1>(storage_); }
  E&& error() && { return assert(!ok()), std::get<1>(std::move(storage_)); }

  template <class U>
  T value_or(U&& fallback) const& {
    return ok() ? value() : static_cast<T>(std::forward<U>(fallback));
  }

  friend bool operator==(const Result& a, const Result& b) = default;

 private:
  std::variant<T, E> storage_;
};

/// `Result<void, E>`: success carries nothing, and constructs no E (a send's error holds the
/// message, so an E made on every success would cost a message each time).
template <class E>
class [[nodiscard]] Result<void, E> {
 public:
  using value_type = void;
  using error_type = E;

  Result() = default;
  template <class G>
  Result(Err<G> err) : error_(std::in_place, std::move(err.error)) {}  // NOLINT

  [[nodiscard]] bool ok() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }
  // Precondition !ok(), asserted: std::expected::error()'s contract, so no check in release builds.
  const E& error() const& { return assert(!ok()), *error_; }    // NOLINT(bugprone-unchecked-optional-access)
  E&& error() && { return assert(!ok()), std::move(*error_); }  // NOLINT(bugprone-unchecked-optional-access)

  friend bool operator==(const Result& a, const Result& b) { return a.error_ == b.error_; }

 private:
  std::optional<E> error_;
};

}  // namespace elfin
