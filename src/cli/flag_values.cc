// Flag value parsing; see flag_values.h.
#include "cli/flag_values.h"

#include <charconv>

namespace ty::cli {

std::vector<std::string> SplitList(const std::string& value) {
  std::vector<std::string> out;
  if (value.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = value.find(',', start);
    out.push_back(value.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> ParseDict(const std::string& value) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& item : SplitList(value)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("Bad syntax for dict arg: [" + item + "].");
    }
    std::string key = item.substr(0, eq);
    std::string val = item.substr(eq + 1);
    bool replaced = false;
    for (auto& kv : out) {
      if (kv.first == key) {
        kv.second = val;
        replaced = true;
      }
    }
    if (!replaced) out.emplace_back(std::move(key), std::move(val));
  }
  return out;
}

Result<nlohmann::json> ParseLabels(const std::string& flag, const std::string& value) {
  auto pairs = ParseDict(value);
  if (!pairs.ok())
    return Status(InvalidArgument("argument " + flag + ": " + pairs.status().message()));
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [k, v] : *pairs) labels[k] = v;
  return labels;
}

Status InvalidFlag(const std::string& flag, const std::string& message) {
  return InvalidArgument("Invalid value for [" + flag + "]: " + message);
}

std::optional<int64_t> ParseInt(const std::string& text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

}  // namespace ty::cli
