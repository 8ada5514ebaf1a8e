// A trial's job: its parameters as flags, in search-space order, conditional children
// after their parent. Found by ASan under the wrong-type sweep (issue 20): the children
// were copied into a temporary and the flags read names through dangling pointers.
#include "machines/trial_jobs.h"

#include <gtest/gtest.h>

namespace ty::machines {
namespace {

model::StudySpec ConditionalSpace() {
  model::ParamSpec lr{.name = "lr", .type = model::ParamType::kDouble, .min = 0.001, .max = 0.1};
  model::ParamSpec momentum{.name = "momentum", .type = model::ParamType::kDiscrete};
  momentum.discrete = {0.5, 0.9};
  model::ParamSpec optimizer{.name = "optimizer", .type = model::ParamType::kCategorical};
  optimizer.categories = {"sgd", "adam"};
  optimizer.children.push_back({.parent_categories = {"sgd"}, .spec = momentum});
  model::StudySpec spec;
  spec.params = {optimizer, lr};
  return spec;
}

TEST(TrialJobsTest, ConditionalChildrenFollowTheirParentOnTheCommandLine) {
  model::Job study;
  study.dialect = model::Dialect::kVertex;
  study.uid = "1";
  model::WorkerPool pool;
  pool.replica_count = 1;
  pool.container = model::ContainerSpec{.image_uri = "img", .args = {"--epochs=1"}};
  study.spec.pools = {pool};
  const model::StudySpec spec = ConditionalSpace();
  model::Assignment values = {
      {"optimizer", {.category = "sgd"}}, {"momentum", {.number = 0.9}}, {"lr", {.number = 0.01}}};
  model::Job trial = TrialJob(study, spec, 3, values);
  ASSERT_EQ(trial.spec.pools.size(), 1u);
  EXPECT_EQ(
      trial.spec.pools[0].container->args,
      (std::vector<std::string>{"--epochs=1", "--optimizer=sgd", "--momentum=0.9", "--lr=0.01"}));
  EXPECT_EQ(DescribeParams(spec, values), "optimizer=sgd, momentum=0.9, lr=0.01");
  values.erase("momentum");  // An inactive child is left out.
  values["optimizer"].category = "adam";
  EXPECT_EQ(TrialJob(study, spec, 4, values).spec.pools[0].container->args,
            (std::vector<std::string>{"--epochs=1", "--optimizer=adam", "--lr=0.01"}));
}

}  // namespace
}  // namespace ty::machines
