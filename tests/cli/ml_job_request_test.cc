// `ai-platform jobs submit training` request building: --config + flag precedence,
// USER_ARGS after `--`, and gcloud's client-side rules (docs/contracts/gcloud-cli.md §1).
#include "cli/ml_job_request.h"

#include <gtest/gtest.h>

namespace ty::cli {
namespace {

using nlohmann::json;

MlSubmitFlags Flags() {
  MlSubmitFlags f;
  f.job_id = "job_1";
  f.region = "local";
  f.master_image_uri = "img";
  return f;
}

TEST(BuildMlJobTest, FlagsOnly) {
  MlSubmitFlags f = Flags();
  f.job_dir = "gs://b/dir";
  f.scale_tier = "basic-gpu";
  f.labels = "a=b";
  f.user_args = {"--epochs", "3"};
  Result<json> r = BuildMlJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, json::parse(R"({"jobId": "job_1", "labels": {"a": "b"},
    "trainingInput": {"region": "local", "masterConfig": {"imageUri": "img"}, "jobDir": "gs://b/dir",
                      "scaleTier": "BASIC_GPU", "args": ["--epochs", "3"]}})"));
}

json Config() {
  return json::parse(R"({"jobId": "from_config", "labels": {"owner": "cfg"},
    "trainingInput": {"region": "cfg-region", "scaleTier": "CUSTOM", "masterType": "n1-standard-4",
                      "masterConfig": {"imageUri": "cfg-img"}, "args": ["--cfg", "1"],
                      "scheduling": {"maxRunningTime": "60s"}}})");
}

TEST(BuildMlJobTest, FlagsOverwriteConfigFieldsAndKeepTheRest) {
  MlSubmitFlags f;
  f.job_id = "positional";
  f.config = Config();
  f.master_image_uri = "flag-img";
  f.labels = "owner=flag";
  Result<json> r = BuildMlJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["jobId"], "positional");
  EXPECT_EQ((*r)["labels"], json({{"owner", "flag"}}));
  const json& in = (*r)["trainingInput"];
  EXPECT_EQ(in["masterConfig"]["imageUri"], "flag-img");
  EXPECT_EQ(in["region"], "cfg-region") << "no --region: the config's stays";
  EXPECT_EQ(in["args"], json({"--cfg", "1"})) << "no `--`: the config's args stay";
  EXPECT_EQ(in["scheduling"]["maxRunningTime"], "60s");
  EXPECT_EQ(in["masterType"], "n1-standard-4");
}

TEST(BuildMlJobTest, UserArgsReplaceConfigArgsEntirely) {
  MlSubmitFlags f;
  f.job_id = "j";
  f.config = Config();
  f.user_args = {"--only", "these"};
  Result<json> r = BuildMlJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["trainingInput"]["args"], json({"--only", "these"}));
}

TEST(BuildMlJobTest, RegionFlagOverwritesConfig) {
  MlSubmitFlags f;
  f.job_id = "j";
  f.config = Config();
  f.region = "flag-region";
  Result<json> r = BuildMlJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["trainingInput"]["region"], "flag-region");
}

TEST(BuildMlJobTest, WorkerGroupAndAccelerators) {
  MlSubmitFlags f = Flags();
  f.worker_machine_type = "n1-standard-8";
  f.worker_count = 2;
  f.master_accelerator = "type=nvidia-tesla-t4,count=1";
  Result<json> r = BuildMlJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json& in = (*r)["trainingInput"];
  EXPECT_EQ(in["workerType"], "n1-standard-8");
  EXPECT_EQ(in["workerCount"], "2");
  EXPECT_EQ(in["masterConfig"]["acceleratorConfig"],
            json({{"type", "NVIDIA_TESLA_T4"}, {"count", "1"}}));
}

TEST(BuildMlJobTest, ParameterServerGroupImagesAndChief) {
  MlSubmitFlags f = Flags();
  f.worker_machine_type = "n1-standard-8";
  f.worker_count = 2;
  f.worker_image_uri = "localhost/worker:1";
  f.parameter_server_machine_type = "n1-highmem-8";
  f.parameter_server_count = 1;
  f.parameter_server_image_uri = "localhost/ps:1";
  f.use_chief_in_tf_config = "true";
  Result<json> r = BuildMlJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json& in = (*r)["trainingInput"];
  EXPECT_EQ(in["parameterServerType"], "n1-highmem-8");
  EXPECT_EQ(in["parameterServerCount"], "1");
  EXPECT_EQ(in["parameterServerConfig"]["imageUri"], "localhost/ps:1");
  EXPECT_EQ(in["workerConfig"]["imageUri"], "localhost/worker:1");
  EXPECT_EQ(in["useChiefInTfConfig"], true);

  f.use_chief_in_tf_config = "maybe";
  EXPECT_FALSE(BuildMlJob(f).ok());
  f = Flags();
  f.parameter_server_count = 1;
  Result<json> half = BuildMlJob(f);
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(
      half.status().message(),
      "argument --parameter-server-count --parameter-server-machine-type: Both must be specified.");
}

std::string ErrorOf(const MlSubmitFlags& f) {
  Result<json> r = BuildMlJob(f);
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(BuildMlJobTest, GcloudRuleMessages) {
  MlSubmitFlags f = Flags();
  f.runtime_version = "2.11";
  EXPECT_EQ(ErrorOf(f), "Only one of --master-image-uri, --runtime-version can be set.");

  f = Flags();
  f.scale_tier = "custom";
  EXPECT_EQ(ErrorOf(f), "--master-machine-type is required if scale-tier is set to CUSTOM.");

  f = Flags();
  f.master_image_uri.reset();
  EXPECT_EQ(ErrorOf(f), "Non-custom jobs must have packages.");

  f = Flags();
  f.worker_count = 2;
  EXPECT_EQ(ErrorOf(f), "argument --worker-count --worker-machine-type: Both must be specified.");

  f = Flags();
  f.region.reset();
  EXPECT_EQ(ErrorOf(f).rfind("The required property [region] is not currently set.", 0), 0u);

  f = Flags();
  f.scale_tier = "huge";
  EXPECT_NE(ErrorOf(f).find("Invalid choice: 'huge'"), std::string::npos);

  f = Flags();
  f.master_accelerator = "type=nvidia-tesla-t4";
  EXPECT_EQ(ErrorOf(f),
            "argument --master-accelerator: Key [count] required in dict arg but not provided");
}

TEST(BuildMlJobTest, PackagesMustBeInABucket) {
  MlSubmitFlags f = Flags();
  f.master_image_uri.reset();
  f.runtime_version = "2.11";
  f.module_name = "trainer.task";
  f.packages = "gs://b/p.tar.gz";
  Result<json> r = BuildMlJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["trainingInput"]["packageUris"], json({"gs://b/p.tar.gz"}));
  f.packages = "dist/p.tar.gz";
  EXPECT_NE(ErrorOf(f).find("[dist/p.tar.gz] is a local file"), std::string::npos);
}

}  // namespace
}  // namespace ty::cli
