// The on-disk form of one log entry, and the Cloud Logging rules applied before an
// entry is stored (severity defaults, structured-JSON lifting).
//
// Each entry is one line of compact JSON ending in '\n' (NDJSON), keys in this order:
//
//   {"t":1599694755549112,"task":"workerpool0-0","stream":"stderr","sev":"ERROR","msg":"..."}
//
//   t       time, microseconds since the epoch (integer)
//   k       source time, only when it differs from t (LogEntry::source_time)
//   task    task name ("workerpool0-0", "master-replica-0", "service")
//   stream  "stdout" | "stderr" | "service"
//   sev     Cloud Logging severity name
//   msg     the message; newlines and control characters are JSON-escaped, bytes
//           that are not valid UTF-8 are replaced by U+FFFD (user programs print
//           anything; one bad byte must not lose the line)
//
// Short keys because logs are the bulk of what Trainyard writes. Pure functions,
// thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "logs/log_store.h"

namespace ty::logs::internal {

// Applies the Cloud Logging rules (docs/contracts/runtime.md §10) to an entry about to be
// stored: a stdout/stderr message that is a single JSON object has its string
// "message" lifted into the message and its string "severity" (upper-cased) used as
// the severity. An empty severity then defaults by stream: stderr "ERROR", stdout and
// service "INFO". A severity given by the caller always wins.
LogEntry Normalize(const LogEntry& entry);

// The entry as one NDJSON line, '\n' included. Never throws.
std::string EncodeLine(const LogEntry& entry);

// Parses a line written by EncodeLine (without its '\n'); nullopt if malformed.
std::optional<LogEntry> DecodeLine(std::string_view line);

}  // namespace ty::logs::internal
