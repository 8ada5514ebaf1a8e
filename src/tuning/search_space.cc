#include "tuning/search_space.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace ty::tuning {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Integer ranges up to this many values keep every level (exact enumeration); wider
// ones snap arithmetically.
constexpr double kMaxIntegerLevels = 4096;

double Lowest(const ParamSpec& p) {
  return p.type == ParamType::kDiscrete ? p.discrete.front() : p.min;
}
double Highest(const ParamSpec& p) {
  return p.type == ParamType::kDiscrete ? p.discrete.back() : p.max;
}

// Vizier's scales on [lo, hi]; both log scales need lo > 0. UNIT_REVERSE_LOG_SCALE
// log-scales z = lo + hi - v, so values are dense near hi.
double UnitOf(Scale scale, double lo, double hi, double v) {
  if (hi <= lo) return 0.5;
  switch (scale) {
    case Scale::kLinear:
      return (v - lo) / (hi - lo);
    case Scale::kLog:
      return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
    case Scale::kReverseLog:
      return 1.0 - (std::log(lo + hi - v) - std::log(lo)) / (std::log(hi) - std::log(lo));
  }
  return 0;
}

double ValueOf(Scale scale, double lo, double hi, double u) {
  u = std::clamp(u, 0.0, 1.0);
  switch (scale) {
    case Scale::kLinear:
      return lo + u * (hi - lo);
    case Scale::kLog:
      return std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
    case Scale::kReverseLog:
      return lo + hi - std::exp(std::log(lo) + (1.0 - u) * (std::log(hi) - std::log(lo)));
  }
  return lo;
}

}  // namespace

Result<SearchSpace> SearchSpace::Create(std::vector<ParamSpec> params) {
  if (params.empty()) return InvalidArgument("the study has no parameters");
  RETURN_IF_ERROR(model::ValidateParams(params));
  SearchSpace space;
  space.params_ = std::move(params);
  for (const auto& p : space.params_) space.Flatten(p, -1, nullptr);
  return space;
}

void SearchSpace::Flatten(const ParamSpec& spec, int parent, const ConditionalChild* cond) {
  Dim dim;
  dim.spec = spec;
  dim.spec.children.clear();
  dim.parent = parent;
  if (cond != nullptr) {
    dim.parent_numbers = cond->parent_numbers;
    dim.parent_categories = cond->parent_categories;
  }
  const double lo = Lowest(spec);
  const double hi = Highest(spec);
  if (spec.type == ParamType::kDiscrete) {
    for (double v : spec.discrete) dim.levels.push_back(UnitOf(spec.scale, lo, hi, v));
  } else if (spec.type == ParamType::kInteger && spec.max - spec.min < kMaxIntegerLevels) {
    for (double v = spec.min; v <= spec.max; v += 1) {
      dim.levels.push_back(UnitOf(spec.scale, lo, hi, v));
    }
  }
  dims_.push_back(std::move(dim));
  const int self = static_cast<int>(dims_.size()) - 1;
  for (const auto& c : spec.children) Flatten(c.spec, self, &c);
}

bool SearchSpace::AllDiscrete() const {
  for (const auto& d : dims_) {
    if (d.spec.type == ParamType::kDouble) return false;
    if (d.spec.type == ParamType::kInteger && d.levels.empty()) return false;
  }
  return true;
}

double SearchSpace::ToUnit(size_t d, double value) const {
  const ParamSpec& p = dims_[d].spec;
  return UnitOf(p.scale, Lowest(p), Highest(p), value);
}

double SearchSpace::FromUnit(size_t d, double unit) const {
  const ParamSpec& p = dims_[d].spec;
  if (p.type == ParamType::kDiscrete) {
    const auto& lv = dims_[d].levels;
    size_t i = std::min_element(
                   lv.begin(), lv.end(),
                   [&](double a, double b) { return std::abs(a - unit) < std::abs(b - unit); }) -
               lv.begin();
    return p.discrete[i];
  }
  double v = ValueOf(p.scale, Lowest(p), Highest(p), unit);
  if (p.type == ParamType::kInteger) {
    double u = SnapUnit(d, unit);
    v = std::round(ValueOf(p.scale, Lowest(p), Highest(p), u));
  }
  return std::clamp(v, Lowest(p), Highest(p));
}

double SearchSpace::SnapUnit(size_t d, double unit) const {
  const Dim& dim = dims_[d];
  if (dim.spec.type == ParamType::kDouble) return std::clamp(unit, 0.0, 1.0);
  if (!dim.levels.empty()) {
    auto it = std::lower_bound(dim.levels.begin(), dim.levels.end(), unit);
    if (it == dim.levels.end()) return dim.levels.back();
    if (it == dim.levels.begin()) return *it;
    return (unit - *(it - 1) <= *it - unit) ? *(it - 1) : *it;
  }
  // A wide integer range: the two integers around the value, nearest by unit distance.
  const ParamSpec& p = dim.spec;
  double v = ValueOf(p.scale, p.min, p.max, unit);
  double a = std::clamp(std::floor(v), p.min, p.max);
  double b = std::clamp(std::ceil(v), p.min, p.max);
  double ua = UnitOf(p.scale, p.min, p.max, a);
  double ub = UnitOf(p.scale, p.min, p.max, b);
  return std::abs(ua - unit) <= std::abs(ub - unit) ? ua : ub;
}

bool SearchSpace::ParentMatches(const Dim& dim, double parent_coordinate) const {
  if (std::isnan(parent_coordinate)) return false;
  const Dim& parent = dims_[dim.parent];
  if (parent.spec.type == ParamType::kCategorical) {
    const std::string& cat = parent.spec.categories[static_cast<size_t>(parent_coordinate)];
    return std::find(dim.parent_categories.begin(), dim.parent_categories.end(), cat) !=
           dim.parent_categories.end();
  }
  double value = FromUnit(static_cast<size_t>(dim.parent), parent_coordinate);
  for (double v : dim.parent_numbers) {
    if (std::abs(v - value) <= 1e-9 * std::max(1.0, std::abs(v))) return true;
  }
  return false;
}

bool SearchSpace::IsActive(const std::vector<double>& x, size_t d) const {
  const Dim& dim = dims_[d];
  if (dim.parent < 0) return true;
  return ParentMatches(dim, x[static_cast<size_t>(dim.parent)]);
}

std::vector<double> SearchSpace::FromCube(const std::vector<double>& u) const {
  std::vector<double> x(dims_.size(), kNaN);
  for (size_t d = 0; d < dims_.size(); ++d) {
    // Parents come before their children, so activity is known here.
    if (!IsActive(x, d)) continue;
    const Dim& dim = dims_[d];
    double ud = std::clamp(u[d], 0.0, std::nextafter(1.0, 0.0));
    switch (dim.spec.type) {
      case ParamType::kCategorical:
        x[d] = std::floor(ud * static_cast<double>(dim.spec.categories.size()));
        break;
      case ParamType::kDouble:
        x[d] = ud;
        break;
      case ParamType::kDiscrete:
      case ParamType::kInteger:
        // Listed values and linear integers: every value equally likely. Log-scaled
        // integers follow their scale (snapped), which is what the scale asks for.
        if (!dim.levels.empty() &&
            (dim.spec.type == ParamType::kDiscrete || dim.spec.scale == Scale::kLinear)) {
          x[d] = dim.levels[static_cast<size_t>(ud * static_cast<double>(dim.levels.size()))];
        } else {
          x[d] = SnapUnit(d, ud);
        }
        break;
    }
  }
  return x;
}

void SearchSpace::Repair(std::vector<double>* x, const std::vector<double>& fill) const {
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (!IsActive(*x, d)) {
      (*x)[d] = kNaN;
      continue;
    }
    if (std::isnan((*x)[d])) (*x)[d] = fill[d];
    if (dims_[d].spec.type == ParamType::kCategorical) {
      double n = static_cast<double>(dims_[d].spec.categories.size());
      (*x)[d] = std::clamp(std::round((*x)[d]), 0.0, n - 1);
    } else {
      (*x)[d] = SnapUnit(d, (*x)[d]);
    }
  }
}

std::vector<double> SearchSpace::Encode(const Assignment& a) const {
  std::vector<double> x(dims_.size(), kNaN);
  for (size_t d = 0; d < dims_.size(); ++d) {
    auto it = a.find(dims_[d].spec.name);
    if (it == a.end() || !IsActive(x, d)) continue;
    const ParamSpec& p = dims_[d].spec;
    if (p.type == ParamType::kCategorical) {
      auto c = std::find(p.categories.begin(), p.categories.end(), it->second.category);
      if (c != p.categories.end()) x[d] = static_cast<double>(c - p.categories.begin());
    } else {
      // SnapUnit clamps DOUBLE coordinates and puts the others on their levels.
      x[d] = SnapUnit(d, ToUnit(d, std::clamp(it->second.number, Lowest(p), Highest(p))));
    }
  }
  return x;
}

Assignment SearchSpace::Decode(const std::vector<double>& x) const {
  Assignment a;
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (std::isnan(x[d])) continue;
    const ParamSpec& p = dims_[d].spec;
    ParamValue v;
    if (p.type == ParamType::kCategorical) {
      v.category = p.categories[static_cast<size_t>(x[d])];
    } else {
      v.number = FromUnit(d, x[d]);
    }
    a[p.name] = v;
  }
  return a;
}

Status SearchSpace::Check(const Assignment& a) const {
  std::vector<double> x = Encode(a);
  size_t active = 0;
  for (size_t d = 0; d < dims_.size(); ++d) {
    const ParamSpec& p = dims_[d].spec;
    bool on = IsActive(x, d);
    auto it = a.find(p.name);
    if (!on) {
      if (it != a.end()) return InvalidArgument("parameter '" + p.name + "' is not active");
      continue;
    }
    ++active;
    if (it == a.end()) return InvalidArgument("parameter '" + p.name + "' has no value");
    const ParamValue& v = it->second;
    bool ok = true;
    if (p.type == ParamType::kCategorical) {
      ok = !std::isnan(x[d]);
    } else if (p.type == ParamType::kDiscrete) {
      ok = std::any_of(p.discrete.begin(), p.discrete.end(), [&](double dv) {
        return std::abs(dv - v.number) <= 1e-9 * std::max(1.0, std::abs(dv));
      });
    } else {
      ok = v.number >= p.min && v.number <= p.max &&
           (p.type == ParamType::kDouble || v.number == std::floor(v.number));
    }
    if (!ok) {
      return InvalidArgument("parameter '" + p.name + "': " + FormatValue(p, v) +
                             " is not a value it takes");
    }
  }
  if (a.size() != active) return InvalidArgument("the assignment names unknown parameters");
  return Status::Ok();
}

}  // namespace ty::tuning
