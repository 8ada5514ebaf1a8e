// Request text quoted in messages, and split into its parts. Header-only; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ty {

// A request value as an error message may quote it: at most `max` bytes, each byte
// outside printable ASCII as '?' (a name may hold NUL, escapes or bytes of no encoding).
inline std::string ShownInMessage(std::string_view text, size_t max = 80) {
  std::string out(text.substr(0, max));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return out;
}

// "a,b,,c" split on ',' -> {"a", "b", "", "c"}; "" -> {""}. Views into `text`, which
// must outlive them: never split a temporary string (`SplitOn(Param(...), ',')`).
inline std::vector<std::string_view> SplitOn(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace ty
