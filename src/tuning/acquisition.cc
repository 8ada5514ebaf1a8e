#include "tuning/acquisition.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlopt.hpp>
#include <numeric>
#include <random>

#include "tuning/quasi_random.h"

namespace ty::tuning {

namespace {

constexpr double kInvSqrt2Pi = 0.3989422804014327;
constexpr double kLogInvSqrt2Pi = -0.9189385332046727;
constexpr double kMillsBelow = -3;     // Below this z, h(z) comes from the Mills ratio.
constexpr size_t kAllLevelsUpTo = 48;  // Sweep every level of smaller dimensions.

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

using Point = std::vector<double>;

Eigen::MatrixXd ToMatrix(const std::vector<Point>& points) {
  Eigen::MatrixXd m(static_cast<Eigen::Index>(points.size()),
                    static_cast<Eigen::Index>(points.empty() ? 0 : points[0].size()));
  for (size_t i = 0; i < points.size(); ++i) {
    for (size_t d = 0; d < points[i].size(); ++d) {
      m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(d)) = points[i][d];
    }
  }
  return m;
}

std::vector<double> Score(const GaussianProcess& gp, double best, const std::vector<Point>& pts) {
  if (pts.empty()) return {};
  Eigen::VectorXd mean, var;
  gp.PredictBatch(ToMatrix(pts), &mean, &var);
  std::vector<double> s(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) s[i] = LogExpectedImprovement(mean(i), var(i), best);
  return s;
}

Point RandomPoint(const SearchSpace& space, std::mt19937_64& rng) {
  Point u(space.size());
  for (double& v : u) v = Uniform01(rng);
  return space.FromCube(u);
}

// A neighbour of `x`: numeric coordinates moved by a Gaussian step, and with
// probability about 1/D each discrete coordinate re-drawn.
Point Perturb(const SearchSpace& space, const Point& x, double sigma, std::mt19937_64& rng) {
  Point y = x;
  Point fill = RandomPoint(space, rng);
  std::normal_distribution<double> step(0.0, sigma);
  const double flip = 1.0 / static_cast<double>(space.size());
  for (size_t d = 0; d < space.size(); ++d) {
    if (std::isnan(y[d])) continue;
    if (space.Dims()[d].spec.type == ParamType::kCategorical) {
      if (Uniform01(rng) < flip) y[d] = fill[d];
    } else if (space.Dims()[d].spec.type == ParamType::kDouble || Uniform01(rng) < 0.5) {
      y[d] += step(rng);
    }
  }
  space.Repair(&y, fill);
  return y;
}

struct ContinuousProblem {
  const GaussianProcess* gp;
  double best;
  Point x;                   // Full point; the optimised coordinates are written in.
  std::vector<size_t> dims;  // Indexes of the active DOUBLE coordinates.
};

double NegLogEi(const std::vector<double>& z, std::vector<double>& grad, void* data) {
  auto* p = static_cast<ContinuousProblem*>(data);
  Eigen::VectorXd x =
      Eigen::Map<const Eigen::VectorXd>(p->x.data(), static_cast<Eigen::Index>(p->x.size()));
  for (size_t i = 0; i < p->dims.size(); ++i) x(static_cast<Eigen::Index>(p->dims[i])) = z[i];
  double mean = 0, var = 0, dm = 0, dv = 0;
  Eigen::VectorXd dmean, dvar;
  p->gp->PredictWithGradient(x, &mean, &var, &dmean, &dvar);
  double value = LogExpectedImprovement(mean, var, p->best, &dm, &dv);
  if (!grad.empty()) {
    for (size_t i = 0; i < p->dims.size(); ++i) {
      auto d = static_cast<Eigen::Index>(p->dims[i]);
      grad[i] = -(dm * dmean(d) + dv * dvar(d));
    }
  }
  return std::isfinite(value) ? -value : 1e300;
}

// L-BFGS over the active DOUBLE coordinates of `x`, the others held.
void RefineContinuous(const SearchSpace& space, const GaussianProcess& gp, double best, int evals,
                      Point* x) {
  ContinuousProblem problem{&gp, best, *x, {}};
  for (size_t d = 0; d < space.size(); ++d) {
    if (space.Dims()[d].spec.type == ParamType::kDouble && !std::isnan((*x)[d])) {
      problem.dims.push_back(d);
    }
  }
  if (problem.dims.empty()) return;
  std::vector<double> z;
  for (size_t d : problem.dims) z.push_back((*x)[d]);
  nlopt::opt opt(nlopt::LD_LBFGS, static_cast<unsigned>(z.size()));
  opt.set_lower_bounds(std::vector<double>(z.size(), 0.0));
  opt.set_upper_bounds(std::vector<double>(z.size(), 1.0));
  opt.set_min_objective(NegLogEi, &problem);
  opt.set_maxeval(evals);
  opt.set_xtol_rel(1e-6);
  std::vector<double> start = z;
  std::vector<double> unused;
  double start_value = NegLogEi(start, unused, &problem);
  double value = start_value;
  try {
    opt.optimize(z, value);
  } catch (const std::exception&) {
    value = NegLogEi(z, unused, &problem);  // z holds the last point NLopt reached.
  }
  if (!(value < start_value)) return;
  for (size_t i = 0; i < z.size(); ++i) (*x)[problem.dims[i]] = std::clamp(z[i], 0.0, 1.0);
}

// The values a sweep of dimension `d` tries from `x`.
std::vector<double> SweepValues(const SearchSpace& space, size_t d, const Point& x,
                                std::mt19937_64& rng) {
  const Dim& dim = space.Dims()[d];
  std::vector<double> values;
  if (dim.spec.type == ParamType::kCategorical) {
    const size_t n = dim.spec.categories.size();
    if (n <= kAllLevelsUpTo) {
      for (size_t c = 0; c < n; ++c) values.push_back(static_cast<double>(c));
      return values;
    }
    // Many categories have no order to search near: a random sample of them.
    values.push_back(x[d]);
    std::uniform_int_distribution<size_t> pick(0, n - 1);
    for (size_t k = 1; k < kAllLevelsUpTo; ++k) values.push_back(static_cast<double>(pick(rng)));
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
  }
  if (!dim.levels.empty() && dim.levels.size() <= kAllLevelsUpTo) return dim.levels;
  // Many levels: the nearest ones on each side, then a random sample of the rest.
  double here = x[d];
  for (double step : {1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3}) {
    values.push_back(space.SnapUnit(d, here - step));
    values.push_back(space.SnapUnit(d, here + step));
  }
  if (!dim.levels.empty()) {
    auto it = std::lower_bound(dim.levels.begin(), dim.levels.end(), here);
    auto i = it - dim.levels.begin();
    for (auto k = std::max<std::ptrdiff_t>(0, i - 8);
         k < std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(dim.levels.size()), i + 8); ++k) {
      values.push_back(dim.levels[static_cast<size_t>(k)]);
    }
  }
  for (int k = 0; k < 16; ++k) values.push_back(space.SnapUnit(d, Uniform01(rng)));
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

// One exact sweep over every active non-DOUBLE coordinate, keeping improvements.
// At most `budget` points are scored (AcquisitionBudget::sweep_points): without a
// bound a sweep of 100 categorical parameters of 1,000 values each scored 100,000
// points, ten sweeps per suggestion: 55 s for one. Over the budget, a sweep visits the
// dimensions in a random order until it is spent.
void SweepDiscrete(const SearchSpace& space, const GaussianProcess& gp, double best,
                   const std::function<bool(const Point&)>& taken, size_t budget,
                   std::mt19937_64& rng, Point* x, double* score) {
  std::vector<size_t> dims;
  size_t most = 0;  // Points a full sweep could score (an upper bound).
  for (size_t d = 0; d < space.size(); ++d) {
    const Dim& dim = space.Dims()[d];
    if (dim.spec.type == ParamType::kDouble) continue;
    dims.push_back(d);  // Inactive ones too: an earlier change may switch them on.
    most += std::min(std::max(dim.levels.size(), dim.spec.categories.size()), kAllLevelsUpTo + 16);
  }
  if (most > budget) std::shuffle(dims.begin(), dims.end(), rng);
  size_t scored = 0;
  for (size_t d : dims) {
    if (scored >= budget) break;
    if (std::isnan((*x)[d])) continue;  // Inactive (as the sweep left it).
    Point fill = RandomPoint(space, rng);
    std::vector<Point> options;
    for (double v : SweepValues(space, d, *x, rng)) {
      Point y = *x;
      y[d] = v;
      space.Repair(&y, fill);  // A new parent value may switch children on or off.
      if (!taken(y)) options.push_back(std::move(y));
    }
    scored += options.size();
    std::vector<double> s = Score(gp, best, options);
    for (size_t i = 0; i < options.size(); ++i) {
      if (s[i] > *score) {
        *score = s[i];
        *x = options[i];
      }
    }
  }
}

}  // namespace

double LogExpectedImprovement(double mean, double var, double best, double* dmean, double* dvar) {
  const double sigma = std::sqrt(std::max(var, 1e-18));
  const double z = (mean - best) / sigma;
  double log_h = 0, dlog_dmean = 0, dlog_dsigma = 0;
  if (z > kMillsBelow) {
    double pdf = kInvSqrt2Pi * std::exp(-0.5 * z * z);
    double cdf = NormalCdf(z);
    double h = pdf + z * cdf;
    log_h = std::log(std::max(h, 1e-300));
    dlog_dmean = cdf / (sigma * h);
    dlog_dsigma = pdf / (sigma * h);
  } else {
    // h(z) = phi(z) c(t) with t = -z, c(t) = 1 - t R(t) and R(t) = Phi(-t) / phi(t)
    // the Mills ratio, from Laplace's continued fraction (accurate to ~1e-15 for
    // t > 3, where phi + z Phi cancels badly). Far out, c is its leading term 1/t^2.
    const double t = -z;
    double f = t;
    for (int k = 60; k >= 1; --k) f = t + k / f;
    const double mills = 1 / f;
    const double c = t < 1e4 ? 1 - t * mills : 1 / (t * t);
    log_h = kLogInvSqrt2Pi - 0.5 * z * z + std::log(c);
    dlog_dmean = mills / (sigma * c);
    dlog_dsigma = 1 / (sigma * c);
  }
  if (dmean != nullptr) *dmean = dlog_dmean;
  // d sigma / d var = 1 / (2 sigma); log EI = log sigma + log h(z).
  if (dvar != nullptr) *dvar = dlog_dsigma / (2 * sigma);
  return std::log(sigma) + log_h;
}

std::vector<double> MaximizeLogEi(const SearchSpace& space, const GaussianProcess& gp, double best,
                                  const std::vector<Point>& incumbents,
                                  const std::function<bool(const Point&)>& taken,
                                  const AcquisitionBudget& budget, std::mt19937_64& rng) {
  std::vector<Point> candidates;
  for (int i = 0; i < budget.candidates; ++i) candidates.push_back(RandomPoint(space, rng));
  for (const Point& inc : incumbents) {
    for (int i = 0; i < budget.local_per_best; ++i) {
      double sigma = i % 2 == 0 ? 0.02 : 0.1;  // Fine and coarse neighbourhoods.
      candidates.push_back(Perturb(space, inc, sigma, rng));
    }
  }
  candidates.erase(std::remove_if(candidates.begin(), candidates.end(), taken), candidates.end());
  if (candidates.empty()) return {};
  std::vector<double> scores = Score(gp, best, candidates);
  std::vector<size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t starts = std::min(order.size(), static_cast<size_t>(budget.starts));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(starts), order.end(),
                    [&](size_t a, size_t b) { return scores[a] > scores[b]; });

  Point best_point = candidates[order[0]];
  double best_score = scores[order[0]];
  for (size_t s = 0; s < starts; ++s) {
    Point x = candidates[order[s]];
    double score = scores[order[s]];
    for (int round = 0; round < budget.rounds; ++round) {
      Point before = x;
      RefineContinuous(space, gp, best, budget.lbfgs_evals, &x);
      double refined = Score(gp, best, {x})[0];
      if (taken(x) || !(refined >= score)) {
        x = before;
      } else {
        score = refined;
      }
      SweepDiscrete(space, gp, best, taken, static_cast<size_t>(std::max(budget.sweep_points, 1)),
                    rng, &x, &score);
    }
    if (score > best_score) {
      best_score = score;
      best_point = x;
    }
  }
  return best_point;
}

}  // namespace ty::tuning
