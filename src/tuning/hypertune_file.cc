#include "tuning/hypertune_file.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace ty::tuning {

namespace {

// A number written as a string ("0.81", "1e-3") or as a JSON number; false otherwise.
bool NumberOf(const nlohmann::json& v, double* out) {
  if (v.is_number()) {
    *out = v.get<double>();
    return std::isfinite(*out);
  }
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(d)) return false;
  *out = d;
  return true;
}

// True when the double converts to int64 without overflow: [-2^63, 2^63).
bool StepFits(double step) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  return step >= -kTwoTo63 && step < kTwoTo63;
}

}  // namespace

MetricsFile ParseMetricsFile(std::string_view text, std::string_view tag) {
  const std::string key = tag.empty() ? std::string(kDefaultMetricTag) : std::string(tag);
  MetricsFile out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    Measurement m;
    double step = 0;
    if (!j.is_object() || !j.contains(key) || !NumberOf(j[key], &m.value)) {
      ++out.skipped;
      continue;
    }
    if (j.contains("global_step") && NumberOf(j["global_step"], &step)) {
      // A step no int64 holds (a trainer's bug or a hostile file) cannot be ordered
      // against the others; the line is skipped rather than converted out of range.
      if (!StepFits(step)) {
        ++out.skipped;
        continue;
      }
      m.step = static_cast<int64_t>(step);
    }
    if (j.contains("timestamp")) NumberOf(j["timestamp"], &m.timestamp);
    out.measurements.push_back(m);
  }
  return out;
}

}  // namespace ty::tuning
