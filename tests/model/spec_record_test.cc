#include "model/spec_record.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "wire/dialect.h"

namespace ty::model {
namespace {

// Every field survives: re-encoding the decoded record gives the same text, and the
// fields that drive a launch are checked one by one.
TEST(SpecRecordTest, VertexAndMlSpecsRoundTrip) {
  auto vertex = wire::ParseVertexCustomJob(nlohmann::json::parse(R"({"displayName": "d",
    "labels": {"team": "a"}, "jobSpec": {"workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
        "acceleratorCount": 2}, "replicaCount": "1", "diskSpec": {"bootDiskSizeGb": 200},
       "containerSpec": {"imageUri": "img", "command": ["python3"], "args": ["-m", "t"],
         "env": [{"name": "A", "value": "1"}]}},
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "3",
       "pythonPackageSpec": {"executorImageUri": "py", "packageUris": ["gs://b/p.whl"],
         "pythonModule": "trainer.task", "args": ["--x=1"]}}],
    "scheduling": {"timeout": "3600s", "restartJobOnWorkerRestart": true},
    "baseOutputDirectory": {"outputUriPrefix": "gs://b/out"},
    "tensorboard": "projects/p/locations/l/tensorboards/7", "enableWebAccess": true}})"));
  ASSERT_TRUE(vertex.ok()) << vertex.status().ToString();
  std::string text = EncodeSpecRecord(vertex->spec);
  Result<JobSpec> back = DecodeSpecRecord(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(EncodeSpecRecord(*back), text);
  ASSERT_EQ(back->pools.size(), 2u);
  EXPECT_EQ(back->pools[0].machine.accelerator_count, 2);
  EXPECT_EQ(back->pools[0].container->env[0].value, "1");
  EXPECT_EQ(back->pools[1].replica_count, 3);
  EXPECT_EQ(back->pools[1].python_package->python_module, "trainer.task");
  EXPECT_EQ(back->scheduling.timeout, 3600LL * 1000000);
  EXPECT_TRUE(back->scheduling.restart_job_on_worker_restart);
  EXPECT_EQ(back->base_output_directory, "gs://b/out/");
  EXPECT_EQ(back->tensorboard, "projects/p/locations/l/tensorboards/7");
  EXPECT_TRUE(back->enable_web_access);
  EXPECT_EQ(back->labels.at("team"), "a");

  auto ml = wire::ParseMlJob(nlohmann::json::parse(R"({"jobId": "j1", "trainingInput": {
    "scaleTier": "CUSTOM", "masterType": "n1-standard-4", "region": "r", "jobDir": "gs://b/j",
    "masterConfig": {"imageUri": "img"}, "useChiefInTfConfig": true, "enableWebAccess": true,
    "scheduling": {"maxWaitTime": "3600s"}}})"));
  ASSERT_TRUE(ml.ok()) << ml.status().ToString();
  Result<JobSpec> ml_back = DecodeSpecRecord(EncodeSpecRecord(ml->spec));
  ASSERT_TRUE(ml_back.ok());
  EXPECT_EQ(ml_back->dialect, Dialect::kMlV1);
  EXPECT_EQ(ml_back->job_id, "j1");
  EXPECT_TRUE(ml_back->use_chief_in_tf_config);
  EXPECT_TRUE(ml_back->enable_web_access);
  EXPECT_EQ(ml_back->job_dir, "gs://b/j");
  EXPECT_EQ(ml_back->scheduling.max_wait, 3600LL * 1000000);
  EXPECT_EQ(EncodeSpecRecord(*ml_back), EncodeSpecRecord(ml->spec));
}

TEST(SpecRecordTest, NewerVersionsAreRefusedAndGarbageIsDataLoss) {
  EXPECT_EQ(DecodeSpecRecord(R"({"v": 2, "pools": []})").status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(DecodeSpecRecord("not json").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodeSpecRecord(R"({"pools": []})").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(DecodeSpecRecord(R"({"v": 1, "pools": [{"replicaCount": "x"}]})").status().code(),
            StatusCode::kDataLoss);
  // Fields a later version adds are ignored by this one.
  EXPECT_TRUE(DecodeSpecRecord(R"({"v": 1, "pools": [], "addedLater": 1})").ok());
}

}  // namespace
}  // namespace ty::model
