#include "tuning/output_warp.h"

#include <cmath>
#include <limits>

namespace ty::tuning {

namespace {

std::vector<double> Standardise(const std::vector<double>& v) {
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  double sd = std::sqrt(var / static_cast<double>(v.size()));
  std::vector<double> out(v.size(), 0.0);
  if (!(sd > 1e-12)) return out;
  for (size_t i = 0; i < v.size(); ++i) out[i] = (v[i] - mean) / sd;
  return out;
}

// Profile log-likelihood of a normal fit to the transformed values, with the
// transform's Jacobian.
double LogLikelihood(const std::vector<double>& y, double lambda) {
  double mean = 0, jacobian = 0;
  std::vector<double> t(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    t[i] = YeoJohnson(y[i], lambda);
    mean += t[i];
    jacobian += std::copysign(1.0, y[i]) * std::log1p(std::abs(y[i]));
  }
  mean /= static_cast<double>(y.size());
  double var = 0;
  for (double x : t) var += (x - mean) * (x - mean);
  var /= static_cast<double>(y.size());
  if (!(var > 1e-300) || !std::isfinite(var)) return -std::numeric_limits<double>::infinity();
  return -0.5 * static_cast<double>(y.size()) * std::log(var) + (lambda - 1) * jacobian;
}

}  // namespace

double YeoJohnson(double y, double lambda) {
  if (y >= 0) {
    return std::abs(lambda) < 1e-9 ? std::log1p(y) : (std::pow(y + 1, lambda) - 1) / lambda;
  }
  return std::abs(lambda - 2) < 1e-9 ? -std::log1p(-y)
                                     : -(std::pow(1 - y, 2 - lambda) - 1) / (2 - lambda);
}

std::vector<double> WarpOutputs(const std::vector<double>& values) {
  std::vector<double> y = Standardise(values);
  if (y.size() < 3) return y;
  double best_lambda = 1, best = LogLikelihood(y, 1);
  for (int i = 0; i <= 40; ++i) {
    double lambda = -2 + 0.1 * i;
    double ll = LogLikelihood(y, lambda);
    if (ll > best) {
      best = ll;
      best_lambda = lambda;
    }
  }
  for (double& v : y) v = YeoJohnson(v, best_lambda);
  return Standardise(y);
}

}  // namespace ty::tuning
