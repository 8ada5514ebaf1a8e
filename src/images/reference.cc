#include "images/reference.h"

#include <cctype>

#include "common/text.h"
#include "images/runtimes.h"

namespace ty::images {
namespace {

constexpr size_t kMaxNameChars = 255;
constexpr size_t kMaxTagChars = 128;
constexpr size_t kMinDigestHex = 32;
constexpr size_t kMaxReferenceChars = 4096;  // Digests can be long; nothing real is this.

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsWord(char c) { return IsAlnum(c) || c == '_'; }

// [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
bool IsPathComponent(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (!IsLowerAlnum(s[i])) return false;
    while (i < s.size() && IsLowerAlnum(s[i])) ++i;
    if (i == s.size()) return true;
    const size_t sep = i;
    if (s[i] == '.') {
      ++i;
    } else if (s[i] == '_') {
      i += (i + 1 < s.size() && s[i + 1] == '_') ? 2 : 1;
    } else if (s[i] == '-') {
      while (i < s.size() && s[i] == '-') ++i;
    } else {
      return false;
    }
    if (i == sep || i == s.size()) return false;  // A separator ends nothing.
  }
  return !s.empty();
}

// host [":" port]; host labels of [A-Za-z0-9-], not starting or ending with '-'.
bool IsRegistryHost(std::string_view s) {
  const size_t colon = s.find(':');
  std::string_view host = s.substr(0, colon);
  if (colon != std::string_view::npos) {
    std::string_view port = s.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
  }
  if (host.empty()) return false;
  size_t from = 0;
  while (from <= host.size()) {
    size_t dot = host.find('.', from);
    std::string_view label = host.substr(from, dot == std::string_view::npos ? dot : dot - from);
    if (label.empty() || label.front() == '-' || label.back() == '-') return false;
    for (char c : label) {
      if (!IsAlnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) break;
    from = dot + 1;
  }
  return true;
}

bool IsTag(std::string_view s) {
  if (s.empty() || s.size() > kMaxTagChars || !IsWord(s[0])) return false;
  for (char c : s) {
    if (!IsWord(c) && c != '.' && c != '-') return false;
  }
  return true;
}

bool IsDigest(std::string_view s) {
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view algorithm = s.substr(0, colon), hex = s.substr(colon + 1);
  bool component_start = true;
  for (char c : algorithm) {
    if (c == '+' || c == '.' || c == '_' || c == '-') {
      if (component_start) return false;
      component_start = true;
    } else if (component_start ? std::isalpha(static_cast<unsigned char>(c)) : IsAlnum(c)) {
      component_start = false;
    } else {
      return false;
    }
  }
  if (component_start || hex.size() < kMinDigestHex) return false;
  for (char c : hex) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Status Bad(std::string_view text, const std::string& rule) {
  return InvalidArgument("'" + ShownInMessage(text, 100) +
                         "' is not a container image reference: " + rule);
}

}  // namespace

Result<ImageReference> ParseImageReference(std::string_view text) {
  if (text.empty()) return Bad(text, "it is empty");
  if (text.size() > kMaxReferenceChars) return Bad(text, "it is too long");
  ImageReference out;
  std::string_view rest = text;
  if (size_t at = rest.find('@'); at != std::string_view::npos) {
    if (!IsDigest(rest.substr(at + 1))) {
      return Bad(text, "the digest after '@' must be ALGORITHM:HEX with 32 or more hex digits");
    }
    out.digest = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
  }
  // A tag's ':' comes after the last '/' (a domain's port comes before it).
  const size_t last_slash = rest.rfind('/');
  const size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos &&
      (last_slash == std::string_view::npos || colon > last_slash)) {
    if (!IsTag(rest.substr(colon + 1))) {
      return Bad(text, "a tag is 1-128 of [A-Za-z0-9_.-], not starting with '.' or '-'");
    }
    out.tag = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
  }
  if (rest.size() > kMaxNameChars) return Bad(text, "the name is longer than 255 characters");
  const size_t first_slash = rest.find('/');
  if (first_slash != std::string_view::npos) {
    std::string_view first = rest.substr(0, first_slash);
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost") {
      if (!IsRegistryHost(first))
        return Bad(text, "'" + std::string(first) + "' is not a registry host");
      out.domain = std::string(first);
      rest = rest.substr(first_slash + 1);
    }
  }
  out.path = std::string(rest);
  size_t from = 0;
  for (;;) {
    const size_t slash = rest.find('/', from);
    std::string_view part =
        rest.substr(from, slash == std::string_view::npos ? slash : slash - from);
    if (!IsPathComponent(part)) {
      return Bad(text,
                 "each part of the name is lower-case letters and digits, joined by '.', '_', "
                 "'__' or dashes");
    }
    if (slash == std::string_view::npos) break;
    from = slash + 1;
  }
  return out;
}

}  // namespace ty::images
