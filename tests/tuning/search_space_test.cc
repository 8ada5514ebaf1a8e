#include "tuning/search_space.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "fakes/study_params.h"
#include "tuning/quasi_random.h"

namespace ty::tuning {
namespace {

using testing::Categorical;
using testing::Discrete;
using testing::Double;
using testing::Integer;

std::string ErrorOf(std::vector<ParamSpec> params) {
  auto s = SearchSpace::Create(std::move(params));
  return s.ok() ? "" : s.status().message();
}

TEST(SearchSpaceTest, RefusesBrokenParametersNamingParameterAndRule) {
  EXPECT_EQ(ErrorOf({Double("lr", 1, 1)}),
            "parameter 'lr' (DOUBLE): minValue must be less than maxValue");
  EXPECT_EQ(ErrorOf({Double("lr", 0, 1, Scale::kLog)}),
            "parameter 'lr' (DOUBLE): a log scale needs a strictly positive range");
  EXPECT_EQ(ErrorOf({Integer("n", 1.5, 4)}),
            "parameter 'n' (INTEGER): minValue and maxValue must be integers");
  EXPECT_EQ(ErrorOf({Discrete("b", {32, 16})}),
            "parameter 'b' (DISCRETE): discreteValues must be strictly increasing");
  EXPECT_EQ(ErrorOf({Categorical("o", {"a", "a"})}),
            "parameter 'o' (CATEGORICAL): categoricalValues must be distinct");
  EXPECT_EQ(ErrorOf({Double("x", 0, 1), Double("x", 0, 2)}), "parameter 'x' is named twice");
  EXPECT_EQ(ErrorOf({}), "the study has no parameters");
  ParamSpec parent = Categorical("opt", {"sgd", "adam"});
  parent.children.push_back({{}, {"rmsprop"}, Double("momentum", 0, 1)});
  EXPECT_EQ(ErrorOf({parent}),
            "conditional parameter 'momentum' of 'opt': parent value 'rmsprop' is not one of "
            "its categoricalValues");
}

TEST(SearchSpaceTest, ScalesHaveVizierMeaning) {
  auto space = SearchSpace::Create({Double("lin", 0, 10), Double("log", 1e-4, 1, Scale::kLog),
                                    Double("rev", 0.001, 0.999, Scale::kReverseLog)});
  ASSERT_TRUE(space.ok());
  EXPECT_DOUBLE_EQ(space->FromUnit(0, 0.25), 2.5);
  EXPECT_NEAR(space->FromUnit(1, 0.5), 1e-2, 1e-12);  // Geometric midpoint.
  EXPECT_NEAR(space->FromUnit(1, 0.75), 1e-1, 1e-12);
  // Reverse log: 1 - x is log-uniform, so values crowd near the top.
  EXPECT_NEAR(space->FromUnit(2, 0.5), 0.001 + 0.999 - std::sqrt(0.001 * 0.999), 1e-12);
  EXPECT_GT(space->FromUnit(2, 0.9), 0.99);
  for (size_t d = 0; d < 3; ++d) {
    for (double u : {0.0, 0.1, 0.5, 0.93, 1.0}) {
      EXPECT_NEAR(space->ToUnit(d, space->FromUnit(d, u)), u, 1e-9) << d << " " << u;
    }
  }
}

// Every type and scale, sampled thousands of times: always valid, integers integral,
// discrete values exactly the listed doubles, the log scale followed.
TEST(SearchSpaceTest, SamplesAlwaysLieInsideTheSpaceWithExactValues) {
  auto space = SearchSpace::Create(
      {Double("lr", 1e-5, 1, Scale::kLog), Double("beta", 0.001, 0.999, Scale::kReverseLog),
       Integer("layers", 1, 10), Integer("units", 8, 4096, Scale::kLog),
       Integer("wide", -1000000, 1000000),
       Discrete("batch", {16, 32, 64, 128, 256, 512}, Scale::kLog), Discrete("p", {0.1, 0.3, 0.7}),
       Categorical("opt", {"sgd", "momentum", "adam"})});
  ASSERT_TRUE(space.ok());
  std::mt19937_64 rng(5);
  int below_1e3 = 0;
  for (int i = 0; i < 4000; ++i) {
    std::vector<double> u(space->size());
    for (double& v : u) v = Uniform01(rng);
    Assignment a = space->Decode(space->FromCube(u));
    ASSERT_TRUE(space->Check(a).ok()) << space->Check(a).message();
    EXPECT_EQ(a["layers"].number, std::floor(a["layers"].number));
    EXPECT_EQ(a["wide"].number, std::floor(a["wide"].number));
    const std::vector<double> batches = {16, 32, 64, 128, 256, 512};
    EXPECT_NE(std::find(batches.begin(), batches.end(), a["batch"].number), batches.end());
    const std::vector<double> ps = {0.1, 0.3, 0.7};
    EXPECT_NE(std::find(ps.begin(), ps.end(), a["p"].number), ps.end());
    if (a["lr"].number < 1e-3) ++below_1e3;
  }
  // Log-uniform on [1e-5, 1]: 2 of 5 decades lie below 1e-3.
  EXPECT_NEAR(below_1e3 / 4000.0, 0.4, 0.04);
}

TEST(SearchSpaceTest, ConditionalChildrenAreActiveOnlyWhenTheParentMatches) {
  ParamSpec opt = Categorical("optimizer", {"sgd", "adam"});
  opt.children.push_back({{}, {"sgd"}, Double("momentum", 0, 0.99)});
  ParamSpec layers = Integer("layers", 1, 3);
  layers.children.push_back({{2, 3}, {}, Integer("width2", 8, 64)});
  opt.children.push_back({{}, {"adam"}, layers});
  auto space = SearchSpace::Create({opt});
  ASSERT_TRUE(space.ok());
  ASSERT_EQ(space->size(), 4u);
  std::mt19937_64 rng(9);
  int with_momentum = 0, with_width = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<double> u(space->size());
    for (double& v : u) v = Uniform01(rng);
    Assignment a = space->Decode(space->FromCube(u));
    ASSERT_TRUE(space->Check(a).ok()) << space->Check(a).message();
    const bool sgd = a["optimizer"].category == "sgd";
    EXPECT_EQ(a.count("momentum"), sgd ? 1u : 0u);
    EXPECT_EQ(a.count("layers"), sgd ? 0u : 1u);
    const bool wide = !sgd && a["layers"].number >= 2;
    EXPECT_EQ(a.count("width2"), wide ? 1u : 0u);
    with_momentum += sgd;
    with_width += wide;
  }
  EXPECT_GT(with_momentum, 800);
  EXPECT_GT(with_width, 500);
  // Check refuses a child whose parent does not match, and a missing active one.
  Assignment wrong = {{"optimizer", {0, "adam"}}, {"momentum", {0.5, ""}}, {"layers", {1, ""}}};
  EXPECT_EQ(space->Check(wrong).message(), "parameter 'momentum' is not active");
  Assignment missing = {{"optimizer", {0, "adam"}}, {"layers", {2, ""}}};
  EXPECT_EQ(space->Check(missing).message(), "parameter 'width2' has no value");
}

TEST(SearchSpaceTest, FormatsValuesAsTrialArguments) {
  EXPECT_EQ(FormatValue(Integer("n", 1, 10), {7, ""}), "7");
  EXPECT_EQ(FormatValue(Double("lr", 0, 1), {0.001, ""}), "0.001");
  EXPECT_EQ(FormatValue(Double("lr", 0, 1), {1.0 / 3, ""}), "0.3333333333333333");
  EXPECT_EQ(FormatValue(Categorical("o", {"adam"}), {0, "adam"}), "adam");
  // Whole numbers print whole, whatever the type (the ml v1 output has no type at hand).
  EXPECT_EQ(FormatValue(Double("x", 0, 100), {10, ""}), "10");
  EXPECT_EQ(FormatValue(Double("x", 0, 1e6), {100000, ""}), "100000");
  EXPECT_EQ(FormatValue(Double("x", 0, 1), {1e-5, ""}), "1e-05");
}

TEST(ScrambledHaltonTest, IsDeterministicPerSeedAndCoversEvenly) {
  ScrambledHalton a(3, 1), b(3, 1), c(3, 2);
  std::vector<double> pa = a.Next();
  EXPECT_EQ(pa, b.Next());
  EXPECT_NE(pa, c.Next());
  // 64 points in 1-D: every interval of width 1/16 is hit (uniform draws miss some
  // about 1 time in 60; Halton never does).
  ScrambledHalton h(1, 7);
  std::vector<int> bins(16, 0);
  for (int i = 0; i < 64; ++i) {
    double v = h.Next()[0];
    ASSERT_GE(v, 0.0);
    ASSERT_LT(v, 1.0);
    ++bins[static_cast<size_t>(v * 16)];
  }
  for (int n : bins) EXPECT_EQ(n, 4);
}

}  // namespace
}  // namespace ty::tuning
