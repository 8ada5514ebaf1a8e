// `ai custom-jobs create` request building: --worker-pool-spec parsing, every gcloud
// rule with its exact message, and --config/flag precedence (docs/contracts/gcloud-cli.md §4).
#include "cli/custom_job_request.h"

#include <gtest/gtest.h>

namespace ty::cli {
namespace {

using nlohmann::json;

std::string ErrorOf(const std::string& spec) {
  Result<json> r = ParseWorkerPoolSpec(spec);
  EXPECT_FALSE(r.ok()) << spec;
  return r.ok() ? "" : r.status().message();
}

TEST(WorkerPoolSpecTest, ContainerPoolWithDefaults) {
  Result<json> r = ParseWorkerPoolSpec("machine-type=n1-standard-4,container-image-uri=img:1");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, json::parse(R"({"machineSpec": {"machineType": "n1-standard-4"},
                               "replicaCount": "1",
                               "containerSpec": {"imageUri": "img:1"}})"));
}

TEST(WorkerPoolSpecTest, AcceleratorCountDefaultsToOneAndReplicaCountIsAString) {
  Result<json> r = ParseWorkerPoolSpec(
      "machine-type=n1-standard-8,replica-count=3,accelerator-type=NVIDIA_TESLA_T4,container-image-"
      "uri=i");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["machineSpec"]["acceleratorType"], "NVIDIA_TESLA_T4");
  EXPECT_EQ((*r)["machineSpec"]["acceleratorCount"], 1);
  EXPECT_EQ((*r)["replicaCount"], "3");
}

TEST(WorkerPoolSpecTest, ExecutorImageWithModuleIsAPythonPackagePool) {
  Result<json> r = ParseWorkerPoolSpec(
      "machine-type=m,executor-image-uri=exec:1,python-module=trainer.task,accelerator-type=TPU_V3,"
      "accelerator-count=8");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["pythonPackageSpec"], json::parse(R"({"executorImageUri": "exec:1",
                                                       "pythonModule": "trainer.task"})"));
  EXPECT_EQ((*r)["machineSpec"]["acceleratorCount"], 8);
}

TEST(WorkerPoolSpecTest, EmptyValueIsAPlaceholderPool) {
  Result<json> r = ParseWorkerPoolSpec("");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, json::object());
}

TEST(WorkerPoolSpecTest, GcloudRuleMessages) {
  EXPECT_EQ(ErrorOf("container-image-uri=i"),
            "Invalid value for [--worker-pool-spec]: Key [machine-type] required in dict arg but "
            "not provided.");
  EXPECT_EQ(ErrorOf("machine-type=m,accelerator-count=2,container-image-uri=i"),
            "Invalid value for [--worker-pool-spec]: Key [accelerator-type] required as "
            "[accelerator-count] is specified.");
  EXPECT_EQ(ErrorOf("machine-type=m"),
            "Invalid value for [--worker-pool-spec]: Exactly one of keys [executor-image-uri, "
            "container-image-uri] is required.");
  EXPECT_EQ(ErrorOf("machine-type=m,container-image-uri=i,executor-image-uri=e"),
            "Invalid value for [--worker-pool-spec]: Exactly one of keys [executor-image-uri, "
            "container-image-uri] is required.");
  EXPECT_EQ(ErrorOf("machine-type=m,container-image-uri=i,python-module=t"),
            "Invalid value for [--worker-pool-spec]: Key [python-module] is not allowed together "
            "with key [container-image-uri].");
  EXPECT_EQ(ErrorOf("machine-type=m,executor-image-uri=e"),
            "Invalid value for [--worker-pool-spec]: Key [python-module] is required.");
  EXPECT_EQ(ErrorOf("machine-type=m,container-image-uri=i,script=a.py,requirements=x"),
            "Invalid value for [--worker-pool-spec]: Keys [requirements, script] are not allowed: "
            "Only allow to specify together with `local-package-path` in the first "
            "`--worker-pool-spec` flag.");
}

TEST(WorkerPoolSpecTest, InvalidAcceleratorTypeListsTheValidOnes) {
  std::string msg = ErrorOf("machine-type=m,accelerator-type=AMD_MI300,container-image-uri=i");
  EXPECT_EQ(msg.rfind("Invalid value for [--worker-pool-spec]: Found invalid value of "
                      "[accelerator-type]: AMD_MI300. Available values are [NVIDIA_A100_80GB, ",
                      0),
            0u)
      << msg;
  EXPECT_NE(msg.find("TPU_V5_LITEPOD]."), std::string::npos) << msg;
}

TEST(WorkerPoolSpecTest, SyntaxUnknownKeysAndNumbers) {
  EXPECT_EQ(ErrorOf("machine-type"),
            "argument --worker-pool-spec: Bad syntax for dict arg: [machine-type].");
  EXPECT_NE(ErrorOf("machine-type=m,colour=red").find("received: colour"), std::string::npos);
  EXPECT_NE(ErrorOf("machine-type=m,replica-count=x,container-image-uri=i").find("[replica-count]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("machine-type=m,replica-count=0,container-image-uri=i").find("[replica-count]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("machine-type=m,local-package-path=.,executor-image-uri=e,python-module=t")
                .find("[local-package-path] is not supported"),
            std::string::npos);
}

CustomJobFlags Flags() {
  CustomJobFlags f;
  f.display_name = "demo";
  return f;
}

TEST(BuildCustomJobTest, FlagsOnly) {
  CustomJobFlags f = Flags();
  f.worker_pool_specs = {"machine-type=m,container-image-uri=i", "",
                         "machine-type=m2,replica-count=2,container-image-uri=i"};
  f.args = {"--epochs=3,--lr=0.1", "--verbose"};
  f.command = "python3,/app/t.py";
  f.labels = "team=ml,env=dev";
  Result<json> r = BuildCustomJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json& pools = (*r)["jobSpec"]["workerPoolSpecs"];
  ASSERT_EQ(pools.size(), 3u);
  EXPECT_EQ(pools[1], json::object()) << "placeholder pools stay empty";
  EXPECT_EQ(pools[0]["containerSpec"]["args"], json({"--epochs=3", "--lr=0.1", "--verbose"}));
  EXPECT_EQ(pools[2]["containerSpec"]["command"], json({"python3", "/app/t.py"}));
  EXPECT_EQ((*r)["displayName"], "demo");
  EXPECT_EQ((*r)["labels"], json({{"team", "ml"}, {"env", "dev"}}));
}

TEST(BuildCustomJobTest, NeitherConfigNorWorkerPoolSpec) {
  Result<json> r = BuildCustomJob(Flags());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      r.status().message(),
      "argument (--config=CONFIG --worker-pool-spec=[WORKER_POOL_SPEC,...]): Must be specified.");
}

TEST(BuildCustomJobTest, FirstPoolCannotBeEmpty) {
  CustomJobFlags f = Flags();
  f.worker_pool_specs = {"", "machine-type=m,container-image-uri=i"};
  Result<json> r = BuildCustomJob(f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "Invalid value for [--worker-pool-spec]: Empty value is not allowed for the first "
            "`--worker-pool-spec` flag.");
}

json Config() {
  return json::parse(R"({
    "workerPoolSpecs": [{"machineSpec": {"machineType": "cfg"}, "replicaCount": "1",
                         "containerSpec": {"imageUri": "cfg-img", "args": ["--from-config"]}}],
    "baseOutputDirectory": {"outputUriPrefix": "gs://b/out/"},
    "scheduling": {"timeout": "60s"},
    "serviceAccount": "cfg@sa"})");
}

TEST(BuildCustomJobTest, ConfigOnlyKeepsEverything) {
  CustomJobFlags f = Flags();
  f.config = Config();
  Result<json> r = BuildCustomJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)["jobSpec"], Config());
}

TEST(BuildCustomJobTest, WorkerPoolSpecsReplaceConfigPoolsAndFlagsOverwrite) {
  CustomJobFlags f = Flags();
  f.config = Config();
  f.worker_pool_specs = {"machine-type=flag,container-image-uri=flag-img"};
  f.service_account = "flag@sa";
  f.args = {"--x"};
  Result<json> r = BuildCustomJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json& spec = (*r)["jobSpec"];
  ASSERT_EQ(spec["workerPoolSpecs"].size(), 1u);
  EXPECT_EQ(spec["workerPoolSpecs"][0]["machineSpec"]["machineType"], "flag");
  EXPECT_EQ(spec["workerPoolSpecs"][0]["containerSpec"]["args"], json({"--x"}));
  EXPECT_EQ(spec["serviceAccount"], "flag@sa");
  EXPECT_EQ(spec["baseOutputDirectory"]["outputUriPrefix"], "gs://b/out/")
      << "config-only fields are kept";
  EXPECT_EQ(spec["scheduling"]["timeout"], "60s");
}

TEST(BuildCustomJobTest, ArgsAndCommandApplyToConfigPools) {
  CustomJobFlags f = Flags();
  f.config = Config();
  f.args = {"a,b"};
  f.command = "sh";
  Result<json> r = BuildCustomJob(f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const json& c = (*r)["jobSpec"]["workerPoolSpecs"][0]["containerSpec"];
  EXPECT_EQ(c["args"], json({"a", "b"}));
  EXPECT_EQ(c["command"], json({"sh"}));
}

TEST(BuildCustomJobTest, ConfigPoolsNeedExactlyOneSoftwareSpec) {
  CustomJobFlags f = Flags();
  f.config = json::parse(R"({"workerPoolSpecs": [{"machineSpec": {"machineType": "m"}}, {}]})");
  Result<json> r = BuildCustomJob(f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(
      r.status().message(),
      "Invalid value for [--config]: Exactly one of fields [pythonPackageSpec, containerSpec] "
      "is required for a [workerPoolSpecs] in the YAML config file.");
}

TEST(BuildCustomJobTest, ConfigKeysMustBeCamelCase) {
  CustomJobFlags f = Flags();
  f.config = json::parse(R"({"worker_pool_specs": []})");
  Result<json> r = BuildCustomJob(f);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("[worker_pool_specs]"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace ty::cli
