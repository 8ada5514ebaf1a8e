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
#include "model/study_spec.h"

namespace ty::tuning {

// The parameter types are the model's (model/study_spec.h).
using model::ConditionalChild;
using model::FormatValue;
using model::ParamSpec;
using model::ParamType;
using model::ParamValue;
using model::Scale;
using Assignment = model::Assignment;

struct Dim {
  ParamSpec spec;   // Without children (they are dimensions of their own).
  int parent = -1;  // Index of the parent dimension; -1 at the top level.
  std::vector<double> parent_numbers;
  std::vector<std::string> parent_categories;
  std::vector<double> levels;  // Unit positions of every value (not for DOUBLE).
};

class SearchSpace {
 public:
  // Checks model::ValidateParams' rules first.
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
