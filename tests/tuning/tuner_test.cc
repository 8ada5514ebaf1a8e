#include "tuning/tuner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "fakes/study_params.h"

namespace ty::tuning {
namespace {

using testing::Categorical;
using testing::Discrete;
using testing::Double;
using testing::Integer;

Tuner Make(std::vector<ParamSpec> params, Algorithm algorithm, uint64_t seed = 1,
           int max_trials = 30, int parallel = 1, Goal goal = Goal::kMinimize) {
  auto space = SearchSpace::Create(std::move(params));
  EXPECT_TRUE(space.ok()) << space.status().message();
  StudyOptions o;
  o.goal = goal;
  o.algorithm = algorithm;
  o.seed = seed;
  o.max_trials = max_trials;
  o.parallel = parallel;
  auto t = Tuner::Create(std::move(*space), o);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(*t);
}

std::string Key(const Assignment& a) {
  std::string k;
  for (const auto& [name, v] : a) k += name + "=" + std::to_string(v.number) + v.category + ";";
  return k;
}

// A smooth bowl with its minimum 0 at x=0.3, y=0.7 on [0,1]^2.
double Bowl(const Assignment& a) {
  return std::pow(a.at("x").number - 0.3, 2) + std::pow(a.at("y").number - 0.7, 2);
}

// Runs a whole study on `f` (minimised) and returns the best value found.
template <typename F>
double RunStudy(Tuner& tuner, int trials, int parallel, F f) {
  double best = INFINITY;
  for (int done = 0; done < trials;) {
    std::vector<Assignment> batch = tuner.Suggest(std::min(parallel, trials - done), {});
    EXPECT_FALSE(batch.empty());
    for (const Assignment& a : batch) {
      EXPECT_TRUE(tuner.space().Check(a).ok()) << tuner.space().Check(a).message();
      double v = f(a);
      best = std::min(best, v);
      tuner.Observe({a, v});
      ++done;
    }
  }
  return best;
}

TEST(TunerTest, GridVisitsEveryPointOnceInOrderThenRunsOut) {
  Tuner t = Make({Integer("n", 1, 3), Categorical("o", {"a", "b"})}, Algorithm::kGrid);
  std::vector<Assignment> first = t.Suggest(4, {});
  ASSERT_EQ(first.size(), 4u);
  EXPECT_EQ(first[0].at("n").number, 1);
  EXPECT_EQ(first[0].at("o").category, "a");
  EXPECT_EQ(first[1].at("o").category, "b");
  std::vector<Assignment> rest = t.Suggest(4, first);  // The first four still running.
  ASSERT_EQ(rest.size(), 2u);
  std::set<std::string> all;
  for (const auto* batch : {&first, &rest}) {
    for (const auto& a : *batch) all.insert(Key(a));
  }
  EXPECT_EQ(all.size(), 6u);
  for (const auto& a : first) t.Observe({a, 1.0});
  for (const auto& a : rest) t.Observe({a, 1.0});
  EXPECT_TRUE(t.Suggest(1, {}).empty());
}

TEST(TunerTest, GridOfAConditionalSpaceCountsChildrenOnlyUnderTheirParent) {
  ParamSpec opt = Categorical("opt", {"sgd", "adam"});
  opt.children.push_back({{}, {"sgd"}, Discrete("momentum", {0.0, 0.9})});
  Tuner t = Make({opt, Integer("n", 1, 2)}, Algorithm::kGrid);
  std::vector<Assignment> all = t.Suggest(100, {});
  // sgd x 2 momenta x 2 n + adam x 2 n.
  ASSERT_EQ(all.size(), 6u);
  for (const auto& a : all) {
    EXPECT_EQ(a.count("momentum"), a.at("opt").category == "sgd" ? 1u : 0u);
  }
}

TEST(TunerTest, GridRefusesDoubleParameters) {
  auto space = SearchSpace::Create({Double("x", 0, 1)});
  StudyOptions o;
  o.algorithm = Algorithm::kGrid;
  auto t = Tuner::Create(std::move(*space), o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "GRID_SEARCH needs every parameter to be INTEGER, CATEGORICAL or DISCRETE");
}

TEST(TunerTest, TheSameSeedAndHistoryGiveTheSameSuggestions) {
  for (Algorithm alg : {Algorithm::kBayesian, Algorithm::kRandom}) {
    Tuner a = Make({Double("x", 0, 1), Double("y", 0, 1)}, alg, 42);
    Tuner b = Make({Double("x", 0, 1), Double("y", 0, 1)}, alg, 42);
    Tuner c = Make({Double("x", 0, 1), Double("y", 0, 1)}, alg, 43);
    for (int i = 0; i < 12; ++i) {
      Assignment sa = a.Suggest(1, {})[0];
      Assignment sb = b.Suggest(1, {})[0];
      Assignment sc = c.Suggest(1, {})[0];
      EXPECT_EQ(Key(sa), Key(sb)) << AlgorithmName(alg) << " trial " << i;
      if (i == 0) {
        EXPECT_NE(Key(sa), Key(sc));
      }
      a.Observe({sa, Bowl(sa)});
      b.Observe({sb, Bowl(sb)});
      c.Observe({sc, Bowl(sc)});
    }
  }
}

TEST(TunerTest, BayesianFindsTheBottomOfABowlFarBetterThanRandom) {
  Tuner gp = Make({Double("x", 0, 1), Double("y", 0, 1)}, Algorithm::kBayesian, 3, 25);
  Tuner random = Make({Double("x", 0, 1), Double("y", 0, 1)}, Algorithm::kRandom, 3, 25);
  double gp_best = RunStudy(gp, 25, 1, Bowl);
  double random_best = RunStudy(random, 25, 1, Bowl);
  EXPECT_LT(gp_best, 1e-4);
  EXPECT_LT(gp_best, random_best / 20) << gp_best << " vs " << random_best;
}

TEST(TunerTest, MaximisingFindsTheTopOfAMixedSpace) {
  auto f = [](const Assignment& a) {
    double v = -std::pow(std::log10(a.at("lr").number) + 2, 2) -
               std::pow(a.at("layers").number - 4, 2) / 9 -
               (a.at("opt").category == "adam" ? 0 : 0.5);
    return v;
  };
  Tuner t = Make({Double("lr", 1e-5, 1, Scale::kLog), Integer("layers", 1, 10),
                  Categorical("opt", {"sgd", "adam", "rmsprop"})},
                 Algorithm::kBayesian, 5, 30, 1, Goal::kMaximize);
  double best = -INFINITY;
  for (int i = 0; i < 30; ++i) {
    Assignment a = t.Suggest(1, {})[0];
    best = std::max(best, f(a));
    t.Observe({a, f(a)});
  }
  EXPECT_GT(best, -0.01);
}

TEST(TunerTest, ParallelBatchesSpreadOutInsteadOfCollapsing) {
  Tuner t = Make({Double("x", 0, 1), Double("y", 0, 1)}, Algorithm::kBayesian, 7, 40, 4);
  RunStudy(t, 16, 4, Bowl);  // Past the quasi-random start: the model proposes now.
  std::vector<Assignment> batch = t.Suggest(4, {});
  ASSERT_EQ(batch.size(), 4u);
  for (size_t i = 0; i < batch.size(); ++i) {
    for (size_t j = i + 1; j < batch.size(); ++j) {
      double d = std::hypot(batch[i].at("x").number - batch[j].at("x").number,
                            batch[i].at("y").number - batch[j].at("y").number);
      EXPECT_GT(d, 1e-3) << "suggestions " << i << " and " << j << " coincide";
    }
  }
  // Pending trials count the same way: asked again with the batch running, the next
  // suggestion is none of them.
  Assignment next = t.Suggest(1, batch)[0];
  for (const auto& a : batch) EXPECT_NE(Key(a), Key(next));
}

TEST(TunerTest, AFiniteSpaceIsNeverSuggestedTwiceAndInfeasiblePointsStaySeen) {
  Tuner t =
      Make({Integer("a", 1, 4), Categorical("b", {"x", "y", "z"})}, Algorithm::kBayesian, 1, 12);
  std::set<std::string> seen;
  for (int i = 0; i < 12; ++i) {
    std::vector<Assignment> s = t.Suggest(1, {});
    ASSERT_EQ(s.size(), 1u) << "trial " << i;
    EXPECT_TRUE(seen.insert(Key(s[0])).second) << "repeated " << Key(s[0]);
    // Every third trial is infeasible (no metric): still never suggested again.
    std::optional<double> v;
    if (i % 3 != 0) v = s[0].at("a").number;
    t.Observe({s[0], v});
  }
  EXPECT_TRUE(t.Suggest(1, {}).empty());
}

TEST(TunerTest, RandomSearchFollowsLogScales) {
  Tuner t = Make({Double("lr", 1e-6, 1, Scale::kLog)}, Algorithm::kRandom, 11, 1000);
  std::vector<Assignment> s = t.Suggest(600, {});
  ASSERT_EQ(s.size(), 600u);
  int small = 0;
  for (const auto& a : s) small += a.at("lr").number < 1e-3;
  EXPECT_NEAR(small / 600.0, 0.5, 0.07);
}

TEST(TunerTest, ParsesTheApisAlgorithmNames) {
  EXPECT_EQ(*ParseAlgorithm(""), Algorithm::kBayesian);
  EXPECT_EQ(*ParseAlgorithm("ALGORITHM_UNSPECIFIED"), Algorithm::kBayesian);
  EXPECT_EQ(*ParseAlgorithm("GRID_SEARCH"), Algorithm::kGrid);
  EXPECT_EQ(*ParseAlgorithm("RANDOM_SEARCH"), Algorithm::kRandom);
  EXPECT_FALSE(ParseAlgorithm("HYPERBAND").ok());
}

// The widest study the API admits (100 parameters of 1,000 categories) with a batch of
// a thousand trials, some pending: every suggestion is valid and new. The model picks
// only the first few of such a batch (bench/tuner_latency --widest times it: seconds,
// where it once took over ten minutes); the rest fill the space.
TEST(TunerTest, TheWidestSpaceGetsAWholeBatchOfNewPoints) {
  std::vector<std::string> values;
  for (int v = 0; v < 1000; ++v) values.push_back("v" + std::to_string(v));
  std::vector<ParamSpec> params;
  for (int p = 0; p < 100; ++p) params.push_back(Categorical("c" + std::to_string(p), values));
  Tuner tuner = Make(params, Algorithm::kBayesian, 3, 5000, 40, Goal::kMaximize);
  std::vector<Assignment> first = tuner.Suggest(1000, {});
  ASSERT_EQ(first.size(), 1000u);
  for (size_t i = 0; i < 40; ++i) {
    tuner.Observe({first[i], static_cast<double>(first[i].at("c0").category.size() + i % 7)});
  }
  std::vector<Assignment> pending(first.begin() + 40, first.end());
  std::vector<Assignment> next = tuner.Suggest(40, pending);
  ASSERT_EQ(next.size(), 40u);
  std::set<std::string> keys;
  for (const Assignment& a : first) keys.insert(Key(a));
  for (const Assignment& a : next) {
    EXPECT_TRUE(tuner.space().Check(a).ok()) << tuner.space().Check(a).message();
    EXPECT_TRUE(keys.insert(Key(a)).second) << "a repeat: " << Key(a);
  }
}

}  // namespace
}  // namespace ty::tuning

namespace ty::tuning {
namespace {
// The sklearn sample's space, run as the service runs it (two at a time, each
// suggestion made with the running ones pending), over many seeds: every suggestion
// lies inside the space.
TEST(TunerTest, EverySuggestionOfAMixedLogSpaceStaysInsideIt) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const int trials = seed % 2 == 0 ? 6 : 12;
    Tuner t = Make({Double("alpha", 1e-5, 0.1, Scale::kLog), Integer("max-iter", 2, 30),
                    Categorical("loss", {"hinge", "log_loss", "modified_huber", "perceptron"})},
                   Algorithm::kBayesian, seed * 0x9E3779B97F4A7C15ull, trials, 2, Goal::kMaximize);
    std::vector<Assignment> running = t.Suggest(2, {});
    for (int done = 0; done < trials - 2; ++done) {
      ASSERT_FALSE(running.empty());
      for (const Assignment& a : running) {
        ASSERT_TRUE(t.space().Check(a).ok())
            << "seed " << seed << ": " << t.space().Check(a).message() << " " << Key(a);
      }
      Assignment finished = running.front();
      running.erase(running.begin());
      double v = 0.9 - std::abs(std::log10(finished.at("alpha").number) + 3) / 10 -
                 std::abs(finished.at("max-iter").number - 12) / 100;
      t.Observe({finished, v});
      std::vector<Assignment> next = t.Suggest(1, running);
      running.insert(running.end(), next.begin(), next.end());
    }
  }
}
}  // namespace
}  // namespace ty::tuning
