// Makes observed objective values fit for a Gaussian-process model: standardised,
// then Yeo-Johnson power-transformed with the exponent of highest likelihood, then
// standardised again. Heavy-tailed objectives (Rosenbrock-like valleys, losses that
// explode for bad settings) otherwise let a few huge values set the model's scale
// and flatten everything near the optimum. Monotone, so the best stays best. Pure.
#pragma once

#include <vector>

namespace ty::tuning {

// Transformed values, in the order given; returns them standardised (mean 0, sd 1
// unless all values are equal, then all 0).
std::vector<double> WarpOutputs(const std::vector<double>& values);

// Yeo-Johnson transform of one value (exposed for tests).
double YeoJohnson(double y, double lambda);

}  // namespace ty::tuning
