// A Gaussian-process model of the objective over encoded points (search_space.h):
// Matérn-5/2 kernel with one length scale per dimension (ARD), a signal variance and
// an observation-noise variance, fitted by maximising the marginal likelihood plus
// log-priors (maximum a posteriori) with NLopt's L-BFGS and analytic gradients.
//
// Distances per dimension: numeric coordinates differ by their unit distance;
// categories by 0 (same) or 1 (different); a coordinate inactive in one point and
// active in the other by 1, inactive in both by 0 (conditional parameters).
//
// Targets are expected standardised (mean 0, variance about 1) by the caller. Not
// thread-safe; cheap to copy (a batch suggestion copies it to add fantasies).
#pragma once

#include <Eigen/Dense>
#include <vector>

namespace ty::tuning {

struct GpHyper {
  std::vector<double> log_lengthscale;  // One per dimension.
  double log_signal = 0;                // log of the signal variance.
  double log_noise = -4;                // log of the noise variance.
};

class GaussianProcess {
 public:
  // `categorical[d]` marks dimensions compared by equality.
  explicit GaussianProcess(std::vector<bool> categorical);

  // The prior's centre: where fitting starts without a previous fit.
  GpHyper PriorMode() const;
  // Starting points for a fit without a previous one: the prior mode and two with
  // little noise (short and medium length scales).
  std::vector<GpHyper> ColdStarts() const;
  // MAP fit of the hyperparameters on (x, y): L-BFGS from each start, at most
  // `max_evals` likelihood evaluations each; the best end point wins. Then conditions
  // on the same data (SetData).
  void Fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, const std::vector<GpHyper>& starts,
           int max_evals);
  // Conditions on (x, y) with the current hyperparameters.
  void SetData(const Eigen::MatrixXd& x, const Eigen::VectorXd& y);
  // Adds one observation to the conditioning set in O(n^2) (batch fantasies).
  void Append(const Eigen::VectorXd& x, double y);

  // Posterior mean and latent variance at each row of `xs`.
  void PredictBatch(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean, Eigen::VectorXd* var) const;
  // Mean and variance at `x` with their gradients over the numeric coordinates that
  // are active (the others' entries are 0).
  void PredictWithGradient(const Eigen::VectorXd& x, double* mean, double* var,
                           Eigen::VectorXd* dmean, Eigen::VectorXd* dvar) const;

  const GpHyper& hyper() const { return hyper_; }
  void set_hyper(const GpHyper& h) { hyper_ = h; }
  int size() const { return static_cast<int>(x_.rows()); }
  // The negative log posterior of the hyperparameters (objective of Fit) and its
  // gradient, in the order [lengthscales..., signal, noise]. Exposed for tests.
  double NegLogPosterior(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                         const std::vector<double>& theta, std::vector<double>* grad) const;
  // The same over per-dimension squared distances (SquaredDeltas), computed once a fit.
  double NegLogPosteriorOn(const std::vector<Eigen::MatrixXd>& sq, const Eigen::VectorXd& y,
                           const std::vector<double>& theta, std::vector<double>* grad) const;
  std::vector<Eigen::MatrixXd> SquaredDeltas(const Eigen::MatrixXd& x) const;

 private:
  double Delta(size_t d, double a, double b) const;
  std::vector<double> InverseSquaredLengths() const;
  // Kernel matrix between the rows of `a` and of `b`.
  Eigen::MatrixXd Kernel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) const;
  void Factor();

  std::vector<bool> categorical_;
  GpHyper hyper_;
  Eigen::MatrixXd x_;
  Eigen::VectorXd y_;
  Eigen::MatrixXd chol_;      // Lower Cholesky factor L of K + noise I.
  Eigen::MatrixXd chol_inv_;  // L^-1.
  Eigen::VectorXd alpha_;     // (K + noise I)^-1 y.
};

}  // namespace ty::tuning
