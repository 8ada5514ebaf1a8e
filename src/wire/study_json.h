// Search spaces and parameter values in the APIs' JSON: the ml v1 / tuner-protocol
// ParameterSpec (`parameterName`, `type`, `minValue`, ...) and the Vertex StudySpec
// ParameterSpec (`parameterId`, `doubleValueSpec`, ..., `conditionalParameterSpecs`).
// Errors are FieldErrors whose path starts with the `path` given, so the API can
// name the exact field. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/study_spec.h"

namespace ty::wire {

// The domain types the wire forms stand for.
using model::ParamSpec;
using model::ParamValue;
using model::StudySpec;

// ml v1 `HyperparameterSpec.params` (also the tuner protocol's `study.params`).
Result<std::vector<ParamSpec>> ParseMlParams(const nlohmann::json& params, const std::string& path);
// Vertex `StudySpec.parameters`.
Result<std::vector<ParamSpec>> ParseVertexParams(const nlohmann::json& params,
                                                 const std::string& path);

// A value as JSON: a number (an integer for INTEGER) or the category string.
nlohmann::json ValueToJson(const ParamSpec& spec, const ParamValue& value);
// Reads a value of `spec` from JSON (numbers may also come as strings).
Result<ParamValue> ValueFromJson(const ParamSpec& spec, const nlohmann::json& v);
// ml v1 `trainingInput.hyperparameters` (docs/contracts/ml-v1.md §5) at `path`; returns its
// canonical form. Rules: `goal` MAXIMIZE | MINIMIZE (GOAL_TYPE_UNSPECIFIED or absent:
// MAXIMIZE); `params` required; maxTrials, maxParallelTrials >= 1 (default 1);
// 0 <= maxFailedTrials <= maxTrials; `enableTrialEarlyStopping` selects the
// decay-curve rule; GRID_SEARCH only with INTEGER, CATEGORICAL and DISCRETE params.
Result<nlohmann::json> ParseMlHyperparameters(const nlohmann::json& value, const std::string& path,
                                              StudySpec* out);

// Vertex `StudySpec` of a HyperparameterTuningJob (docs/contracts/vertex-v1.md §7) at `path`;
// returns its canonical form. Rules: exactly one metric (`metricId` without
// whitespace; goal MAXIMIZE | MINIMIZE, unspecified = MAXIMIZE); `parameters`
// required (conditional children allowed); GRID_SEARCH only over discrete
// parameters; `measurementSelectionType` LAST (default) or BEST; at most one of
// decayCurveStoppingSpec / medianAutomatedStoppingSpec; convexAutomatedStoppingSpec is
// not supported and is a 400 naming it and the two rules that are. Budget fields are
// the job's, not the study's.
Result<nlohmann::json> ParseVertexStudySpec(const nlohmann::json& value, const std::string& path,
                                            StudySpec* out);

// A rendered Vertex StudySpec with its enums as numbers, for `$alt=json;enum-encoding=int`
// (goal, scaleType down the conditional tree, algorithm, observationNoise,
// measurementSelectionType). Names it does not know are left as they are.
void VertexStudySpecEnumsToInt(nlohmann::json& study_spec);

}  // namespace ty::wire
