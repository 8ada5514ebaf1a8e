// The Gaussian process, log EI, the output warp and early stopping.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tuning/acquisition.h"
#include "tuning/early_stopping.h"
#include "tuning/gaussian_process.h"
#include "tuning/output_warp.h"

namespace ty::tuning {
namespace {

struct Data {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

// 14 points in 3-D; the last coordinate is categorical (0, 1, 2) and NaN (inactive)
// in a few rows, so every branch of the distance is exercised.
Data Sample() {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(0, 1);
  Data d{Eigen::MatrixXd(14, 3), Eigen::VectorXd(14)};
  for (int i = 0; i < 14; ++i) {
    d.x(i, 0) = u(rng);
    d.x(i, 1) = u(rng);
    d.x(i, 2) = i % 5 == 0 ? NAN : static_cast<double>(i % 3);
    d.y(i) = std::sin(4 * d.x(i, 0)) + d.x(i, 1) * d.x(i, 1) + 0.3 * (i % 3);
  }
  d.y.array() -= d.y.mean();
  return d;
}

TEST(GaussianProcessTest, LikelihoodGradientMatchesFiniteDifferences) {
  Data d = Sample();
  GaussianProcess gp({false, false, true});
  std::vector<double> theta = {-0.7, 0.3, 0.1, 0.2, -3.0}, grad;
  const double f0 = gp.NegLogPosterior(d.x, d.y, theta, &grad);
  ASSERT_EQ(grad.size(), theta.size());
  for (size_t j = 0; j < theta.size(); ++j) {
    std::vector<double> up = theta, down = theta;
    up[j] += 1e-5;
    down[j] -= 1e-5;
    double numeric =
        (gp.NegLogPosterior(d.x, d.y, up, nullptr) - gp.NegLogPosterior(d.x, d.y, down, nullptr)) /
        2e-5;
    EXPECT_NEAR(grad[j], numeric, 1e-4 * std::max(1.0, std::abs(numeric))) << "theta " << j;
  }
  EXPECT_TRUE(std::isfinite(f0));
}

TEST(GaussianProcessTest, PredictionGradientsMatchFiniteDifferences) {
  Data d = Sample();
  GaussianProcess gp({false, false, true});
  gp.Fit(d.x, d.y, gp.ColdStarts(), 60);
  Eigen::VectorXd x(3);
  x << 0.31, 0.77, 1;
  double m = 0, v = 0;
  Eigen::VectorXd dm, dv;
  gp.PredictWithGradient(x, &m, &v, &dm, &dv);
  for (int k = 0; k < 2; ++k) {
    Eigen::VectorXd up = x, down = x;
    up(k) += 1e-6;
    down(k) -= 1e-6;
    double mu = 0, vu = 0, md = 0, vd = 0;
    Eigen::VectorXd a, b;
    gp.PredictWithGradient(up, &mu, &vu, &a, &b);
    gp.PredictWithGradient(down, &md, &vd, &a, &b);
    EXPECT_NEAR(dm(k), (mu - md) / 2e-6, 1e-4);
    EXPECT_NEAR(dv(k), (vu - vd) / 2e-6, 1e-4);
  }
  EXPECT_EQ(dm(2), 0.0);  // Categories are not moved by gradient steps.
  // The batch path agrees with the single-point one.
  Eigen::VectorXd bm, bv;
  gp.PredictBatch(x.transpose(), &bm, &bv);
  EXPECT_NEAR(bm(0), m, 1e-10);
  EXPECT_NEAR(bv(0), v, 1e-10);
}

TEST(GaussianProcessTest, AppendingAPointEqualsConditioningOnItFromScratch) {
  Data d = Sample();
  GaussianProcess a({false, false, true});
  a.Fit(d.x.topRows(13), d.y.head(13), a.ColdStarts(), 40);
  GaussianProcess b = a;
  a.Append(d.x.row(13).transpose(), d.y(13));
  b.SetData(d.x, d.y);
  Eigen::MatrixXd probe(2, 3);
  probe << 0.5, 0.5, 0, 0.1, 0.9, NAN;
  Eigen::VectorXd ma, va, mb, vb;
  a.PredictBatch(probe, &ma, &va);
  b.PredictBatch(probe, &mb, &vb);
  EXPECT_NEAR((ma - mb).norm(), 0, 1e-8);
  EXPECT_NEAR((va - vb).norm(), 0, 1e-8);
}

TEST(GaussianProcessTest, AFitExplainsStructureNotNoise) {
  // A noiseless smooth function: the fit must not call it noise.
  Eigen::MatrixXd x(12, 1);
  Eigen::VectorXd y(12);
  for (int i = 0; i < 12; ++i) {
    x(i, 0) = i / 11.0;
    y(i) = std::sin(6 * x(i, 0));
  }
  const double mean = y.mean();
  y.array() -= mean;
  GaussianProcess gp({false});
  gp.Fit(x, y, gp.ColdStarts(), 80);
  EXPECT_LT(std::exp(gp.hyper().log_noise), 1e-2);
  Eigen::MatrixXd probe(1, 1);
  probe << 0.5;
  Eigen::VectorXd m, v;
  gp.PredictBatch(probe, &m, &v);
  EXPECT_NEAR(m(0), std::sin(3.0) - mean, 0.05);
}

TEST(LogExpectedImprovementTest, IsSmoothAcrossTheAsymptoticBranchWithExactDerivatives) {
  // The direct and Mills-ratio forms meet at z = -3 without a jump.
  double slope = 0;
  LogExpectedImprovement(-3, 1, 0, &slope);
  double below = LogExpectedImprovement(-3.0001, 1, 0);
  double above = LogExpectedImprovement(-2.9999, 1, 0);
  EXPECT_NEAR(above - below, 0.0002 * slope, 1e-8);
  EXPECT_TRUE(std::isfinite(LogExpectedImprovement(-40, 1, 0)));
  EXPECT_LT(LogExpectedImprovement(-40, 1, 0), -800);
  for (double mean : {-9.0, -3.0, 0.2, 2.0}) {
    for (double var : {0.04, 1.0}) {
      double dm = 0, dv = 0;
      double f = LogExpectedImprovement(mean, var, 0.5, &dm, &dv);
      EXPECT_NEAR(dm, (LogExpectedImprovement(mean + 1e-6, var, 0.5) - f) / 1e-6,
                  1e-3 * std::max(1.0, std::abs(dm)));
      EXPECT_NEAR(dv, (LogExpectedImprovement(mean, var + 1e-7, 0.5) - f) / 1e-7,
                  1e-3 * std::max(1.0, std::abs(dv)));
    }
  }
}

TEST(OutputWarpTest, KeepsTheOrderAndStandardises) {
  std::vector<double> raw = {1, 2, 3, 1000, 5, -2, 7, 4};
  std::vector<double> w = WarpOutputs(raw);
  double mean = 0, var = 0;
  for (double v : w) mean += v;
  mean /= w.size();
  for (double v : w) var += (v - mean) * (v - mean);
  EXPECT_NEAR(mean, 0, 1e-9);
  EXPECT_NEAR(var / w.size(), 1, 1e-9);
  for (size_t i = 0; i < raw.size(); ++i) {
    for (size_t j = 0; j < raw.size(); ++j) {
      if (raw[i] < raw[j]) {
        EXPECT_LT(w[i], w[j]);
      }
    }
  }
  // The outlier no longer dwarfs the rest: plain standardisation squeezes 7 and -2
  // into 0.026 of a standard deviation; the warp spreads them several times wider.
  EXPECT_GT(w[6] - w[5], 5 * 0.026);
  EXPECT_EQ(WarpOutputs({3, 3, 3}), std::vector<double>({0, 0, 0}));
  EXPECT_NEAR(YeoJohnson(2, 0), std::log(3), 1e-12);
  EXPECT_NEAR(YeoJohnson(-2, 2), -std::log(3), 1e-12);
}

TrialCurve Curve(std::vector<std::pair<double, double>> pts, double final_value = 0) {
  TrialCurve c;
  for (auto [x, v] : pts) c.points.push_back({x, v});
  c.final_value = final_value;
  return c;
}

TEST(EarlyStoppingTest, MedianRuleStopsATrialBelowTheCompletedTrialsRunningAverages) {
  std::vector<TrialCurve> done = {Curve({{1, 0.5}, {2, 0.6}, {3, 0.7}, {4, 0.8}}, 0.8),
                                  Curve({{1, 0.4}, {2, 0.6}, {3, 0.65}, {4, 0.7}}, 0.7),
                                  Curve({{1, 0.6}, {2, 0.7}, {3, 0.75}, {4, 0.9}}, 0.9)};
  // Running averages at step 3: 0.6, 0.55, 0.683; median 0.6.
  StopDecision bad = ShouldStop(StoppingRule::kMedian, Goal::kMaximize,
                                Curve({{1, 0.2}, {2, 0.3}, {3, 0.5}}), done);
  EXPECT_TRUE(bad.stop);
  EXPECT_EQ(bad.reason,
            "its best value 0.5 by step 3 is worse than the median 0.6 of completed trials' "
            "running averages there");
  EXPECT_FALSE(ShouldStop(StoppingRule::kMedian, Goal::kMaximize,
                          Curve({{1, 0.2}, {2, 0.3}, {3, 0.61}}), done)
                   .stop);
  // Minimising, the same curve is excellent.
  EXPECT_FALSE(ShouldStop(StoppingRule::kMedian, Goal::kMinimize,
                          Curve({{1, 0.2}, {2, 0.3}, {3, 0.5}}), done)
                   .stop);
  // Too few measurements, or too few completed trials: never.
  EXPECT_FALSE(
      ShouldStop(StoppingRule::kMedian, Goal::kMaximize, Curve({{1, 0.1}, {2, 0.1}}), done).stop);
  done.pop_back();
  EXPECT_FALSE(ShouldStop(StoppingRule::kMedian, Goal::kMaximize,
                          Curve({{1, 0.1}, {2, 0.1}, {3, 0.1}}), done)
                   .stop);
}

TEST(EarlyStoppingTest, DecayCurveRuleStopsACurveLevellingOffBelowTheBest) {
  auto saturating = [](double level, double steps) {
    TrialCurve c;
    for (double s = 1; s <= steps; ++s)
      c.points.push_back({s * 10, level * (1 - std::exp(-s / 2))});
    c.final_value = c.points.back().value;
    return c;
  };
  std::vector<TrialCurve> done = {saturating(0.9, 10), saturating(0.8, 10), saturating(0.85, 10)};
  // Levelling off near 0.5 after four of ten steps: stopped.
  StopDecision flat =
      ShouldStop(StoppingRule::kDecayCurve, Goal::kMaximize, saturating(0.5, 4), done);
  EXPECT_TRUE(flat.stop);
  EXPECT_NE(flat.reason.find("levels off near 0.4"), std::string::npos) << flat.reason;
  // Heading for 0.95: kept.
  EXPECT_FALSE(
      ShouldStop(StoppingRule::kDecayCurve, Goal::kMaximize, saturating(0.95, 4), done).stop);
  // StoppingRule::kNone never stops.
  EXPECT_FALSE(ShouldStop(StoppingRule::kNone, Goal::kMaximize, saturating(0.1, 4), done).stop);
}

}  // namespace
}  // namespace ty::tuning
