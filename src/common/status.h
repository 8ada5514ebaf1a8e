// Status and Result<T>: how every fallible operation in Trainyard reports failure.
//
// The code set is the closed set of google.rpc.Code (absl::StatusCode) so the API
// layer can map it to HTTP once (see api/). Detail goes in the message, never in a
// new code. Both types are cheap value types; they are not thread-safe to mutate
// concurrently but may be copied freely across threads.
#pragma once

#include <cassert>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace ty {

enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// Canonical upper-case name ("INVALID_ARGUMENT"), as google.rpc.Code spells it.
const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Field path for validation errors (`trainingInput.workerCount`); empty otherwise.
  // The API layer emits it as a google.rpc.BadRequest field violation.
  const std::string& field() const { return field_; }
  Status WithField(std::string field) const {
    Status s = *this;
    s.field_ = std::move(field);
    return s;
  }

  // Prefixes the message with where it happened: "launch replica 3: <message>".
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    Status s = *this;
    s.message_ = context + ": " + message_;
    return s;
  }

  std::string ToString() const;
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string field_;
};

inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status PermissionDenied(std::string m) {
  return Status(StatusCode::kPermissionDenied, std::move(m));
}
inline Status AlreadyExists(std::string m) {
  return Status(StatusCode::kAlreadyExists, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
inline Status Unavailable(std::string m) { return Status(StatusCode::kUnavailable, std::move(m)); }
inline Status DeadlineExceeded(std::string m) {
  return Status(StatusCode::kDeadlineExceeded, std::move(m));
}
inline Status Cancelled(std::string m) { return Status(StatusCode::kCancelled, std::move(m)); }
inline Status ResourceExhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
inline Status Aborted(std::string m) { return Status(StatusCode::kAborted, std::move(m)); }

// A validation failure of one request field: message "Field: <path> Error: <rule>"
// is how Google's ml API words it; the path is also kept for BadRequest details.
inline Status FieldError(const std::string& path, const std::string& rule) {
  return InvalidArgument("Field: " + path + " Error: " + rule).WithField(path);
}

// Runs `fn` and turns anything it throws into Internal, for the places where an
// exception from a library would otherwise end the process: the loop's tasks, the
// executor's threads, request handlers (docs/style.md §4: no exceptions across modules).
template <typename F>
Status NoThrow(F&& fn) {
  try {
    fn();
    return Status::Ok();
  } catch (const std::exception& e) {
    return Internal(std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return Internal("unexpected exception of unknown type");
  }
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result built from an OK Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  // REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace ty

#define TY_CONCAT_INNER(a, b) a##b
#define TY_CONCAT(a, b) TY_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                \
  do {                                       \
    ::ty::Status ty_status_ = (expr);        \
    if (!ty_status_.ok()) return ty_status_; \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(TY_CONCAT(ty_result_, __LINE__), lhs, expr)
