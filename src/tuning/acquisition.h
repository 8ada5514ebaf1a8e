// Log expected improvement and its maximisation over a mixed search space.
//
// LogEI (Ament et al. 2023) keeps the acquisition informative far from the incumbent,
// where plain EI underflows to 0 and its gradient vanishes. The maximiser never
// rounds one random sample: it scores many candidates (uniform samples of the space
// and perturbations of the best points seen), then from the best few alternates
// L-BFGS steps over the active DOUBLE coordinates with exact sweeps over each
// INTEGER, DISCRETE and CATEGORICAL coordinate (every level when there are few, the
// neighbourhood and a sample of the rest otherwise). Pure given its random generator.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "tuning/gaussian_process.h"
#include "tuning/search_space.h"

namespace ty::tuning {

// log EI of a maximisation at posterior (mean, var) over the incumbent `best`, with
// the derivatives of the log over mean and variance.
double LogExpectedImprovement(double mean, double var, double best, double* dmean = nullptr,
                              double* dvar = nullptr);

struct AcquisitionBudget {
  int candidates = 2000;     // Random candidates scored in one batch.
  int local_per_best = 100;  // Perturbations around each of the best points.
  int starts = 5;            // Candidates refined by local search.
  int lbfgs_evals = 40;      // Per start and round.
  int rounds = 2;            // Continuous / discrete alternations.
  int sweep_points = 2048;   // Points one discrete sweep scores at most.

  // Points one MaximizeLogEi scores at most, roughly: its cost is this times the
  // model's size times the dimensions.
  int64_t PointsScored(int incumbents) const {
    return candidates + static_cast<int64_t>(local_per_best) * incumbents +
           static_cast<int64_t>(starts) * rounds * (sweep_points + lbfgs_evals);
  }
};

// The point maximising log EI; `taken` says a point must not be proposed (already
// observed or pending on a discrete space). Returns an empty vector when every
// candidate is taken.
std::vector<double> MaximizeLogEi(const SearchSpace& space, const GaussianProcess& gp, double best,
                                  const std::vector<std::vector<double>>& incumbents,
                                  const std::function<bool(const std::vector<double>&)>& taken,
                                  const AcquisitionBudget& budget, std::mt19937_64& rng);

}  // namespace ty::tuning
