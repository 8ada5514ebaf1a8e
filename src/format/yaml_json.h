// YAML <-> JSON for job specs and CLI output.
//
// Users write job configs in YAML (gcloud's `--config`) or JSON; the API and the model
// speak JSON only, so YAML is converted here, at the edge, and model/ never sees
// yaml-cpp. Conversion follows the YAML 1.2 core schema: plain (unquoted) scalars that
// read as null, booleans (`true`/`false` in any of their three spellings), integers
// (decimal, 0x, 0o) or floats become JSON null/bool/number; quoted scalars, block
// scalars and everything else stay strings. YAML 1.1 words such as `yes`/`on` stay
// strings (a label value `no` must not become false), and `.inf`/`.nan` stay strings
// because JSON has no such numbers. Integers beyond int64 become unsigned or double.
//
// Pure functions except ReadYamlOrJsonFile (reads one file). Thread-safe.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace ty::format {

// JSON if `text` parses as JSON, else YAML (first document). Empty text is `null`.
// InvalidArgument (with line and column) if it is neither.
Result<nlohmann::json> ParseYamlOrJson(std::string_view text);

// Block-style YAML, as gcloud prints resources: keys in the value's iteration order,
// sequences under a key not indented, strings quoted (JSON-style double quotes) only
// when a plain scalar would read back as something else. Ends with a newline.
std::string ToYaml(const nlohmann::json& value);

// Reads and parses a file with ParseYamlOrJson. NotFound if it cannot be read;
// InvalidArgument (prefixed with the path) if it does not parse.
Result<nlohmann::json> ReadYamlOrJsonFile(const std::string& path);

}  // namespace ty::format
