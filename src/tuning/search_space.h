// A study's search space: DOUBLE, INTEGER, CATEGORICAL and DISCRETE parameters, their
// scales (Vizier's meaning) and Vertex conditional children, flattened into one
// dimension per parameter so the tuners can work on points of numbers.
//
// Encoded points: one coordinate per dimension, in the order of Dims().
//   numeric (DOUBLE, INTEGER, DISCRETE): the value's position in [0, 1] under its scale;
//   CATEGORICAL: the category's index;
//   inactive (a conditional child whose parent does not match): NaN.
// A point is valid when every active numeric coordinate sits on a value the parameter
// can take (integers and discrete values exactly) and inactive ones are NaN. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace ty::tuning {

enum class ParamType { kDouble, kInteger, kCategorical, kDiscrete };
enum class Scale { kLinear, kLog, kReverseLog };

struct ConditionalChild;

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kDouble;
  double min = 0;  // DOUBLE, INTEGER (inclusive).
  double max = 0;
  std::vector<double> discrete;         // DISCRETE: strictly increasing.
  std::vector<std::string> categories;  // CATEGORICAL: distinct.
  Scale scale = Scale::kLinear;
  std::vector<ConditionalChild> children;  // Active only when this one's value matches.
};

// A child parameter and the parent values that make it active: numbers for INTEGER
// and DISCRETE parents, category names for CATEGORICAL ones.
struct ConditionalChild {
  std::vector<double> parent_numbers;
  std::vector<std::string> parent_categories;
  ParamSpec spec;
};

struct ParamValue {
  double number = 0;     // DOUBLE, INTEGER (integral), DISCRETE.
  std::string category;  // CATEGORICAL.
  bool operator==(const ParamValue& o) const {
    return number == o.number && category == o.category;
  }
};

// The values of the active parameters of one trial, by name.
using Assignment = std::map<std::string, ParamValue>;

// Formats a value as trials receive it on the command line (`--name=value`) and as ml
// v1 reports it: integers without a fraction, doubles in the shortest exact form.
std::string FormatValue(const ParamSpec& spec, const ParamValue& value);

struct Dim {
  ParamSpec spec;   // Without children (they are dimensions of their own).
  int parent = -1;  // Index of the parent dimension; -1 at the top level.
  std::vector<double> parent_numbers;
  std::vector<std::string> parent_categories;
  std::vector<double> levels;  // Unit positions of every value (not for DOUBLE).
};

class SearchSpace {
 public:
  // Checks the rules (names unique and non-empty, min < max, integral INTEGER bounds,
  // log scales on positive ranges, discrete values increasing, categories distinct,
  // conditions on INTEGER/DISCRETE/CATEGORICAL parents naming values the parent has);
  // the message names the parameter and the rule.
  static Result<SearchSpace> Create(std::vector<ParamSpec> params);

  const std::vector<Dim>& Dims() const { return dims_; }
  size_t size() const { return dims_.size(); }
  const std::vector<ParamSpec>& Params() const { return params_; }
  // True when every parameter has a finite set of values (what GRID_SEARCH needs).
  bool AllDiscrete() const;

  double ToUnit(size_t d, double value) const;
  double FromUnit(size_t d, double unit) const;
  // The nearest level of a non-DOUBLE numeric dimension, by unit distance.
  double SnapUnit(size_t d, double unit) const;

  // Maps u in [0,1)^size (uniform or quasi-random) to a valid point: scales respected,
  // every level of a discrete dimension equally likely, inactive children NaN.
  std::vector<double> FromCube(const std::vector<double>& u) const;
  // Makes `x` valid in place: inactive → NaN, newly active coordinates taken from
  // `fill` (a valid point, or NaN-free cube sample mapped by FromCube), levels snapped.
  void Repair(std::vector<double>* x, const std::vector<double>& fill) const;
  bool IsActive(const std::vector<double>& x, size_t d) const;

  std::vector<double> Encode(const Assignment& a) const;
  Assignment Decode(const std::vector<double>& x) const;
  // Checks an assignment: every active parameter present with a valid value, no other.
  Status Check(const Assignment& a) const;

 private:
  void Flatten(const ParamSpec& spec, int parent, const ConditionalChild* cond);
  bool ParentMatches(const Dim& dim, double parent_coordinate) const;

  std::vector<ParamSpec> params_;
  std::vector<Dim> dims_;
};

}  // namespace ty::tuning
