#include "tuning/early_stopping.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ty::tuning {

namespace {

// "better" in the study's direction.
bool Better(Goal goal, double a, double b) { return goal == Goal::kMaximize ? a > b : a < b; }

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

StopDecision Median(Goal goal, const TrialCurve& running, const std::vector<TrialCurve>& done) {
  const double at = running.points.back().x;
  std::vector<double> averages;
  for (const TrialCurve& c : done) {
    double sum = 0;
    size_t n = 0;
    for (const CurvePoint& p : c.points) {
      if (p.x > at) break;
      sum += p.value;
      ++n;
    }
    if (n > 0) averages.push_back(sum / static_cast<double>(n));
  }
  if (averages.size() < kMinCompleted) return {};
  std::sort(averages.begin(), averages.end());
  const size_t h = averages.size() / 2;
  const double median =
      averages.size() % 2 == 1 ? averages[h] : (averages[h - 1] + averages[h]) / 2;
  double best = running.points.front().value;
  for (const CurvePoint& p : running.points) {
    if (Better(goal, p.value, best)) best = p.value;
  }
  if (!Better(goal, median, best)) return {};
  return {true, "its best value " + Num(best) + " by step " + Num(at) +
                    " is worse than the median " + Num(median) +
                    " of completed trials' running averages there"};
}

struct DecayFit {
  double level = 0;     // Predicted value at the end of the span.
  double residual = 0;  // Root-mean-square error of the fit.
};

// Least squares of y = a + b exp(-k t) with t = x / span, over a grid of k.
DecayFit FitDecay(const std::vector<CurvePoint>& points, double span) {
  DecayFit best{points.back().value, INFINITY};
  for (int i = 0; i <= 40; ++i) {
    const double k = 0.25 * std::pow(2.0, i * 0.2);  // 0.25 .. 64
    double sz = 0, sz2 = 0, sy = 0, szy = 0;
    const double n = static_cast<double>(points.size());
    for (const CurvePoint& p : points) {
      double z = std::exp(-k * p.x / span);
      sz += z, sz2 += z * z, sy += p.value, szy += z * p.value;
    }
    const double det = n * sz2 - sz * sz;
    if (std::abs(det) < 1e-12) continue;
    const double b = (n * szy - sz * sy) / det;
    const double a = (sy - b * sz) / n;
    double sse = 0;
    for (const CurvePoint& p : points) {
      double e = a + b * std::exp(-k * p.x / span) - p.value;
      sse += e * e;
    }
    const double rms = std::sqrt(sse / n);
    if (rms < best.residual) best = {a + b * std::exp(-k), rms};
  }
  return best;
}

StopDecision Decay(Goal goal, const TrialCurve& running, const std::vector<TrialCurve>& done) {
  if (done.size() < kMinCompleted) return {};
  double span = 0;
  double best_final = done.front().final_value;
  for (const TrialCurve& c : done) {
    if (!c.points.empty()) span = std::max(span, c.points.back().x);
    if (Better(goal, c.final_value, best_final)) best_final = c.final_value;
  }
  if (!(span > 0) || running.points.back().x >= span) return {};
  DecayFit fit = FitDecay(running.points, span);
  const double margin = std::max(fit.residual, 1e-12);
  const double optimistic = goal == Goal::kMaximize ? fit.level + margin : fit.level - margin;
  if (!Better(goal, best_final, optimistic)) return {};
  return {true, "its learning curve levels off near " + Num(fit.level) +
                    ", worse than the best completed trial's " + Num(best_final)};
}

}  // namespace

StopDecision ShouldStop(StoppingRule rule, Goal goal, const TrialCurve& running,
                        const std::vector<TrialCurve>& completed) {
  if (rule == StoppingRule::kNone || running.points.size() < kMinMeasurements) return {};
  return rule == StoppingRule::kMedian ? Median(goal, running, completed)
                                       : Decay(goal, running, completed);
}

}  // namespace ty::tuning
