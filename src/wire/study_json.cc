#include "wire/study_json.h"

#include <cmath>
#include <cstdlib>
#include <functional>

#include "wire/wire_json.h"

namespace ty::wire {

using namespace model;  // The domain the wire dialects read and write.

namespace {

using nlohmann::json;

// A JSON number, or a string holding one (proto3 JSON writes int64 as strings).
bool ReadNumber(const json& v, double* out) {
  if (v.is_number()) {
    *out = v.get<double>();
    return std::isfinite(*out);
  }
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(*out);
}

Result<double> NumberField(const json& obj, const char* key, const std::string& path) {
  double v = 0;
  if (!obj.contains(key)) return FieldError(path + "." + key, "is required");
  if (!ReadNumber(obj[key], &v)) return FieldError(path + "." + key, "must be a finite number");
  return v;
}

// An integer parameter's bound: an int64 read exactly (a JSON integer, or a decimal
// string as proto3 writes int64), never through a double, within +-2^53: the model
// carries a parameter's values as doubles, and past 2^53 an integer can no longer be
// told from its neighbour ("-9007199254740993" once passed a check made on a double).
Result<double> IntegerField(const json& obj, const char* key, const std::string& path) {
  constexpr int64_t kExact = int64_t{1} << 53;
  if (!obj.contains(key)) return FieldError(path + "." + key, "is required");
  int64_t v = 0;
  if (!internal::ReadInteger(obj[key], &v) || v < -kExact || v > kExact) {
    return FieldError(path + "." + key, "must be an integer between -2^53 and 2^53");
  }
  return static_cast<double>(v);
}

Result<std::vector<double>> NumberList(const json& list, const std::string& path) {
  if (!list.is_array()) return FieldError(path, "must be a list of numbers");
  std::vector<double> out;
  for (size_t i = 0; i < list.size(); ++i) {
    double v = 0;
    if (!ReadNumber(list[i], &v)) {
      return FieldError(path + "[" + std::to_string(i) + "]", "must be a finite number");
    }
    out.push_back(v);
  }
  return out;
}

Result<std::vector<std::string>> StringList(const json& list, const std::string& path) {
  if (!list.is_array()) return FieldError(path, "must be a list of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      return FieldError(path + "[" + std::to_string(i) + "]", "must be a string");
    }
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

// A member of a request object, or null when `obj` is no object or lacks it: nlohmann's
// value() and const operator[] throw (or assert) on those, and a request's shape is
// the client's choice (found by fuzz/ml_job_fuzzer.cc: `"parameterName": 1` was a 500).
const json& Member(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

// A string member; "" when absent; InvalidArgument naming it when of another type.
Result<std::string> StringMember(const json& obj, const char* key, const std::string& path) {
  const json& v = Member(obj, key);
  if (v.is_null()) return std::string();
  if (!v.is_string()) return FieldError(path + "." + key, "must be a string");
  return v.get<std::string>();
}

// ScaleType: the same numbers in both APIs; only the zero value's name differs
// (ml v1 NONE, Vertex SCALE_TYPE_UNSPECIFIED). Names or numbers (docs/contracts/client-wire.md §6).
constexpr internal::EnumValue kVertexScaleTypes[] = {{"SCALE_TYPE_UNSPECIFIED", 0},
                                                     {"UNIT_LINEAR_SCALE", 1},
                                                     {"UNIT_LOG_SCALE", 2},
                                                     {"UNIT_REVERSE_LOG_SCALE", 3}};
constexpr internal::EnumValue kMlScaleTypes[] = {
    {"NONE", 0}, {"UNIT_LINEAR_SCALE", 1}, {"UNIT_LOG_SCALE", 2}, {"UNIT_REVERSE_LOG_SCALE", 3}};

internal::EnumTable ScaleTypes(bool vertex) {
  return vertex ? internal::EnumTable(kVertexScaleTypes) : internal::EnumTable(kMlScaleTypes);
}
// ml v1 ParameterSpec.ParameterType.
constexpr internal::EnumValue kMlParamTypes[] = {{"PARAMETER_TYPE_UNSPECIFIED", 0},
                                                 {"DOUBLE", 1},
                                                 {"INTEGER", 2},
                                                 {"CATEGORICAL", 3},
                                                 {"DISCRETE", 4}};

// An enum member given by name or number, as its name; "" when absent; InvalidArgument
// naming it otherwise.
Result<std::string> EnumMember(const json& obj, const char* key, internal::EnumTable table,
                               const std::string& path) {
  const json& v = Member(obj, key);
  if (v.is_null()) return std::string();
  int64_t number = -1;
  if (v.is_string() && internal::EnumNumber(table, v.get_ref<const std::string&>()) >= 0) {
    return v.get<std::string>();
  }
  if (v.is_number_integer() && internal::ReadInteger(v, &number) && number >= 0 && number <= 1000 &&
      !internal::EnumName(table, static_cast<int>(number)).empty()) {
    return std::string(internal::EnumName(table, static_cast<int>(number)));
  }
  return FieldError(path + "." + key, "invalid value " + v.dump());
}

Result<Scale> ParseScale(const json& obj, const std::string& path, bool vertex) {
  ASSIGN_OR_RETURN(std::string s, EnumMember(obj, "scaleType", ScaleTypes(vertex), path));
  if (s == "UNIT_LOG_SCALE") return Scale::kLog;
  if (s == "UNIT_REVERSE_LOG_SCALE") return Scale::kReverseLog;
  return Scale::kLinear;  // Unset, the zero value or UNIT_LINEAR_SCALE.
}

// Calls `fn` on every parameter object of a list, down Vertex conditional children, in
// place (a list of another shape is left alone: parsing reported it).
void ForEachParam(json& params, const std::function<void(json&)>& fn) {
  if (!params.is_array()) return;
  for (json& p : params) {
    if (!p.is_object()) continue;
    fn(p);
    auto children = p.find("conditionalParameterSpecs");
    if (children == p.end() || !children->is_array()) continue;
    for (json& c : *children) {
      if (!c.is_object()) continue;
      auto child = c.find("parameterSpec");
      if (child == c.end()) continue;
      json one = json::array({std::move(*child)});
      ForEachParam(one, fn);
      *child = std::move(one[0]);
    }
  }
}

// The parameter list as stored: enum numbers replaced by their names, so a job reads
// back the same to every client (`$alt=json;enum-encoding=int` turns them back into
// numbers on the way out). Runs after parsing succeeded, so every enum here is valid.
json NamedParams(const json& params, bool vertex) {
  json out = params;
  ForEachParam(out, [vertex](json& p) {
    for (auto [key, table] : {std::pair{"scaleType", ScaleTypes(vertex)},
                              std::pair{"type", internal::EnumTable(kMlParamTypes)}}) {
      auto it = p.find(key);
      if (it != p.end() && it->is_number_integer()) {
        *it = std::string(internal::EnumName(table, it->get<int>()));
      }
    }
  });
  return out;
}

// The search-space rules on one parameter, so a broken one is reported at its path.
Status CheckOne(const ParamSpec& p, const std::string& path) {
  Status s = ValidateParam(p);
  return s.ok() ? s : FieldError(path, s.message());
}

Result<ParamSpec> ParseMlParam(const json& p, const std::string& path) {
  if (!p.is_object()) return FieldError(path, "must be an object");
  ParamSpec spec;
  ASSIGN_OR_RETURN(spec.name, StringMember(p, "parameterName", path));
  if (spec.name.empty()) return FieldError(path + ".parameterName", "is required");
  ASSIGN_OR_RETURN(const std::string type, EnumMember(p, "type", kMlParamTypes, path));
  if (type == "DOUBLE" || type == "INTEGER") {
    spec.type = type == "DOUBLE" ? ParamType::kDouble : ParamType::kInteger;
    const auto bound = spec.type == ParamType::kDouble ? NumberField : IntegerField;
    ASSIGN_OR_RETURN(spec.min, bound(p, "minValue", path));
    ASSIGN_OR_RETURN(spec.max, bound(p, "maxValue", path));
  } else if (type == "DISCRETE") {
    spec.type = ParamType::kDiscrete;
    if (!p.contains("discreteValues")) return FieldError(path + ".discreteValues", "is required");
    ASSIGN_OR_RETURN(spec.discrete,
                     NumberList(Member(p, "discreteValues"), path + ".discreteValues"));
  } else if (type == "CATEGORICAL") {
    spec.type = ParamType::kCategorical;
    if (!p.contains("categoricalValues")) {
      return FieldError(path + ".categoricalValues", "is required");
    }
    ASSIGN_OR_RETURN(spec.categories,
                     StringList(Member(p, "categoricalValues"), path + ".categoricalValues"));
  } else {
    return FieldError(path + ".type", "must be DOUBLE, INTEGER, CATEGORICAL or DISCRETE");
  }
  if (spec.type != ParamType::kCategorical) {
    ASSIGN_OR_RETURN(spec.scale, ParseScale(p, path, /*vertex=*/false));
  }
  RETURN_IF_ERROR(CheckOne(spec, path));
  return spec;
}

Result<ParamSpec> ParseVertexParam(const json& p, const std::string& path, int depth);

Result<ConditionalChild> ParseVertexConditional(const json& c, const std::string& path, int depth) {
  if (!c.is_object()) return FieldError(path, "must be an object");
  ConditionalChild child;
  if (!c.contains("parameterSpec")) return FieldError(path + ".parameterSpec", "is required");
  ASSIGN_OR_RETURN(child.spec,
                   ParseVertexParam(Member(c, "parameterSpec"), path + ".parameterSpec", depth));
  if (c.contains("parentCategoricalValues")) {
    ASSIGN_OR_RETURN(child.parent_categories,
                     StringList(Member(Member(c, "parentCategoricalValues"), "values"),
                                path + ".parentCategoricalValues.values"));
  } else if (c.contains("parentIntValues") || c.contains("parentDiscreteValues")) {
    const char* key = c.contains("parentIntValues") ? "parentIntValues" : "parentDiscreteValues";
    ASSIGN_OR_RETURN(child.parent_numbers,
                     NumberList(Member(Member(c, key), "values"), path + "." + key + ".values"));
  } else {
    return FieldError(path,
                      "needs parentDiscreteValues, parentIntValues or "
                      "parentCategoricalValues");
  }
  return child;
}

// `depth`: how many conditions this parameter sits under; bounded before recursing,
// so a request nested a million deep costs neither stack nor memory.
Result<ParamSpec> ParseVertexParam(const json& p, const std::string& path, int depth) {
  if (!p.is_object()) return FieldError(path, "must be an object");
  if (depth > kMaxConditionalDepth) {
    return FieldError(path, "conditional parameters nest at most " +
                                std::to_string(kMaxConditionalDepth) + " deep");
  }
  ParamSpec spec;
  ASSIGN_OR_RETURN(spec.name, StringMember(p, "parameterId", path));
  if (spec.name.empty()) return FieldError(path + ".parameterId", "is required");
  if (p.contains("doubleValueSpec") || p.contains("integerValueSpec")) {
    bool is_double = p.contains("doubleValueSpec");
    const char* key = is_double ? "doubleValueSpec" : "integerValueSpec";
    spec.type = is_double ? ParamType::kDouble : ParamType::kInteger;
    const auto bound = is_double ? NumberField : IntegerField;
    ASSIGN_OR_RETURN(spec.min, bound(Member(p, key), "minValue", path + "." + key));
    ASSIGN_OR_RETURN(spec.max, bound(Member(p, key), "maxValue", path + "." + key));
  } else if (p.contains("discreteValueSpec")) {
    spec.type = ParamType::kDiscrete;
    ASSIGN_OR_RETURN(spec.discrete, NumberList(Member(Member(p, "discreteValueSpec"), "values"),
                                               path + ".discreteValueSpec.values"));
  } else if (p.contains("categoricalValueSpec")) {
    spec.type = ParamType::kCategorical;
    ASSIGN_OR_RETURN(spec.categories,
                     StringList(Member(Member(p, "categoricalValueSpec"), "values"),
                                path + ".categoricalValueSpec.values"));
  } else {
    return FieldError(path,
                      "needs one of doubleValueSpec, integerValueSpec, "
                      "categoricalValueSpec or discreteValueSpec");
  }
  if (spec.type != ParamType::kCategorical) {
    ASSIGN_OR_RETURN(spec.scale, ParseScale(p, path, /*vertex=*/true));
  }
  RETURN_IF_ERROR(CheckOne(spec, path));
  auto children = p.find("conditionalParameterSpecs");  // Not copied: it may be large.
  if (children == p.end()) return spec;
  if (!children->is_array())
    return FieldError(path + ".conditionalParameterSpecs", "must be a list");
  if (children->size() > kMaxStudyParams) {
    return FieldError(path + ".conditionalParameterSpecs",
                      "a study has at most " + std::to_string(kMaxStudyParams) + " parameters");
  }
  for (size_t i = 0; i < children->size(); ++i) {
    ASSIGN_OR_RETURN(
        ConditionalChild child,
        ParseVertexConditional((*children)[i],
                               path + ".conditionalParameterSpecs[" + std::to_string(i) + "]",
                               depth + 1));
    spec.children.push_back(std::move(child));
  }
  return spec;
}

template <typename ParseOne>
Result<std::vector<ParamSpec>> ParseList(const json& params, const std::string& path,
                                         ParseOne parse) {
  if (!params.is_array() || params.empty()) {
    return FieldError(path, "must list at least one parameter");
  }
  if (params.size() > kMaxStudyParams) {  // Before parsing any of them.
    return FieldError(path, "a study has at most " + std::to_string(kMaxStudyParams) +
                                " parameters (this request lists " + std::to_string(params.size()) +
                                ")");
  }
  std::vector<ParamSpec> out;
  for (size_t i = 0; i < params.size(); ++i) {
    ASSIGN_OR_RETURN(ParamSpec p, parse(params[i], path + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(p));
  }
  // The rules across parameters (unique names, conditions) over the whole tree.
  Status s = ValidateParams(out);
  if (!s.ok()) return FieldError(path, s.message());
  return out;
}

}  // namespace

Result<std::vector<ParamSpec>> ParseMlParams(const json& params, const std::string& path) {
  return ParseList(params, path, ParseMlParam);
}

Result<std::vector<ParamSpec>> ParseVertexParams(const json& params, const std::string& path) {
  return ParseList(params, path,
                   [](const json& p, const std::string& at) { return ParseVertexParam(p, at, 0); });
}

json ValueToJson(const ParamSpec& spec, const ParamValue& value) {
  switch (spec.type) {
    case ParamType::kCategorical:
      return value.category;
    case ParamType::kInteger:
      return static_cast<int64_t>(std::llround(value.number));
    default:
      return value.number;
  }
}

Result<ParamValue> ValueFromJson(const ParamSpec& spec, const json& v) {
  ParamValue out;
  if (spec.type == ParamType::kCategorical) {
    if (!v.is_string()) return InvalidArgument("parameter '" + spec.name + "' must be a string");
    out.category = v.get<std::string>();
    return out;
  }
  if (!ReadNumber(v, &out.number)) {
    return InvalidArgument("parameter '" + spec.name + "' must be a number");
  }
  return out;
}

namespace {

constexpr internal::EnumValue kGoals[] = {
    {"GOAL_TYPE_UNSPECIFIED", 0}, {"MAXIMIZE", 1}, {"MINIMIZE", 2}};
// The two APIs number their algorithms differently (ml v1 HyperparameterSpec.Algorithm,
// Vertex StudySpec.Algorithm, where 1 is unused).
constexpr internal::EnumValue kMlAlgorithms[] = {
    {"ALGORITHM_UNSPECIFIED", 0}, {"GRID_SEARCH", 1}, {"RANDOM_SEARCH", 2}};
constexpr internal::EnumValue kVertexAlgorithms[] = {
    {"ALGORITHM_UNSPECIFIED", 0}, {"GRID_SEARCH", 2}, {"RANDOM_SEARCH", 3}};
constexpr internal::EnumValue kNoise[] = {
    {"OBSERVATION_NOISE_UNSPECIFIED", 0}, {"LOW", 1}, {"HIGH", 2}};
constexpr internal::EnumValue kSelection[] = {{"MEASUREMENT_SELECTION_TYPE_UNSPECIFIED", 0},
                                              {"LAST_MEASUREMENT", 1},
                                              {"BEST_MEASUREMENT", 2}};

bool AllDiscrete(const std::vector<ParamSpec>& params) {
  for (const ParamSpec& p : params) {
    if (p.type == ParamType::kDouble) return false;
    for (const ConditionalChild& c : p.children) {
      if (!AllDiscrete({c.spec})) return false;
    }
  }
  return true;
}

}  // namespace

Result<json> ParseMlHyperparameters(const json& value, const std::string& path, StudySpec* out) {
  ASSIGN_OR_RETURN(
      internal::WireObject h,
      internal::WireObject::Open(value, path,
                                 {"goal", "params", "maxTrials", "maxParallelTrials",
                                  "maxFailedTrials", "hyperparameterMetricTag",
                                  "resumePreviousJobId", "enableTrialEarlyStopping", "algorithm"}));
  StudySpec study;
  std::string goal = "GOAL_TYPE_UNSPECIFIED", algorithm = "ALGORITHM_UNSPECIFIED";
  RETURN_IF_ERROR(h.Enum("goal", kGoals, &goal));
  study.goal = goal == "MINIMIZE" ? Goal::kMinimize : Goal::kMaximize;
  const json* params = h.Find("params");
  if (params == nullptr) return FieldError(h.PathOf("params"), "is required");
  ASSIGN_OR_RETURN(study.params, ParseMlParams(*params, h.PathOf("params")));
  h.SetCanonical("params", NamedParams(*params, /*vertex=*/false));
  RETURN_IF_ERROR(h.Int32("maxTrials", &study.max_trials));
  RETURN_IF_ERROR(h.Int32("maxParallelTrials", &study.parallel_trials));
  RETURN_IF_ERROR(h.Int32("maxFailedTrials", &study.max_failed_trials));
  RETURN_IF_ERROR(h.String("hyperparameterMetricTag", &study.metric_tag));
  RETURN_IF_ERROR(h.String("resumePreviousJobId", &study.resume_previous_job_id));
  bool early = false;
  RETURN_IF_ERROR(h.Bool("enableTrialEarlyStopping", &early));
  if (early) study.stopping = StoppingRule::kDecayCurve;
  RETURN_IF_ERROR(h.Enum("algorithm", kMlAlgorithms, &algorithm));
  study.algorithm = *ParseAlgorithm(algorithm);
  if (study.max_trials < 1 || study.max_trials > kMaxStudyTrials) {
    return FieldError(h.PathOf("maxTrials"),
                      "must be between 1 and " + std::to_string(kMaxStudyTrials));
  }
  if (study.parallel_trials < 1 || study.parallel_trials > kMaxParallelTrials) {
    return FieldError(h.PathOf("maxParallelTrials"),
                      "must be between 1 and " + std::to_string(kMaxParallelTrials));
  }
  if (study.max_failed_trials < 0 || study.max_failed_trials > study.max_trials) {
    return FieldError(h.PathOf("maxFailedTrials"), "must be between 0 and maxTrials");
  }
  if (study.metric_tag.find_first_of(" \t\n") != std::string::npos) {
    return FieldError(h.PathOf("hyperparameterMetricTag"), "must not contain whitespace");
  }
  if (study.algorithm == Algorithm::kGrid && !AllDiscrete(study.params)) {
    return FieldError(h.PathOf("algorithm"),
                      "GRID_SEARCH needs every parameter to be INTEGER, CATEGORICAL or DISCRETE");
  }
  *out = std::move(study);
  return h.canonical();
}

namespace {

// studySpec.metrics: exactly one, the metric the trials report and its goal.
Status ParseVertexMetric(internal::WireObject& o, StudySpec* study) {
  const json* metrics = o.Find("metrics");
  if (metrics == nullptr || !metrics->is_array() || metrics->size() != 1) {
    return FieldError(o.PathOf("metrics"), "must hold exactly one metric");
  }
  const std::string metric_path = o.PathOf("metrics") + "[0]";
  ASSIGN_OR_RETURN(
      internal::WireObject m,
      internal::WireObject::Open((*metrics)[0], metric_path, {"metricId", "goal", "safetyConfig"}));
  RETURN_IF_ERROR(m.String("metricId", &study->metric_tag));
  if (study->metric_tag.empty()) return FieldError(m.PathOf("metricId"), "is required");
  if (study->metric_tag.find_first_of(" \t\n") != std::string::npos) {
    return FieldError(m.PathOf("metricId"), "must not contain whitespace");
  }
  std::string goal = "GOAL_TYPE_UNSPECIFIED";
  RETURN_IF_ERROR(m.Enum("goal", kGoals, &goal));
  study->goal = goal == "MINIMIZE" ? Goal::kMinimize : Goal::kMaximize;
  RETURN_IF_ERROR(m.OpaqueObject("safetyConfig"));
  o.SetCanonical("metrics", json::array({m.canonical()}));
  return Status::Ok();
}

// The automated stopping specs: at most one, and not the convex one.
Status ParseVertexStopping(internal::WireObject& o, StudySpec* study) {
  if (o.Has("convexAutomatedStoppingSpec")) {
    return FieldError(o.PathOf("convexAutomatedStoppingSpec"),
                      "is not supported; use decayCurveStoppingSpec or "
                      "medianAutomatedStoppingSpec");
  }
  for (const auto& [field, rule] :
       {std::pair{"decayCurveStoppingSpec", StoppingRule::kDecayCurve},
        std::pair{"medianAutomatedStoppingSpec", StoppingRule::kMedian}}) {
    const json* spec = o.Find(field);
    if (spec == nullptr) continue;
    if (study->stopping != StoppingRule::kNone) {
      return FieldError(o.PathOf(field), "only one automated stopping spec may be set");
    }
    ASSIGN_OR_RETURN(internal::WireObject stop,
                     internal::WireObject::Open(*spec, o.PathOf(field), {"useElapsedDuration"}));
    RETURN_IF_ERROR(stop.Bool("useElapsedDuration", &study->stopping_use_elapsed));
    o.SetCanonical(field, stop.canonical());
    study->stopping = rule;
  }
  return Status::Ok();
}

}  // namespace

Result<json> ParseVertexStudySpec(const json& value, const std::string& path, StudySpec* out) {
  ASSIGN_OR_RETURN(
      internal::WireObject o,
      internal::WireObject::Open(
          value, path,
          {"metrics", "parameters", "algorithm", "observationNoise", "measurementSelectionType",
           "decayCurveStoppingSpec", "medianAutomatedStoppingSpec", "convexAutomatedStoppingSpec",
           "studyStoppingConfig"}));
  StudySpec study;
  RETURN_IF_ERROR(ParseVertexMetric(o, &study));
  const json* params = o.Find("parameters");
  if (params == nullptr) return FieldError(o.PathOf("parameters"), "is required");
  ASSIGN_OR_RETURN(study.params, ParseVertexParams(*params, o.PathOf("parameters")));
  o.SetCanonical("parameters", NamedParams(*params, /*vertex=*/true));
  std::string algorithm = "ALGORITHM_UNSPECIFIED";
  RETURN_IF_ERROR(o.Enum("algorithm", kVertexAlgorithms, &algorithm));
  study.algorithm = *ParseAlgorithm(algorithm);
  if (study.algorithm == Algorithm::kGrid && !AllDiscrete(study.params)) {
    return FieldError(o.PathOf("algorithm"),
                      "GRID_SEARCH needs every parameter to be INTEGER, CATEGORICAL or DISCRETE");
  }
  std::string noise, selection;
  RETURN_IF_ERROR(o.Enum("observationNoise", kNoise, &noise));
  RETURN_IF_ERROR(o.Enum("measurementSelectionType", kSelection, &selection));
  if (selection == "BEST_MEASUREMENT") study.selection = MeasurementSelection::kBest;
  RETURN_IF_ERROR(ParseVertexStopping(o, &study));
  RETURN_IF_ERROR(o.OpaqueObject("studyStoppingConfig"));
  *out = std::move(study);
  return o.canonical();
}

namespace {

void NameToNumber(json& obj, const char* key, internal::EnumTable table) {
  if (!obj.is_object()) return;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return;
  int number = internal::EnumNumber(table, it->get_ref<const std::string&>());
  if (number >= 0) *it = number;
}

void VertexParamsEnumsToInt(json& params) {
  ForEachParam(params, [](json& p) { NameToNumber(p, "scaleType", kVertexScaleTypes); });
}

}  // namespace

void VertexStudySpecEnumsToInt(json& study_spec) {
  if (!study_spec.is_object()) return;
  if (auto metrics = study_spec.find("metrics");
      metrics != study_spec.end() && metrics->is_array()) {
    for (json& m : *metrics) NameToNumber(m, "goal", kGoals);
  }
  if (auto params = study_spec.find("parameters"); params != study_spec.end()) {
    VertexParamsEnumsToInt(*params);
  }
  NameToNumber(study_spec, "algorithm", kVertexAlgorithms);
  NameToNumber(study_spec, "observationNoise", kNoise);
  NameToNumber(study_spec, "measurementSelectionType", kSelection);
}

}  // namespace ty::wire
