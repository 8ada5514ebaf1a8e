// LogFilter: the Cloud Logging query language (docs/contracts/cloud-logging-v2.md §3), the
// part gcloud and people use, evaluated against LogEntry JSON objects as
// `entries:list` returns them.
//
// Supported: comparisons `FIELD OP VALUE` with = != < <= > >= : (has) :* (present);
// AND, OR, NOT (upper case), `-` for NOT,
// implicit AND between adjacent terms, parentheses, value groups
// (`resource.type = ("a" OR "b")`), bare values (global search: any string in the
// entry contains it), `--` comments, quoted path components
// (`labels."ml.googleapis.com/task_name"`). Precedence as documented by Google:
// NOT, then OR, then AND — so gcloud's unparenthesized `T AND a OR b` is
// `T AND (a OR b)`.
//
// Types: `timestamp` and `receiveTimestamp` compare as instants (RFC 3339 or a
// bare date); `severity` by its numeric level, names case-insensitive; JSON
// numbers numerically; strings case-insensitively. A field an entry lacks fails
// every comparison (so `NOT f="x"` holds and `f!="x"` does not).
//
// Errors: InvalidArgument "Unparseable filter: syntax error at line L, column C,
// token 'X'" (the wording users see from Google), or naming an unknown field, a
// bad value, or a regular expression (=~ and !~ are refused: a backtracking
// matcher on untrusted patterns and long lines could exhaust the stack). Pure: no I/O. Immutable
// after Parse; thread-compatible.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/time.h"
#include "filter/filter_syntax.h"

namespace ty::logs {

class LogFilter {
 public:
  struct Node;  // The parsed expression (log_filter.cc).

  // "" (or only whitespace and comments) matches every entry.
  static Result<LogFilter> Parse(std::string_view text);

  bool Matches(const nlohmann::json& entry) const;

  // What every matching entry must satisfy, for skipping work before rendering
  // entries: the least `timestamp` (inclusive) and the greatest (inclusive).
  // nullopt = no bound the filter implies.
  std::optional<TimeMicros> TimestampFloor() const;
  std::optional<TimeMicros> TimestampCeiling() const;
  // The values `path` (e.g. "resource.labels.job_id") must equal in every
  // matching entry; nullopt when the filter does not pin it.
  std::optional<std::set<std::string>> RequiredValues(const std::string& path) const;

  LogFilter();
  ~LogFilter();
  LogFilter(LogFilter&&) noexcept;
  LogFilter& operator=(LogFilter&&) noexcept;

 private:
  std::shared_ptr<const Node> root_;  // nullptr = match all.
};

// The query language's table for the one filter engine (filter/filter_syntax.h).
const filter::FilterGrammar& LoggingQueryGrammar();

// The Cloud Logging severity names and levels: "DEFAULT" 0 ... "EMERGENCY" 800.
// nullopt for an unknown name (case-insensitive).
std::optional<int> SeverityLevel(std::string_view name);

}  // namespace ty::logs
