// Automated early stopping of running trials, from intermediate measurements.
//
//   Median rule (Vertex medianAutomatedStoppingSpec): a trial stops when its best
//     value so far is worse than the median, over completed trials, of their running
//     averages up to the same step (or elapsed time).
//   Decay-curve rule (Vertex decayCurveStoppingSpec; ml v1 enableTrialEarlyStopping):
//     the trial's curve is fitted with a saturating exponential a + b exp(-k t) over
//     the completed trials' span; it stops when the level it is heading for is worse
//     than the best completed trial's final value by more than the fit's residual.
//
// Both need at least kMinCompleted completed trials to compare with, and a running
// trial is never stopped before its kMinMeasurements-th measurement. Pure.
#pragma once

#include <string>
#include <vector>

#include "tuning/tuner.h"

namespace ty::tuning {

using model::StoppingRule;

inline constexpr size_t kMinCompleted = 3;
inline constexpr size_t kMinMeasurements = 3;

struct CurvePoint {
  double x = 0;  // Step, or seconds since the trial started (useElapsedDuration).
  double value = 0;
};

struct TrialCurve {
  std::vector<CurvePoint> points;  // In increasing x.
  double final_value = 0;          // Completed trials: the value the study counted.
};

struct StopDecision {
  bool stop = false;
  std::string reason;  // Why, for the trial's log and describe.
};

StopDecision ShouldStop(StoppingRule rule, Goal goal, const TrialCurve& running,
                        const std::vector<TrialCurve>& completed);

}  // namespace ty::tuning
