// Trial parameter values as JSON objects ({"name": value, ...}) over a search space:
// the tuner protocol's `params` and what trials report back. Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "tuning/search_space.h"
#include "wire/study_json.h"

namespace ty::tuning {

// A whole assignment {"name": value, ...} over the parameters of `space`; names of
// inactive or unknown parameters are refused.
Result<Assignment> AssignmentFromJson(const SearchSpace& space, const nlohmann::json& params);
nlohmann::json AssignmentToJson(const SearchSpace& space, const Assignment& a);

}  // namespace ty::tuning
