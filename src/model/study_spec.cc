#include "model/study_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace ty::model {

namespace {

constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53.

Status CheckParam(const ParamSpec& p) {
  auto bad = [&](const std::string& rule) {
    return InvalidArgument("parameter '" + p.name + "' (" + ParamTypeName(p.type) + "): " + rule);
  };
  if (p.name.empty()) return InvalidArgument("a parameter has no name");
  if (p.name.find_first_of(" \t\n=") != std::string::npos) {
    return bad("the name must not contain whitespace or '='");
  }
  switch (p.type) {
    case ParamType::kDouble:
    case ParamType::kInteger:
      if (!std::isfinite(p.min) || !std::isfinite(p.max)) return bad("bounds must be finite");
      if (!(p.min < p.max)) return bad("minValue must be less than maxValue");
      if (p.type == ParamType::kInteger &&
          (p.min != std::floor(p.min) || p.max != std::floor(p.max))) {
        return bad("minValue and maxValue must be integers");
      }
      // The tuner works in doubles and trials get the value as a decimal integer:
      // past 2^53 neither is exact ("-9223372036854775809" once gave a trial -4.7e18).
      if (p.type == ParamType::kInteger &&
          (std::fabs(p.min) > kMaxExactInteger || std::fabs(p.max) > kMaxExactInteger)) {
        return bad("minValue and maxValue must be within +-9007199254740992 (2^53)");
      }
      break;
    case ParamType::kDiscrete:
      if (p.discrete.empty()) return bad("discreteValues must not be empty");
      if (p.discrete.size() > kMaxParamValues) {
        return bad("at most " + std::to_string(kMaxParamValues) + " discreteValues");
      }
      for (size_t i = 0; i < p.discrete.size(); ++i) {
        if (!std::isfinite(p.discrete[i])) return bad("discreteValues must be finite");
        if (i > 0 && !(p.discrete[i] > p.discrete[i - 1])) {
          return bad("discreteValues must be strictly increasing");
        }
      }
      break;
    case ParamType::kCategorical: {
      if (p.categories.empty()) return bad("categoricalValues must not be empty");
      if (p.categories.size() > kMaxParamValues) {
        return bad("at most " + std::to_string(kMaxParamValues) + " categoricalValues");
      }
      for (const std::string& c : p.categories) {
        if (c.size() > kMaxCategoryChars) {
          return bad("a categorical value is at most " + std::to_string(kMaxCategoryChars) +
                     " characters");
        }
      }
      std::set<std::string> seen(p.categories.begin(), p.categories.end());
      if (seen.size() != p.categories.size()) return bad("categoricalValues must be distinct");
      return Status::Ok();  // No scale.
    }
  }
  if (p.scale != Scale::kLinear &&
      !((p.type == ParamType::kDiscrete ? p.discrete.front() : p.min) > 0)) {
    return bad("a log scale needs a strictly positive range");
  }
  return Status::Ok();
}

Status CheckCondition(const ParamSpec& parent, const ConditionalChild& c) {
  auto bad = [&](const std::string& rule) {
    return InvalidArgument("conditional parameter '" + c.spec.name + "' of '" + parent.name +
                           "': " + rule);
  };
  if (c.parent_categories.size() + c.parent_numbers.size() > kMaxParamValues) {
    return bad("at most " + std::to_string(kMaxParamValues) + " parent values");
  }
  switch (parent.type) {
    case ParamType::kDouble:
      return bad("a DOUBLE parameter cannot have conditional children");
    case ParamType::kCategorical:
      if (c.parent_categories.empty()) return bad("parentCategoricalValues is required");
      for (const auto& v : c.parent_categories) {
        if (std::find(parent.categories.begin(), parent.categories.end(), v) ==
            parent.categories.end()) {
          return bad("parent value '" + v + "' is not one of its categoricalValues");
        }
      }
      return Status::Ok();
    case ParamType::kInteger:
    case ParamType::kDiscrete:
      if (c.parent_numbers.empty()) {
        return bad(parent.type == ParamType::kInteger ? "parentIntValues is required"
                                                      : "parentDiscreteValues is required");
      }
      for (double v : c.parent_numbers) {
        bool ok = parent.type == ParamType::kInteger
                      ? v == std::floor(v) && v >= parent.min && v <= parent.max
                      : std::find(parent.discrete.begin(), parent.discrete.end(), v) !=
                            parent.discrete.end();
        if (!ok) return bad("parent value " + std::to_string(v) + " is not a value it takes");
      }
      return Status::Ok();
  }
  return Status::Ok();
}

Status CheckTree(const ParamSpec& p, int depth, std::set<std::string>* names) {
  if (depth > kMaxConditionalDepth) {
    return InvalidArgument("parameter '" + p.name + "' is nested deeper than " +
                           std::to_string(kMaxConditionalDepth) + " conditions");
  }
  RETURN_IF_ERROR(CheckParam(p));
  if (!names->insert(p.name).second) {
    return InvalidArgument("parameter '" + p.name + "' is named twice");
  }
  if (names->size() > kMaxStudyParams) {
    return InvalidArgument("a study has at most " + std::to_string(kMaxStudyParams) +
                           " parameters, conditional ones included");
  }
  for (const auto& c : p.children) {
    RETURN_IF_ERROR(CheckCondition(p, c));
    RETURN_IF_ERROR(CheckTree(c.spec, depth + 1, names));
  }
  return Status::Ok();
}

}  // namespace

const char* ParamTypeName(ParamType t) {
  switch (t) {
    case ParamType::kDouble:
      return "DOUBLE";
    case ParamType::kInteger:
      return "INTEGER";
    case ParamType::kCategorical:
      return "CATEGORICAL";
    case ParamType::kDiscrete:
      return "DISCRETE";
  }
  return "?";
}

std::string FormatValue(const ParamSpec& spec, const ParamValue& value) {
  if (spec.type == ParamType::kCategorical) return value.category;
  if (spec.type == ParamType::kInteger) {
    return std::to_string(static_cast<long long>(std::llround(value.number)));
  }
  char buf[40];
  // Whole numbers print whole ("10", not "1e+01": training code may read them as int).
  if (std::abs(value.number) < 1e15 && value.number == std::trunc(value.number)) {
    std::snprintf(buf, sizeof buf, "%.0f", value.number);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.17g", value.number);
  // Prefer the shortest form that reads back to the same double.
  for (int precision = 1; precision < 17; ++precision) {
    char shorter[40];
    std::snprintf(shorter, sizeof shorter, "%.*g", precision, value.number);
    if (std::strtod(shorter, nullptr) == value.number) return shorter;
  }
  return buf;
}

Status ValidateParam(const ParamSpec& param) {
  ParamSpec alone = param;
  alone.children.clear();
  return CheckParam(alone);
}

Status ValidateParams(const std::vector<ParamSpec>& params) {
  if (params.empty()) return InvalidArgument("the study has no parameters");
  std::set<std::string> names;
  for (const auto& p : params) RETURN_IF_ERROR(CheckTree(p, 0, &names));
  return Status::Ok();
}

Result<Algorithm> ParseAlgorithm(const std::string& name) {
  if (name.empty() || name == "ALGORITHM_UNSPECIFIED") return Algorithm::kBayesian;
  if (name == "GRID_SEARCH") return Algorithm::kGrid;
  if (name == "RANDOM_SEARCH") return Algorithm::kRandom;
  return InvalidArgument(
      "algorithm must be ALGORITHM_UNSPECIFIED, GRID_SEARCH or RANDOM_SEARCH, "
      "not '" +
      name + "'");
}

const char* AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kBayesian:
      return "ALGORITHM_UNSPECIFIED";
    case Algorithm::kGrid:
      return "GRID_SEARCH";
    case Algorithm::kRandom:
      return "RANDOM_SEARCH";
  }
  return "?";
}

}  // namespace ty::model
