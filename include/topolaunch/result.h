// Errors as values.
//
// Every fallible function returns Result<T> (or Status). An Error carries a
// code (what kind of failure, which decides the exit status) and one or more
// problems, each naming where it happened (file:line, JSON path, host, ...)
// and what was wrong. Validation collects every problem before failing, so a
// user fixes a bad file in one pass. Only the CLI turns an Error into an exit.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace topolaunch {

/// What kind of failure; the CLI maps it to an exit status (see SPEC.md).
enum class ErrorCode {
  kBadUsage,     ///< wrong flags or arguments (exit 2)
  kBadInput,     ///< a file or value the user gave is malformed (exit 2)
  kUnavailable,  ///< a system part is missing or unreachable (exit 3)
  kTimeout,      ///< a system part did not answer in time (exit 3)
  kInternal,     ///< a bug in topolaunch (exit 3)
};

/// One problem: `where` names the file/line, JSON path or object; `what` says
/// what was wrong and, where possible, what was expected.
struct Problem {
  std::string where;
  std::string what;
  bool operator==(const Problem&) const = default;
};

/// A failure: a code and at least one problem.
struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::vector<Problem> problems;

  Error() = default;
  Error(ErrorCode c, std::string where, std::string what)
      : code(c), problems{{std::move(where), std::move(what)}} {}
  Error(ErrorCode c, std::vector<Problem> ps) : code(c), problems(std::move(ps)) {}

  /// "where: what" lines joined by newlines (no "topolaunch: error:" prefix).
  std::string Message() const;
};

/// Exit status the SPEC assigns to an error code.
int ExitStatusFor(ErrorCode code);

/// Either a value or an Error. Small on purpose: has_value/value/error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}              // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}          // NOLINT: implicit by design
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  const Error& error() const { return std::get<1>(v_); }
  Error&& take_error() { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

/// Success carries nothing.
struct Ok {};
using Status = Result<Ok>;

}  // namespace topolaunch
