#include "model/spec_limits.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "wire/dialect.h"

namespace ty::model {
namespace {

JobSpec Vertex(const std::string& pools) {
  auto parsed = wire::ParseVertexCustomJob(
      nlohmann::json::parse(R"({"displayName":"t","jobSpec":{"workerPoolSpecs":)" + pools + "}}"));
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed->spec;
}

std::string Pool(int count, const std::string& container = R"({"imageUri":"img"})") {
  return R"({"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":")" +
         std::to_string(count) + R"(","containerSpec":)" + container + "}";
}

TEST(SpecLimitsTest, DefaultsAcceptATypicalJob) {
  EXPECT_TRUE(CheckSpecLimits(Vertex("[" + Pool(1) + "," + Pool(8) + "]"), SpecLimits{}).ok());
}

TEST(SpecLimitsTest, ReplicasPerPoolAndPerJobNameTheCountField) {
  SpecLimits limits;
  limits.max_replicas_per_pool = 4;
  limits.max_replicas_per_job = 6;
  Status pool = CheckSpecLimits(Vertex("[" + Pool(1) + "," + Pool(5) + "]"), limits);
  EXPECT_EQ(pool.field(), "jobSpec.workerPoolSpecs[1].replicaCount");
  Status job = CheckSpecLimits(Vertex("[" + Pool(1) + "," + Pool(4) + "," + Pool(2) + "]"), limits);
  EXPECT_EQ(job.field(), "jobSpec.workerPoolSpecs[2].replicaCount");
  EXPECT_NE(job.message().find("max_replicas_per_job"), std::string::npos);
  EXPECT_TRUE(
      CheckSpecLimits(Vertex("[" + Pool(1) + "," + Pool(4) + "," + Pool(1) + "]"), limits).ok());
}

// Debian packages no TensorFlow, so a TensorFlow prebuilt name has no runtime here: a
// 400 at submit naming the image's field, not a pull failure later (issue 20).
TEST(SpecLimitsTest, TensorFlowPrebuiltImagesAreRefusedAtTheirField) {
  Status container = CheckSpecLimits(
      Vertex("[" + Pool(1, R"({"imageUri":"gcr.io/deeplearning-platform-release/tf2-cpu.2-11"})") +
             "]"),
      SpecLimits{});
  EXPECT_EQ(container.field(), "jobSpec.workerPoolSpecs[0].containerSpec.imageUri");
  EXPECT_NE(container.message().find("no TensorFlow runtime"), std::string::npos);
  JobSpec package = Vertex(R"([{"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
    "pythonPackageSpec":{"executorImageUri":"us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11.py310:latest",
    "packageUris":["gs://b/t.tar.gz"],"pythonModule":"trainer.task"}}])");
  EXPECT_EQ(CheckSpecLimits(package, SpecLimits{}).field(),
            "jobSpec.workerPoolSpecs[0].pythonPackageSpec.executorImageUri");
  auto ml = wire::ParseMlJob(nlohmann::json::parse(R"({"jobId":"j","trainingInput":{"region":"r",
    "masterConfig":{"imageUri":"us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11.py310:latest"}}})"));
  ASSERT_TRUE(ml.ok()) << ml.status().ToString();
  EXPECT_EQ(CheckSpecLimits(ml->spec, SpecLimits{}).field(), "trainingInput.masterConfig.imageUri");
  // Names that have a runtime pass.
  EXPECT_TRUE(
      CheckSpecLimits(
          Vertex(
              "[" +
              Pool(
                  1,
                  R"({"imageUri":"us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest"})") +
              "]"),
          SpecLimits{})
          .ok());
}

TEST(SpecLimitsTest, MlRolesNameTheirCountFields) {
  auto parsed =
      wire::ParseMlJob(nlohmann::json::parse(R"({"jobId":"j","trainingInput":{"region":"r",
    "scaleTier":"CUSTOM","masterType":"n1-standard-4","masterConfig":{"imageUri":"img"},
    "workerType":"n1-standard-4","workerCount":"3","parameterServerType":"n1-standard-4",
    "parameterServerCount":"9"}})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  SpecLimits limits;
  limits.max_replicas_per_pool = 8;
  EXPECT_EQ(CheckSpecLimits(parsed->spec, limits).field(), "trainingInput.parameterServerCount");
  limits.max_replicas_per_pool = 10;
  limits.max_replicas_per_job = 5;
  EXPECT_EQ(CheckSpecLimits(parsed->spec, limits).field(), "trainingInput.parameterServerCount");
  limits.max_replicas_per_job = 3;
  EXPECT_EQ(CheckSpecLimits(parsed->spec, limits).field(), "trainingInput.workerCount");
}

TEST(SpecLimitsTest, ArgvEnvAndLabels) {
  SpecLimits limits;
  limits.max_argv_entries = 3;
  EXPECT_EQ(
      CheckSpecLimits(
          Vertex("[" + Pool(1, R"({"imageUri":"i","command":["a","b"],"args":["c","d"]})") + "]"),
          limits)
          .field(),
      "jobSpec.workerPoolSpecs[0].containerSpec.args");
  limits = SpecLimits{};
  limits.max_env_chars = 10;
  EXPECT_EQ(
      CheckSpecLimits(
          Vertex("[" + Pool(1, R"({"imageUri":"i","env":[{"name":"A","value":"0123456789"}]})") +
                 "]"),
          limits)
          .field(),
      "jobSpec.workerPoolSpecs[0].containerSpec.env");
  limits = SpecLimits{};
  limits.max_labels = 1;
  JobSpec spec = Vertex("[" + Pool(1) + "]");
  spec.labels = {{"a", "1"}, {"b", "2"}};
  EXPECT_EQ(CheckSpecLimits(spec, limits).field(), "labels");
}

TEST(SpecLimitsTest, NonPositiveLimitsAreRefusedByName) {
  SpecLimits limits;
  limits.max_replicas_per_job = 0;
  Status s = ValidateSpecLimits(limits);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("max_replicas_per_job"), std::string::npos);
}

}  // namespace
}  // namespace ty::model
