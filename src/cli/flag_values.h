// Parsing of gcloud's list and dict flag values (`A,B`, `K=V,K2=V2`), shared by the
// command groups. Pure functions; thread-safe.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace ty::cli {

// "a,b,,c" -> {"a","b","","c"}; "" -> {} (gcloud's ArgList drops an empty value).
std::vector<std::string> SplitList(const std::string& value);

// "k=v,k2=v2" -> ordered pairs. A duplicate key keeps the last value. InvalidArgument
// `Bad syntax for dict arg: [ITEM].` for an item without '='.
Result<std::vector<std::pair<std::string, std::string>>> ParseDict(const std::string& value);

// --labels: ParseDict into a JSON object of strings, errors worded for `flag`.
Result<nlohmann::json> ParseLabels(const std::string& flag, const std::string& value);

// gcloud's calliope InvalidArgumentException text: "Invalid value for [FLAG]: MESSAGE".
Status InvalidFlag(const std::string& flag, const std::string& message);

// Decimal integer, whole string. nullopt otherwise.
std::optional<int64_t> ParseInt(const std::string& text);

}  // namespace ty::cli
