// Vertex AI TensorBoard's resources as JSON (aiplatform v1 Tensorboard,
// TensorboardExperiment, TensorboardRun, TensorboardTimeSeries, TimeSeriesData) and
// the request bodies that describe them. Internal to api/ (tensorboard_endpoints.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "tensorboard/resources.h"
#include "wire/dialect.h"

namespace ty::api::internal {

nlohmann::json TensorboardJson(const tensorboard::Tensorboard& t);
nlohmann::json ExperimentJson(const tensorboard::Experiment& e);
nlohmann::json RunJson(const tensorboard::Run& r);
nlohmann::json TimeSeriesJson(const tensorboard::TimeSeries& s, const wire::RenderOptions& render);
// TimeSeriesData: the series' id, its value type, and its points as scalars.
nlohmann::json TimeSeriesDataJson(const tensorboard::TimeSeries& s,
                                  const std::vector<tensorboard::Point>& points,
                                  const wire::RenderOptions& render);

// displayName, description and labels of a body (`kind` names the fields in errors);
// InvalidArgument for a field of the wrong type.
Status ReadDescribed(const nlohmann::json& body, const std::string& kind,
                     tensorboard::Described* out);

// A done long-running operation under `parent`, answering `response` (of `type`, an
// aiplatform v1 message name) with `metadata_type`'s generic metadata.
nlohmann::json DoneOperation(const std::string& parent, const std::string& metadata_type,
                             const std::string& type, nlohmann::json response, TimeMicros now);

// The points of a runs:write body's one TimeSeriesData (`path` names it in errors).
Result<std::vector<tensorboard::Point>> PointsOf(const nlohmann::json& data,
                                                 const std::string& path);

// A readTensorboardTimeSeriesData `filter`: "step >= N", "step < N" and the like,
// joined by AND ("" = every step). InvalidArgument for anything else.
Status ParseStepFilter(const std::string& filter, int64_t* min_step, int64_t* max_step);

}  // namespace ty::api::internal
