#pragma once
// Status and Result<T>: how expected failures travel up to the CLI.
//
// A Status is either ok or carries a code and a message. Messages start in
// lowercase, have no trailing period and name the object they are about
// ("opening trace 'out/': no such file"). Each layer adds context with
// Status::context(). Only the CLI prints them.

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace repro {

enum class StatusCode {
  kOk,
  kInvalidArgument,   // bad flag, bad path, bad user input: exit 64 / 1
  kNotFound,          // a file, trace or syscall that does not exist
  kIoError,           // our own read/write/ptrace failed (errno in message)
  kCorruption,        // bad trace bytes: exit 65
  kVersionMismatch,   // trace format too old or too new: exit 65
  kUnsupported,       // a feature we do not handle (named in the message)
  kTraceeDied,        // the tracee vanished under us (ESRCH)
  kDivergence,        // replay did something the trace did not
};

/// A value-semantics error report. Thread-compatible.
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(StatusCode code, std::string message) {
    return Status(code, std::move(message));
  }
  /// An io_error whose message ends with strerror(errnum).
  static Status from_errno(int errnum, const std::string& what);

  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  /// Prefixes the message with "what: ", keeping the code.
  Status context(const std::string& what) const;
  /// "corruption: ...", for logs and tests.
  std::string to_string() const;

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

const char* status_code_name(StatusCode code);

/// Either a T or a non-ok Status. C++20 has no std::expected.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}                 // NOLINT: implicit by design
  Result(Status status) : value_(std::move(status)) { assert(!std::get<Status>(value_).is_ok()); }  // NOLINT

  bool is_ok() const { return std::holds_alternative<T>(value_); }
  /// Requires: is_ok().
  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  /// The error, or an ok Status.
  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(value_); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace repro

/// Returns the Status of `expr` from the enclosing function if it is an error.
#define REPRO_RETURN_IF_ERROR(expr)          \
  do {                                       \
    ::repro::Status repro_status_ = (expr);  \
    if (!repro_status_.is_ok()) {            \
      return repro_status_;                  \
    }                                        \
  } while (0)

#define REPRO_CONCAT_INNER(a, b) a##b
#define REPRO_CONCAT(a, b) REPRO_CONCAT_INNER(a, b)
/// `REPRO_ASSIGN_OR_RETURN(auto x, f());` declares x from a Result or returns its error.
#define REPRO_ASSIGN_OR_RETURN(decl, expr) \
  REPRO_ASSIGN_OR_RETURN_IMPL(REPRO_CONCAT(repro_result_, __LINE__), decl, expr)
#define REPRO_ASSIGN_OR_RETURN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.is_ok()) {                                \
    return tmp.status();                             \
  }                                                  \
  decl = std::move(tmp).value()
