// Internal to executor/container: reading the container engine's JSON answers, which
// are not trusted to be well-formed (whatever answers on the socket could send anything):
// no nlohmann exception escapes, and a missing or mistyped field reads as empty.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace ty::executor::internal {

// The Docker Engine API version every compat call names (podman 4.3 serves it).
inline constexpr char kApiPrefix[] = "/v1.41";

// Parses engine JSON without letting nlohmann's exceptions escape.
inline Result<nlohmann::json> ParseJson(const std::string& text, const std::string& what) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return Internal(what + ": engine sent invalid JSON: " + text.substr(0, 200));
  return j;
}

// A field of an engine answer, or `fallback` when the answer is not an object or the
// field is absent or of another type: nlohmann's value() throws on those, and an
// engine (or whatever answers on its socket) is not trusted to be well-formed.
inline std::string StringField(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}
inline bool BoolField(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return false;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}
inline int IntField(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return 0;
  return static_cast<int>(std::clamp<int64_t>(it->get<int64_t>(), INT32_MIN, INT32_MAX));
}

}  // namespace ty::executor::internal
