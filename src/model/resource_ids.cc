#include "model/resource_ids.h"

#include <string>

#include "common/text.h"

namespace ty::model {
namespace {

bool IsLowerOrDigit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool IsProjectNumber(std::string_view s) {
  if (s.empty() || s.size() > 20) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsPlainProjectId(std::string_view s) {
  if (s.empty() || s.size() > 30 || !(s.front() >= 'a' && s.front() <= 'z') || s.back() == '-') {
    return false;
  }
  for (char c : s) {
    if (!IsLowerOrDigit(c) && c != '-') return false;
  }
  return true;
}

bool IsProjectDomain(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '.' || s.back() == '.') return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsLowerOrDigit(s[i]) && s[i] != '-' && s[i] != '.') return false;
    if (s[i] == '.' && s[i + 1] == '.') return false;
  }
  return true;
}

}  // namespace

Status CheckProjectId(std::string_view project) {
  if (IsProjectNumber(project) || IsPlainProjectId(project)) return Status::Ok();
  const size_t colon = project.find(':');
  if (colon != std::string_view::npos && IsProjectDomain(project.substr(0, colon)) &&
      IsPlainProjectId(project.substr(colon + 1))) {
    return Status::Ok();
  }
  return InvalidArgument("Invalid project id '" + ShownInMessage(project) +
                         "': a lower-case letter, then up to 29 lower-case letters, digits or "
                         "hyphens (not ending with one), optionally after 'DOMAIN:'; or a "
                         "project number");
}

Status CheckLocationId(std::string_view location) {
  bool ok = !location.empty() && location.size() <= 63;
  for (char c : location) ok = ok && (IsLowerOrDigit(c) || c == '-');
  if (ok) return Status::Ok();
  return InvalidArgument("Invalid location '" + ShownInMessage(location) +
                         "': 1 to 63 lower-case letters, digits or hyphens");
}

}  // namespace ty::model
