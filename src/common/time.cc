#include "common/time.h"

#include <time.h>

#include <cctype>
#include <cstdio>

namespace ty {

TimeMicros SystemClock::Now() const {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<TimeMicros>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

const SystemClock* SystemClock::Get() {
  static const SystemClock clock;
  return &clock;
}

int64_t MonotonicMicros() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

namespace {
// "YYYY-MM-DDTHH:MM:SS" of `t`'s second; `*micros` gets the rest.
std::string WholeSeconds(TimeMicros t, int64_t* micros) {
  time_t secs = static_cast<time_t>(t / 1000000);
  *micros = t % 1000000;
  if (*micros < 0) {
    *micros += 1000000;
    secs -= 1;
  }
  tm parts{};
  gmtime_r(&secs, &parts);
  char buf[64];
  size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &parts);
  return std::string(buf, n);
}
}  // namespace

std::string FormatRfc3339Nanos(TimeMicros t) {
  int64_t micros = 0;
  std::string out = WholeSeconds(t, &micros);
  char frac[32];  // Room for any int64 (gcc cannot see that micros < 10^6).
  snprintf(frac, sizeof(frac), ".%06lld000Z", static_cast<long long>(micros));
  return out + frac;
}

std::string FormatRfc3339(TimeMicros t) {
  int64_t micros = 0;
  std::string out = WholeSeconds(t, &micros);
  if (micros != 0) {
    char frac[24];  // Room for any int64 (gcc cannot see that micros < 10^6).
    if (micros % 1000 == 0) {
      snprintf(frac, sizeof(frac), ".%03lld", static_cast<long long>(micros / 1000));
    } else {
      snprintf(frac, sizeof(frac), ".%06lld", static_cast<long long>(micros));
    }
    out += frac;
  }
  out += 'Z';
  return out;
}

namespace {
bool ReadDigits(std::string_view s, size_t& i, size_t n, int& out) {
  if (i + n > s.size()) return false;
  int v = 0;
  for (size_t k = 0; k < n; ++k) {
    char c = s[i + k];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  i += n;
  out = v;
  return true;
}
bool Expect(std::string_view s, size_t& i, char c) {
  if (i < s.size() && (s[i] == c || (c == 'T' && (s[i] == 't' || s[i] == ' ')))) {
    ++i;
    return true;
  }
  return false;
}
}  // namespace

Result<TimeMicros> ParseRfc3339(std::string_view s) {
  auto bad = [&] {
    return InvalidArgument("invalid RFC 3339 timestamp \"" + std::string(s) + "\"");
  };
  size_t i = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!ReadDigits(s, i, 4, year) || !Expect(s, i, '-') || !ReadDigits(s, i, 2, month) ||
      !Expect(s, i, '-') || !ReadDigits(s, i, 2, day) || !Expect(s, i, 'T') ||
      !ReadDigits(s, i, 2, hour) || !Expect(s, i, ':') || !ReadDigits(s, i, 2, minute) ||
      !Expect(s, i, ':') || !ReadDigits(s, i, 2, second)) {
    return bad();
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return bad();
  }
  int64_t micros = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    int digits = 0;
    int64_t frac = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (digits < 6) frac = frac * 10 + (s[i] - '0');
      ++digits;
      ++i;
    }
    if (digits == 0 || digits > 9) return bad();
    for (int k = digits; k < 6; ++k) frac *= 10;
    micros = frac;
  }
  int64_t offset_secs = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int sign = s[i] == '+' ? 1 : -1;
    ++i;
    int oh, om;
    if (!ReadDigits(s, i, 2, oh) || !Expect(s, i, ':') || !ReadDigits(s, i, 2, om)) return bad();
    offset_secs = sign * (oh * 3600 + om * 60);
  } else {
    return bad();
  }
  if (i != s.size()) return bad();
  tm parts{};
  parts.tm_year = year - 1900;
  parts.tm_mon = month - 1;
  parts.tm_mday = day;
  parts.tm_hour = hour;
  parts.tm_min = minute;
  parts.tm_sec = second;
  time_t secs = timegm(&parts);
  return (static_cast<int64_t>(secs) - offset_secs) * 1000000 + micros;
}

Result<DurationMicros> ParseDuration(std::string_view s) {
  auto bad = [&](const std::string& rule) {
    return InvalidArgument("invalid duration \"" + std::string(s.substr(0, 40)) + "\": " + rule);
  };
  const char* kShape = "expected seconds with an 's' suffix, e.g. \"3600s\" or \"1.5s\"";
  if (s.size() < 2 || s.back() != 's') return bad(kShape);
  std::string_view num = s.substr(0, s.size() - 1);
  const bool neg = num[0] == '-';
  size_t i = neg ? 1 : 0;
  // proto3's range: +-315,576,000,000 s (10,000 years), nanosecond precision.
  constexpr int64_t kMaxSeconds = 315576000000LL;
  int64_t secs = 0;
  size_t int_digits = 0;
  for (; i < num.size() && std::isdigit(static_cast<unsigned char>(num[i])); ++i, ++int_digits) {
    secs = secs * 10 + (num[i] - '0');
    if (secs > kMaxSeconds) return bad("out of range: a duration is at most 315576000000s");
  }
  int64_t nanos = 0;
  if (i < num.size() && num[i] == '.') {
    ++i;
    int digits = 0;
    for (; i < num.size() && std::isdigit(static_cast<unsigned char>(num[i])); ++i, ++digits) {
      if (digits < 9) nanos = nanos * 10 + (num[i] - '0');
    }
    if (digits == 0 || digits > 9) return bad("at most 9 fractional digits (nanoseconds)");
    for (int k = digits; k < 9; ++k) nanos *= 10;
  }
  if (int_digits == 0 || i != num.size()) return bad(kShape);
  if (secs == kMaxSeconds && nanos > 0) {
    return bad("out of range: a duration is at most 315576000000s");
  }
  // Microseconds here; a sub-microsecond rest rounds away from zero, so a duration
  // that is not zero never reads as zero (nor "-0.000000001s" as a valid 0).
  const int64_t total = secs * 1000000 + (nanos + 999) / 1000;
  return neg ? -total : total;
}

std::string FormatDuration(DurationMicros d) {
  int64_t secs = d / 1000000;
  int64_t micros = d % 1000000;
  std::string out = std::to_string(secs);
  if (micros != 0) {
    char frac[16];
    snprintf(frac, sizeof(frac), ".%06lld", static_cast<long long>(micros < 0 ? -micros : micros));
    std::string f(frac);
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "s";
}

}  // namespace ty
