// Search-space pieces the tuning and model tests build: parameters of every type, and
// the tuner protocol's mixed-type example space (docs/contracts/tuner-protocol.md §5).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/study_spec.h"

namespace ty::testing {

using model::ParamSpec;
using model::ParamType;
using model::Scale;

inline ParamSpec Double(const std::string& name, double lo, double hi,
                        Scale scale = Scale::kLinear) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::kDouble;
  p.min = lo;
  p.max = hi;
  p.scale = scale;
  return p;
}

inline ParamSpec Integer(const std::string& name, double lo, double hi,
                         Scale scale = Scale::kLinear) {
  ParamSpec p = Double(name, lo, hi, scale);
  p.type = ParamType::kInteger;
  return p;
}

inline ParamSpec Discrete(const std::string& name, std::vector<double> values,
                          Scale scale = Scale::kLinear) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::kDiscrete;
  p.discrete = std::move(values);
  p.scale = scale;
  return p;
}

inline ParamSpec Categorical(const std::string& name, std::vector<std::string> values) {
  ParamSpec p;
  p.name = name;
  p.type = ParamType::kCategorical;
  p.categories = std::move(values);
  return p;
}

// All four types and all three scales (the protocol's example).
inline const nlohmann::json& MixedParamsJson() {
  static const nlohmann::json params = nlohmann::json::parse(R"([
  {"parameterName":"learning_rate","type":"DOUBLE","minValue":1e-05,"maxValue":1.0,"scaleType":"UNIT_LOG_SCALE"},
  {"parameterName":"optimizer","type":"CATEGORICAL","categoricalValues":["sgd","momentum","rmsprop","adam"]},
  {"parameterName":"num_layers","type":"INTEGER","minValue":1,"maxValue":10,"scaleType":"UNIT_LINEAR_SCALE"},
  {"parameterName":"batch_size","type":"DISCRETE","discreteValues":[16,32,64,128,256,512],"scaleType":"UNIT_LOG_SCALE"},
  {"parameterName":"dropout","type":"DOUBLE","minValue":0.0,"maxValue":0.7},
  {"parameterName":"beta","type":"DOUBLE","minValue":0.001,"maxValue":0.999,"scaleType":"UNIT_REVERSE_LOG_SCALE"}])");
  return params;
}

}  // namespace ty::testing
