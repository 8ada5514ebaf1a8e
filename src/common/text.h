// Request text quoted in messages. Header-only; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

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

}  // namespace ty
