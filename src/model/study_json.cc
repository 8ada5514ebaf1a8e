#include "model/study_json.h"

#include <cmath>
#include <cstdlib>

namespace ty::model {

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

Result<Scale> ParseScale(const json& obj, const std::string& path) {
  std::string s = obj.value("scaleType", "");
  if (s.empty() || s == "NONE" || s == "SCALE_TYPE_UNSPECIFIED" || s == "UNIT_LINEAR_SCALE") {
    return Scale::kLinear;
  }
  if (s == "UNIT_LOG_SCALE") return Scale::kLog;
  if (s == "UNIT_REVERSE_LOG_SCALE") return Scale::kReverseLog;
  return FieldError(path + ".scaleType",
                    "must be UNIT_LINEAR_SCALE, UNIT_LOG_SCALE or UNIT_REVERSE_LOG_SCALE");
}

// The search-space rules on one parameter, so a broken one is reported at its path.
Status CheckOne(const ParamSpec& p, const std::string& path) {
  Status s = ValidateParam(p);
  return s.ok() ? s : FieldError(path, s.message());
}

Result<ParamSpec> ParseMlParam(const json& p, const std::string& path) {
  if (!p.is_object()) return FieldError(path, "must be an object");
  ParamSpec spec;
  spec.name = p.value("parameterName", "");
  if (spec.name.empty()) return FieldError(path + ".parameterName", "is required");
  const std::string type = p.value("type", "");
  if (type == "DOUBLE" || type == "INTEGER") {
    spec.type = type == "DOUBLE" ? ParamType::kDouble : ParamType::kInteger;
    ASSIGN_OR_RETURN(spec.min, NumberField(p, "minValue", path));
    ASSIGN_OR_RETURN(spec.max, NumberField(p, "maxValue", path));
  } else if (type == "DISCRETE") {
    spec.type = ParamType::kDiscrete;
    if (!p.contains("discreteValues")) return FieldError(path + ".discreteValues", "is required");
    ASSIGN_OR_RETURN(spec.discrete, NumberList(p["discreteValues"], path + ".discreteValues"));
  } else if (type == "CATEGORICAL") {
    spec.type = ParamType::kCategorical;
    if (!p.contains("categoricalValues")) {
      return FieldError(path + ".categoricalValues", "is required");
    }
    ASSIGN_OR_RETURN(spec.categories,
                     StringList(p["categoricalValues"], path + ".categoricalValues"));
  } else {
    return FieldError(path + ".type", "must be DOUBLE, INTEGER, CATEGORICAL or DISCRETE");
  }
  if (spec.type != ParamType::kCategorical) {
    ASSIGN_OR_RETURN(spec.scale, ParseScale(p, path));
  }
  RETURN_IF_ERROR(CheckOne(spec, path));
  return spec;
}

Result<ParamSpec> ParseVertexParam(const json& p, const std::string& path);

Result<ConditionalChild> ParseVertexConditional(const json& c, const std::string& path) {
  if (!c.is_object()) return FieldError(path, "must be an object");
  ConditionalChild child;
  if (!c.contains("parameterSpec")) return FieldError(path + ".parameterSpec", "is required");
  ASSIGN_OR_RETURN(child.spec, ParseVertexParam(c["parameterSpec"], path + ".parameterSpec"));
  if (c.contains("parentCategoricalValues")) {
    ASSIGN_OR_RETURN(child.parent_categories,
                     StringList(c["parentCategoricalValues"].value("values", json::array()),
                                path + ".parentCategoricalValues.values"));
  } else if (c.contains("parentIntValues") || c.contains("parentDiscreteValues")) {
    const char* key = c.contains("parentIntValues") ? "parentIntValues" : "parentDiscreteValues";
    ASSIGN_OR_RETURN(child.parent_numbers, NumberList(c[key].value("values", json::array()),
                                                      path + "." + key + ".values"));
  } else {
    return FieldError(path,
                      "needs parentDiscreteValues, parentIntValues or "
                      "parentCategoricalValues");
  }
  return child;
}

Result<ParamSpec> ParseVertexParam(const json& p, const std::string& path) {
  if (!p.is_object()) return FieldError(path, "must be an object");
  ParamSpec spec;
  spec.name = p.value("parameterId", "");
  if (spec.name.empty()) return FieldError(path + ".parameterId", "is required");
  if (p.contains("doubleValueSpec") || p.contains("integerValueSpec")) {
    bool is_double = p.contains("doubleValueSpec");
    const char* key = is_double ? "doubleValueSpec" : "integerValueSpec";
    spec.type = is_double ? ParamType::kDouble : ParamType::kInteger;
    ASSIGN_OR_RETURN(spec.min, NumberField(p[key], "minValue", path + "." + key));
    ASSIGN_OR_RETURN(spec.max, NumberField(p[key], "maxValue", path + "." + key));
  } else if (p.contains("discreteValueSpec")) {
    spec.type = ParamType::kDiscrete;
    ASSIGN_OR_RETURN(spec.discrete, NumberList(p["discreteValueSpec"].value("values", json()),
                                               path + ".discreteValueSpec.values"));
  } else if (p.contains("categoricalValueSpec")) {
    spec.type = ParamType::kCategorical;
    ASSIGN_OR_RETURN(spec.categories, StringList(p["categoricalValueSpec"].value("values", json()),
                                                 path + ".categoricalValueSpec.values"));
  } else {
    return FieldError(path,
                      "needs one of doubleValueSpec, integerValueSpec, "
                      "categoricalValueSpec or discreteValueSpec");
  }
  if (spec.type != ParamType::kCategorical) {
    ASSIGN_OR_RETURN(spec.scale, ParseScale(p, path));
  }
  RETURN_IF_ERROR(CheckOne(spec, path));
  const json children = p.value("conditionalParameterSpecs", json::array());
  for (size_t i = 0; i < children.size(); ++i) {
    ASSIGN_OR_RETURN(ConditionalChild child,
                     ParseVertexConditional(children[i], path + ".conditionalParameterSpecs[" +
                                                             std::to_string(i) + "]"));
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
  return ParseList(params, path, ParseVertexParam);
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

}  // namespace ty::model
