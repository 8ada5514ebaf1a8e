#include "api/query.h"

#include "common/text.h"

namespace ty::api {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string PercentDecode(std::string_view text) {
  if (text.find('%') == std::string_view::npos) return std::string(text);  // Most segments.
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      int hi = HexValue(text[i + 1]);
      int lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += text[i];
  }
  return out;
}

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> segments;
  segments.reserve(8);  // A job's path has six; one allocation for nearly every request.
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) segments.push_back(PercentDecode(path.substr(start, end - start)));
    start = end + 1;
  }
  return segments;
}

std::map<std::string, std::string> ParseQuery(std::string_view query, bool plus_is_space) {
  auto decode = [&](std::string_view text) {
    if (!plus_is_space) return PercentDecode(text);
    std::string spaced(text);
    for (char& c : spaced) c = c == '+' ? ' ' : c;
    return PercentDecode(spaced);
  };
  std::map<std::string, std::string> params;
  size_t start = 0;
  while (start <= query.size()) {
    size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    std::string_view pair = query.substr(start, end - start);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      if (eq == std::string_view::npos) {
        params[decode(pair)] = "";
      } else {
        params[decode(pair.substr(0, eq))] = decode(pair.substr(eq + 1));
      }
    }
    start = end + 1;
  }
  return params;
}

std::vector<std::string> QueryValues(std::string_view query, std::string_view name) {
  std::vector<std::string> values;
  for (std::string_view pair : SplitOn(query, '&')) {
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos && PercentDecode(pair.substr(0, eq)) == name) {
      values.push_back(PercentDecode(pair.substr(eq + 1)));
    }
  }
  return values;
}

}  // namespace ty::api
