// The suggestion side of a study: given the search space, what was observed and what
// is still running, which trials to run next.
//
//   ALGORITHM_UNSPECIFIED (Bayesian): scrambled-Halton start, then a Gaussian process
//     (gaussian_process.h) on warped outputs (output_warp.h) and log EI maximised over
//     the mixed space (acquisition.h). Batches and running trials are handled by the
//     kriging believer: each pending point is added with the model's mean as its
//     value, which collapses the uncertainty there and spreads the batch out.
//   RANDOM_SEARCH: independent uniform samples under each parameter's scale.
//   GRID_SEARCH: every combination of the (all discrete) values in order; a study
//     asking for more trials than the grid has gets the grid once.
//
// Infeasible and failed trials are kept: the model sees them at the worst observed
// value, and their points are never proposed again as if unknown. Suggestions on
// spaces with finitely many points are never repeats of observed or pending ones.
//
// Randomness comes only from the seed and the history: the generator of a call is
// seeded from (seed, observations, pending), so a study rebuilt after a restart
// suggests what it would have. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tuning/gaussian_process.h"
#include "tuning/search_space.h"

namespace ty::tuning {

using model::Algorithm;
using model::AlgorithmName;
using model::Goal;
using model::ParseAlgorithm;

struct StudyOptions {
  Goal goal = Goal::kMaximize;
  Algorithm algorithm = Algorithm::kBayesian;
  int max_trials = 1;
  int parallel = 1;
  uint64_t seed = 0;
};

struct Observation {
  Assignment params;
  std::optional<double> value;  // nullopt: infeasible or failed.
};

class Tuner {
 public:
  // GRID_SEARCH on a space with DOUBLE parameters is refused here.
  static Result<Tuner> Create(SearchSpace space, StudyOptions options);

  // Up to `count` new assignments; fewer when a finite space is exhausted.
  std::vector<Assignment> Suggest(int count, const std::vector<Assignment>& pending);
  void Observe(Observation observation);

  const SearchSpace& space() const { return space_; }
  const StudyOptions& options() const { return options_; }
  size_t observed() const { return observations_.size(); }

 private:
  Tuner(SearchSpace space, StudyOptions options);
  int InitialPoints() const;
  std::vector<Assignment> SuggestGrid(int count, const std::vector<Assignment>& pending);
  std::vector<Assignment> SuggestRandom(int count, const std::vector<Assignment>& pending,
                                        bool quasi);
  std::vector<Assignment> SuggestBayesian(int count, const std::vector<Assignment>& pending);
  GaussianProcess FitModel(double* incumbent, std::vector<std::vector<double>>* incumbents);
  // Exact keys of every observed and pending point (de-duplication).
  std::set<std::vector<double>> Seen(const std::vector<std::vector<double>>& pending) const;

  SearchSpace space_;
  StudyOptions options_;
  std::vector<Observation> observations_;
  std::vector<std::vector<double>> encoded_;  // Of observations_, same order.
  std::optional<GpHyper> last_fit_;           // Warm start of the next fit.
};

}  // namespace ty::tuning
