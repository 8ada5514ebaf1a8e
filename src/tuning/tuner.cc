#include "tuning/tuner.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <set>

#include "tuning/acquisition.h"
#include "tuning/output_warp.h"
#include "tuning/quasi_random.h"

namespace ty::tuning {

namespace {

using Point = std::vector<double>;

// Hyperparameters are fitted on at most this many observations (the best ones and an
// even spread of the rest); the model then conditions on all of them. This keeps a
// suggestion after 500 trials in tens of milliseconds, where a full fit costs
// seconds, and the length scales barely move once the data are that dense.
constexpr size_t kMaxFitPoints = 120;
constexpr size_t kBestInFitSubset = 50;
constexpr int kIncumbents = 5;
// After this many observations a fit starts from the previous one and the prior mode
// only (see FitModel).
constexpr size_t kSettledAfter = 40;
// The work of one call is bounded by the model, not by the request: 1,000 parallel
// trials once asked for 1,000 model-picked points in a call, each with every earlier
// one believed. The model picks at most kMaxGuided points per call, fewer where one
// costs more than kGuidedWork / kMaxGuided (points scored x model size x dimensions;
// hartmann6 after 120 trials: 32 a call, 100 categorical parameters: 2), and is told
// of at most kMaxBelieved pending ones (the latest); the rest of a larger batch fills
// the space quasi-randomly, which is what a believer batch that size tends to anyway.
constexpr int kMaxGuided = 32;
constexpr size_t kMaxBelieved = 64;
constexpr double kGuidedWork = 1e9;

uint64_t Mix(uint64_t x) {  // SplitMix64's finaliser.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A key for exact comparison of encoded points (NaN is not ordered).
Point KeyOf(Point x) {
  for (double& v : x) {
    if (std::isnan(v)) v = -1;
  }
  return x;
}

Eigen::MatrixXd Rows(const std::vector<Point>& points, const std::vector<size_t>& which) {
  Eigen::MatrixXd m(static_cast<Eigen::Index>(which.size()),
                    static_cast<Eigen::Index>(points.empty() ? 0 : points[0].size()));
  for (size_t i = 0; i < which.size(); ++i) {
    for (size_t d = 0; d < points[which[i]].size(); ++d) {
      m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(d)) = points[which[i]][d];
    }
  }
  return m;
}

AcquisitionBudget BudgetFor(size_t n) {
  AcquisitionBudget b;
  const double n2 = static_cast<double>(n * n) + 1;
  b.candidates = static_cast<int>(std::clamp(2.5e8 / n2, 400.0, 2000.0));
  b.local_per_best = static_cast<int>(std::clamp(5e7 / n2, 40.0, 100.0));
  b.lbfgs_evals = n > 300 ? 25 : 40;
  b.sweep_points = static_cast<int>(std::clamp(5e8 / n2, 256.0, 2048.0));
  return b;
}

// The rows a fit uses: all while there are at most kMaxFitPoints, else the
// kBestInFitSubset best and an even spread of the rest, so a long study's fit stays
// cheap and keeps the region that matters.
std::vector<size_t> FitRows(const Eigen::VectorXd& y) {
  std::vector<size_t> all(static_cast<size_t>(y.size()));
  std::iota(all.begin(), all.end(), 0);
  if (all.size() <= kMaxFitPoints) return all;
  std::vector<size_t> by_value = all;
  std::sort(by_value.begin(), by_value.end(), [&](size_t a, size_t b) {
    return y(static_cast<Eigen::Index>(a)) > y(static_cast<Eigen::Index>(b));
  });
  std::vector<size_t> fit_rows(by_value.begin(), by_value.begin() + kBestInFitSubset);
  const size_t rest = all.size() - kBestInFitSubset;
  const size_t want = kMaxFitPoints - kBestInFitSubset;
  for (size_t k = 0; k < want; ++k)
    fit_rows.push_back(by_value[kBestInFitSubset + k * rest / want]);
  return fit_rows;
}

// How many points the model may pick in one call: at most kMaxGuided, fewer where
// one costs more than kGuidedWork / kMaxGuided.
int MaxGuidedPoints(const AcquisitionBudget& budget, size_t observations, size_t dims) {
  const double work_each = static_cast<double>(budget.PointsScored(kIncumbents)) *
                           static_cast<double>(observations + kMaxBelieved) *
                           static_cast<double>(std::max<size_t>(dims, 1));
  return static_cast<int>(
      std::clamp(kGuidedWork / work_each, 1.0, static_cast<double>(kMaxGuided)));
}

// Kriging believer: a pending point is taken to return the model's mean there. The
// incumbent rises with a believed value above it; otherwise log EI would still see
// a sure improvement at the believed point and propose it again.
void Believe(GaussianProcess& gp, double& incumbent, const Point& x) {
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::VectorXd m, v;
  gp.PredictBatch(Eigen::Map<const Eigen::RowVectorXd>(x.data(), n), &m, &v);
  gp.Append(Eigen::Map<const Eigen::VectorXd>(x.data(), n), m(0));
  incumbent = std::max(incumbent, m(0));
}

}  // namespace

Tuner::Tuner(SearchSpace space, StudyOptions options)
    : space_(std::move(space)), options_(options) {}

Result<Tuner> Tuner::Create(SearchSpace space, StudyOptions options) {
  if (options.algorithm == Algorithm::kGrid && !space.AllDiscrete()) {
    return InvalidArgument(
        "GRID_SEARCH needs every parameter to be INTEGER, CATEGORICAL or DISCRETE");
  }
  options.parallel = std::max(options.parallel, 1);
  options.max_trials = std::max(options.max_trials, 1);
  return Tuner(std::move(space), options);
}

void Tuner::Observe(Observation observation) {
  encoded_.push_back(space_.Encode(observation.params));
  observations_.push_back(std::move(observation));
}

int Tuner::InitialPoints() const {
  // Enough to fit length scales at all, few enough to leave most of a small budget
  // to the model; a parallel study needs at least one full first batch.
  int by_dims = static_cast<int>(space_.size()) + 2;
  int by_budget = std::max(options_.max_trials / 5, 3);
  return std::max(std::min(std::clamp(by_dims, 4, 10), by_budget), options_.parallel);
}

std::set<Point> Tuner::Seen(const std::vector<Point>& pending) const {
  std::set<Point> seen;
  for (const Point& x : encoded_) seen.insert(KeyOf(x));
  for (const Point& x : pending) seen.insert(KeyOf(x));
  return seen;
}

std::vector<Assignment> Tuner::Suggest(int count, const std::vector<Assignment>& pending) {
  switch (options_.algorithm) {
    case Algorithm::kGrid:
      return SuggestGrid(count, pending);
    case Algorithm::kRandom:
      return SuggestRandom(count, pending, /*quasi=*/false);
    case Algorithm::kBayesian:
      return SuggestBayesian(count, pending);
  }
  return {};
}

std::vector<Assignment> Tuner::SuggestGrid(int count, const std::vector<Assignment>& pending) {
  std::set<Point> taken;
  for (const Point& x : encoded_) taken.insert(KeyOf(x));
  for (const auto& p : pending) taken.insert(KeyOf(space_.Encode(p)));
  std::vector<Assignment> out;
  // Depth-first over the dimensions in order (parents before their children), so an
  // inactive child contributes one NaN instead of multiplying the grid.
  Point x(space_.size(), std::nan(""));
  std::function<void(size_t)> walk = [&](size_t d) {
    if (static_cast<int>(out.size()) >= count) return;
    if (d == space_.size()) {
      if (taken.insert(KeyOf(x)).second) out.push_back(space_.Decode(x));
      return;
    }
    if (!space_.IsActive(x, d)) {
      x[d] = std::nan("");
      walk(d + 1);
      return;
    }
    const Dim& dim = space_.Dims()[d];
    std::vector<double> values = dim.levels;
    if (dim.spec.type == ParamType::kCategorical) {
      values.resize(dim.spec.categories.size());
      std::iota(values.begin(), values.end(), 0.0);
    }
    for (double v : values) {
      x[d] = v;
      walk(d + 1);
    }
  };
  walk(0);
  return out;
}

std::vector<Assignment> Tuner::SuggestRandom(int count, const std::vector<Assignment>& pending,
                                             bool quasi) {
  std::vector<Point> others;
  for (const auto& p : pending) others.push_back(space_.Encode(p));
  const uint64_t drawn = observations_.size() + pending.size();
  ScrambledHalton halton(space_.size(), options_.seed);
  halton.Skip(drawn);
  std::mt19937_64 rng(Mix(options_.seed ^ Mix(drawn)));
  std::set<Point> seen = Seen(others);
  std::vector<Assignment> out;
  // Bounded: a finite space may run out of unseen points.
  for (int attempt = 0; static_cast<int>(out.size()) < count && attempt < 64 * count; ++attempt) {
    Point u = quasi ? halton.Next() : Point(space_.size());
    if (!quasi) {
      for (double& v : u) v = Uniform01(rng);
    }
    Point x = space_.FromCube(u);
    if (space_.AllDiscrete() && !seen.insert(KeyOf(x)).second) continue;
    out.push_back(space_.Decode(x));
  }
  return out;
}

GaussianProcess Tuner::FitModel(double* incumbent, std::vector<Point>* incumbents) {
  const int sign = options_.goal == Goal::kMaximize ? 1 : -1;
  std::vector<size_t> feasible;
  std::vector<double> raw;
  for (size_t i = 0; i < observations_.size(); ++i) {
    if (observations_[i].value.has_value()) {
      feasible.push_back(i);
      raw.push_back(sign * *observations_[i].value);
    }
  }
  std::vector<double> warped = WarpOutputs(raw);
  const double worst = warped.empty() ? 0 : *std::min_element(warped.begin(), warped.end());
  Eigen::VectorXd y = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(encoded_.size()), worst);
  for (size_t k = 0; k < feasible.size(); ++k)
    y(static_cast<Eigen::Index>(feasible[k])) = warped[k];

  std::vector<size_t> all(encoded_.size());
  std::iota(all.begin(), all.end(), 0);
  const std::vector<size_t> fit_rows = FitRows(y);
  std::vector<bool> categorical;
  for (const Dim& d : space_.Dims()) categorical.push_back(d.spec.type == ParamType::kCategorical);
  GaussianProcess gp(categorical);
  Eigen::VectorXd y_fit(static_cast<Eigen::Index>(fit_rows.size()));
  for (size_t i = 0; i < fit_rows.size(); ++i)
    y_fit(static_cast<Eigen::Index>(i)) = y(static_cast<Eigen::Index>(fit_rows[i]));
  // Early on the fit decides everything and costs nothing: every start. Later the
  // previous fit is a good start and the model changes little per observation.
  std::vector<GpHyper> starts;
  if (last_fit_.has_value()) starts.push_back(*last_fit_);
  const bool settled = last_fit_.has_value() && encoded_.size() > kSettledAfter;
  if (settled) {
    starts.push_back(gp.PriorMode());
  } else {
    for (const GpHyper& h : gp.ColdStarts()) starts.push_back(h);
  }
  gp.Fit(Rows(encoded_, fit_rows), y_fit, starts, settled ? 30 : 50);
  last_fit_ = gp.hyper();
  gp.SetData(Rows(encoded_, all), y);

  // The incumbent is the best posterior mean at a feasible observed point: with noisy
  // observations the luckiest value would make every improvement look hopeless.
  Eigen::VectorXd mean, var;
  gp.PredictBatch(Rows(encoded_, feasible), &mean, &var);
  std::vector<size_t> order(feasible.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return mean(static_cast<Eigen::Index>(a)) > mean(static_cast<Eigen::Index>(b));
  });
  *incumbent = order.empty() ? 0 : mean(static_cast<Eigen::Index>(order[0]));
  for (size_t k = 0; k < order.size() && k < static_cast<size_t>(kIncumbents); ++k) {
    incumbents->push_back(encoded_[feasible[order[k]]]);
  }
  return gp;
}

std::vector<Assignment> Tuner::SuggestBayesian(int count, const std::vector<Assignment>& pending) {
  std::vector<Point> others;
  for (const auto& p : pending) others.push_back(space_.Encode(p));
  std::set<Point> seen = Seen(others);
  std::vector<Assignment> out;
  ScrambledHalton halton(space_.size(), options_.seed);
  halton.Skip(observations_.size() + others.size());
  int misses = 0;  // A small discrete space may have few unseen points left.
  // Quasi-random points while `more()`; false when the space seems used up.
  auto fill = [&](const std::function<bool()>& more) {
    while (static_cast<int>(out.size()) < count && misses < 64 && more()) {
      Point x = space_.FromCube(halton.Next());
      if (!seen.insert(KeyOf(x)).second) {
        ++misses;
        continue;
      }
      others.push_back(x);
      out.push_back(space_.Decode(x));
    }
    return misses < 64;
  };
  const int initial = InitialPoints();
  const size_t feasible = static_cast<size_t>(std::count_if(
      observations_.begin(), observations_.end(), [](const Observation& o) { return o.value; }));
  if (!fill([&] {
        return static_cast<int>(observations_.size() + others.size()) < initial || feasible < 2;
      }) ||
      static_cast<int>(out.size()) == count) {
    return out;
  }

  double incumbent = 0;
  std::vector<Point> incumbents;
  GaussianProcess gp = FitModel(&incumbent, &incumbents);
  size_t believed = 0;
  for (size_t i = others.size() - std::min(others.size(), kMaxBelieved); i < others.size(); ++i) {
    Believe(gp, incumbent, others[i]);
    ++believed;
  }
  std::mt19937_64 rng(Mix(options_.seed ^ Mix(observations_.size() * 1000003 + others.size())));
  const AcquisitionBudget budget = BudgetFor(observations_.size());
  auto taken = [&seen](const Point& x) { return seen.count(KeyOf(x)) > 0; };
  const int max_guided = MaxGuidedPoints(budget, observations_.size(), space_.size());
  for (int guided = 0; static_cast<int>(out.size()) < count && guided < max_guided; ++guided) {
    Point x = MaximizeLogEi(space_, gp, incumbent, incumbents, taken, budget, rng);
    if (x.empty()) return out;
    if (believed++ < kMaxBelieved) Believe(gp, incumbent, x);
    seen.insert(KeyOf(x));
    out.push_back(space_.Decode(x));
  }
  fill([] { return true; });
  return out;
}

}  // namespace ty::tuning
