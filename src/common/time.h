// Time as a value: microseconds since the Unix epoch (UTC), plus the Clock
// interface that injects "now" (docs/style.md §6.7) and the wire formats Google uses.
// Everything here is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace ty {

using TimeMicros = int64_t;  // 0 means "unset".
using DurationMicros = int64_t;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMicros Now() const = 0;
};

// Wall clock (CLOCK_REALTIME); the only place that reads it.
class SystemClock : public Clock {
 public:
  TimeMicros Now() const override;
  static const SystemClock* Get();
};

// Monotonic microseconds for measuring elapsed time (never persisted).
int64_t MonotonicMicros();

// RFC 3339 UTC with a `Z`, fractional digits 0, 3 or 6 as needed
// ("2020-09-09T23:39:15.549112Z"). GAPIC clients mis-parse offsets, so always Z.
std::string FormatRfc3339(TimeMicros t);
// Always 9 fractional digits and `Z` ("2020-09-09T23:39:15.549112000Z"): Cloud
// Logging timestamps, where clients order entries by comparing the strings.
std::string FormatRfc3339Nanos(TimeMicros t);
// Accepts `Z` or a numeric offset and 0-9 fractional digits. InvalidArgument otherwise.
Result<TimeMicros> ParseRfc3339(std::string_view text);

// proto3 Duration: "7200s", "1.5s". InvalidArgument for anything else.
Result<DurationMicros> ParseDuration(std::string_view text);
std::string FormatDuration(DurationMicros d);

}  // namespace ty
