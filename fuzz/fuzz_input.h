// What every fuzz target does with its bytes: JSON targets parse them (without
// exceptions) and hand over only what parsed. Header-only; fuzz builds only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

namespace ty::fuzz {

inline std::string_view Text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Discarded (not JSON) when the bytes do not parse; the parser must not throw.
inline nlohmann::json Json(const uint8_t* data, size_t size) {
  return nlohmann::json::parse(Text(data, size), nullptr, /*allow_exceptions=*/false);
}

}  // namespace ty::fuzz
