// Valid ml v1 Job bodies: what they parse to, their canonical form and how jobs
// render back (the ml v1 REST reference: Job, TrainingInput, TrainingOutput).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "format/yaml_json.h"
#include "wire/dialect.h"

namespace ty::wire {

using namespace model;
namespace {

using nlohmann::json;

// docs/contracts/ml-v1.md §7 without `hyperparameters`.
constexpr const char* kSpecExample = R"({"jobId": "census_001",
 "labels": {"owner": "alice"},
 "trainingInput": {
   "scaleTier": "CUSTOM", "region": "us-central1",
   "masterType": "n1-standard-8",
   "masterConfig": {"imageUri": "gcr.io/my-proj/trainer:1",
                    "acceleratorConfig": {"type": "NVIDIA_TESLA_T4", "count": "1"}},
   "workerType": "n1-standard-8", "workerCount": "2",
   "parameterServerType": "n1-highmem-8", "parameterServerCount": "1",
   "jobDir": "gs://bucket/census_001",
   "args": ["--epochs=10"],
   "scheduling": {"maxRunningTime": "7200s"}}})";

ParsedJob MustParse(const json& body) {
  Result<ParsedJob> r = ParseMlJob(body);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ParsedJob{};
}

json PackageJob() {
  return json::parse(R"({"jobId": "pkg_job", "trainingInput": {
      "region": "europe-west4", "runtimeVersion": "2.11", "pythonVersion": "3.7",
      "packageUris": ["gs://b/trainer-0.1.tar.gz", "gs://b/dep.whl"], "pythonModule": "trainer.task",
      "args": ["--steps", "10"]}})");
}

TEST(MlDialectTest, SpecExampleMapsToJobSpec) {
  ParsedJob p = MustParse(json::parse(kSpecExample));
  const JobSpec& s = p.spec;
  EXPECT_EQ(s.dialect, Dialect::kMlV1);
  EXPECT_EQ(s.job_id, "census_001");
  EXPECT_TRUE(s.display_name.empty());
  EXPECT_EQ(s.labels.at("owner"), "alice");
  EXPECT_EQ(s.region, "us-central1");
  EXPECT_EQ(s.scale_tier, "CUSTOM");
  EXPECT_EQ(s.job_dir, "gs://bucket/census_001");
  EXPECT_TRUE(s.base_output_directory.empty());
  EXPECT_FALSE(s.use_chief_in_tf_config);
  EXPECT_EQ(s.scheduling.timeout, 7200LL * 1000000);
  ASSERT_EQ(s.pools.size(), 3u);  // master, workers, parameter servers; no evaluators.

  const WorkerPool& master = s.pools[0];
  EXPECT_EQ(master.replica_count, 1);
  EXPECT_EQ(master.machine.machine_type, "n1-standard-8");
  EXPECT_EQ(master.machine.accelerator_type, "NVIDIA_TESLA_T4");
  EXPECT_EQ(master.machine.accelerator_count, 1);
  ASSERT_TRUE(master.container.has_value());
  EXPECT_EQ(master.container->image_uri, "gcr.io/my-proj/trainer:1");
  EXPECT_TRUE(master.container->command.empty());
  EXPECT_EQ(master.container->args, std::vector<std::string>{"--epochs=10"});

  const WorkerPool& workers = s.pools[1];
  EXPECT_EQ(workers.replica_count, 2);
  EXPECT_EQ(workers.machine.machine_type, "n1-standard-8");
  EXPECT_TRUE(workers.machine.accelerator_type.empty());  // Only the master has a GPU.
  EXPECT_EQ(workers.container->image_uri, "gcr.io/my-proj/trainer:1");  // Defaults to the master's.
  EXPECT_EQ(workers.container->args, std::vector<std::string>{"--epochs=10"});

  EXPECT_EQ(s.pools[2].replica_count, 1);
  EXPECT_EQ(s.pools[2].machine.machine_type, "n1-highmem-8");
}

TEST(MlDialectTest, CanonicalFormKeepsUserFields) {
  ParsedJob p = MustParse(json::parse(kSpecExample));
  json canon = json::parse(p.spec_json);
  EXPECT_EQ(canon["jobId"], "census_001");
  EXPECT_EQ(canon["labels"]["owner"], "alice");
  const json& ti = canon["trainingInput"];
  EXPECT_EQ(ti["workerCount"], "2");
  EXPECT_EQ(ti["parameterServerCount"], "1");
  EXPECT_EQ(ti["masterConfig"]["acceleratorConfig"]["count"], "1");
  EXPECT_EQ(ti["masterConfig"]["acceleratorConfig"]["type"], "NVIDIA_TESLA_T4");
  EXPECT_EQ(ti["scheduling"]["maxRunningTime"], "7200s");
  EXPECT_FALSE(ti.contains("evaluatorCount"));  // No defaults injected.
}

TEST(MlDialectTest, PackageJobUsesPythonPackageSpec) {
  ParsedJob p = MustParse(PackageJob());
  EXPECT_EQ(p.spec.scale_tier, "BASIC");  // Missing scaleTier is proto3 value 0.
  ASSERT_EQ(p.spec.pools.size(), 1u);
  const WorkerPool& master = p.spec.pools[0];
  EXPECT_EQ(master.machine.machine_type, "standard");
  EXPECT_FALSE(master.container.has_value());
  ASSERT_TRUE(master.python_package.has_value());
  // The runtime for runtimeVersion (images/runtimes.h), not part of the request.
  EXPECT_EQ(master.python_package->executor_image_uri, "localhost/trainyard/sklearn-cpu:latest");
  EXPECT_EQ(master.python_package->package_uris,
            (std::vector<std::string>{"gs://b/trainer-0.1.tar.gz", "gs://b/dep.whl"}));
  EXPECT_EQ(master.python_package->python_module, "trainer.task");
  EXPECT_EQ(master.python_package->args, (std::vector<std::string>{"--steps", "10"}));
  EXPECT_FALSE(json::parse(p.spec_json)["trainingInput"].contains("scaleTier"));
}

// Two of the guides' commands, as gcloud sends them (issue 20 item 6).
TEST(MlDialectTest, MachineTypesWithoutAScaleTierMeanCustom) {
  ParsedJob p = MustParse(json::parse(R"({"jobId": "dist", "trainingInput": {
      "region": "us-central1", "masterType": "complex_model_m",
      "masterConfig": {"imageUri": "gcr.io/p/t:1"},
      "workerType": "complex_model_m", "workerCount": "9",
      "parameterServerType": "large_model", "parameterServerCount": "3"}})"));
  EXPECT_EQ(p.spec.scale_tier, "CUSTOM");
  ASSERT_EQ(p.spec.pools.size(), 3u);
  EXPECT_EQ(p.spec.pools[1].replica_count, 9);
  EXPECT_EQ(p.spec.pools[2].replica_count, 3);
  EXPECT_EQ(json::parse(p.spec_json)["trainingInput"]["scaleTier"], "CUSTOM");
}

TEST(MlDialectTest, APackageJobWithoutARuntimeVersionGetsTheDefaultRuntime) {
  ParsedJob p = MustParse(json::parse(R"({"jobId": "basic", "trainingInput": {
      "scaleTier": "BASIC", "region": "us-central1", "packageUris": ["gs://b/t.tar.gz"],
      "pythonModule": "trainer.task"}})"));
  ASSERT_EQ(p.spec.pools.size(), 1u);
  EXPECT_EQ(p.spec.pools[0].python_package->executor_image_uri,
            "localhost/trainyard/sklearn-cpu:latest");
}

TEST(MlDialectTest, PredefinedScaleTiers) {
  struct Case {
    const char* tier;
    std::vector<std::pair<std::string, int64_t>> pools;  // machine type, replicas
  };
  for (const Case& c :
       {Case{"BASIC", {{"standard", 1}}},
        Case{"STANDARD_1", {{"standard", 1}, {"complex_model_s", 4}, {"standard", 2}}},
        Case{"PREMIUM_1", {{"complex_model_l", 1}, {"complex_model_l", 8}, {"large_model", 3}}},
        Case{"BASIC_GPU", {{"standard_gpu", 1}}},
        Case{"BASIC_TPU", {{"standard", 1}, {"cloud_tpu", 1}}}}) {
    json body = PackageJob();
    body["trainingInput"]["scaleTier"] = c.tier;
    ParsedJob p = MustParse(body);
    ASSERT_EQ(p.spec.pools.size(), c.pools.size()) << c.tier;
    for (size_t i = 0; i < c.pools.size(); ++i) {
      EXPECT_EQ(p.spec.pools[i].machine.machine_type, c.pools[i].first) << c.tier << " pool " << i;
      EXPECT_EQ(p.spec.pools[i].replica_count, c.pools[i].second) << c.tier << " pool " << i;
      EXPECT_TRUE(p.spec.pools[i].python_package.has_value());
    }
    EXPECT_EQ(p.spec.scale_tier, c.tier);
  }
  json gpu = PackageJob();
  gpu["trainingInput"]["scaleTier"] = "BASIC_GPU";
  ParsedJob p = MustParse(gpu);
  EXPECT_EQ(p.spec.pools[0].machine.accelerator_type, "NVIDIA_TESLA_K80");
  EXPECT_EQ(p.spec.pools[0].machine.accelerator_count, 1);
  json tpu = PackageJob();
  tpu["trainingInput"]["scaleTier"] = "BASIC_TPU";
  p = MustParse(tpu);
  EXPECT_EQ(p.spec.pools[1].machine.accelerator_type, "TPU_V2");
  EXPECT_EQ(p.spec.pools[1].machine.accelerator_count, 8);
}

TEST(MlDialectTest, LegacyCustomJobWithEvaluatorsAndConfigs) {
  json body = json::parse(R"({"job_id": "legacy_1", "training_input": {
      "scale_tier": "CUSTOM", "region": "us-east1", "master_type": "complex_model_m_gpu",
      "worker_type": "standard_v100", "worker_count": 3, "evaluator_type": "standard", "evaluator_count": "1",
      "master_config": {"image_uri": "img:1", "container_command": ["python", "train.py"],
                        "container_args": ["--role=master"], "disk_config": {"boot_disk_size_gb": 500,
                        "boot_disk_type": "pd-standard"}},
      "worker_config": {"image_uri": "img:worker", "container_args": ["--role=worker"]},
      "use_chief_in_tf_config": true,
      "scheduling": {"max_wait_time": "1800s", "priority": 1000},
      "network": "projects/1/global/networks/n", "service_account": "sa@p", "enable_web_access": true,
      "encryption_config": {"kms_key_name": "k"}}})");
  ParsedJob p = MustParse(body);
  const JobSpec& s = p.spec;
  EXPECT_EQ(s.job_id, "legacy_1");
  EXPECT_TRUE(s.use_chief_in_tf_config);
  EXPECT_EQ(s.scheduling.max_wait, 1800LL * 1000000);
  EXPECT_EQ(s.scheduling.priority, 1000);
  ASSERT_EQ(s.pools.size(), 4u);
  EXPECT_TRUE(s.pools[2].empty());  // No parameter servers.
  EXPECT_EQ(s.pools[0].machine.accelerator_type,
            "NVIDIA_TESLA_K80");  // Implied by the legacy type.
  EXPECT_EQ(s.pools[0].machine.accelerator_count, 4);
  EXPECT_EQ(s.pools[0].disk.boot_disk_size_gb, 500);
  EXPECT_EQ(s.pools[0].disk.boot_disk_type, "pd-standard");
  EXPECT_EQ(s.pools[0].container->command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(s.pools[0].container->args, std::vector<std::string>{"--role=master"});
  EXPECT_EQ(s.pools[1].replica_count, 3);
  EXPECT_EQ(s.pools[1].machine.accelerator_type, "NVIDIA_TESLA_V100");
  EXPECT_EQ(s.pools[1].container->image_uri, "img:worker");
  EXPECT_EQ(s.pools[1].container->command,
            (std::vector<std::string>{"python", "train.py"}));  // Master's.
  EXPECT_EQ(s.pools[1].container->args, std::vector<std::string>{"--role=worker"});
  EXPECT_EQ(s.pools[3].replica_count, 1);
  EXPECT_EQ(s.pools[3].container->image_uri, "img:1");
  EXPECT_EQ(s.pools[3].container->args, std::vector<std::string>{"--role=master"});

  json ti = json::parse(p.spec_json)["trainingInput"];
  EXPECT_EQ(ti["workerCount"], "3");  // Number normalised to an int64 string.
  EXPECT_EQ(ti["masterConfig"]["diskConfig"]["bootDiskSizeGb"], 500);
  EXPECT_EQ(ti["masterConfig"]["containerCommand"], json::array({"python", "train.py"}));
  EXPECT_EQ(ti["encryptionConfig"]["kmsKeyName"], "k");
  EXPECT_EQ(ti["useChiefInTfConfig"], true);
}

TEST(MlDialectTest, TpuWorkerWithComputeEngineMaster) {
  json body = json::parse(
      R"({"jobId": "tpu", "trainingInput": {"scaleTier": "CUSTOM", "region": "us-central1",
      "masterType": "n1-standard-16", "workerType": "cloud_tpu", "workerCount": "1",
      "workerConfig": {"acceleratorConfig": {"type": "TPU_V3", "count": "8"}, "tpuTfVersion": "2.3"},
      "masterConfig": {"imageUri": "img"}}})");
  ParsedJob p = MustParse(body);
  EXPECT_EQ(p.spec.pools[1].machine.machine_type, "cloud_tpu");
  EXPECT_EQ(p.spec.pools[1].machine.accelerator_type, "TPU_V3");
  EXPECT_EQ(p.spec.pools[1].machine.accelerator_count, 8);
}

TEST(MlDialectTest, OutputOnlyFieldsAndEtagAreIgnored) {
  json body = PackageJob();
  body["state"] = "RUNNING";
  body["createTime"] = "2020-01-01T00:00:00Z";
  body["errorMessage"] = "x";
  body["trainingOutput"] = {{"consumedMLUnits", 1.5}};
  body["etag"] = "AAAA";
  body["jobPosition"] = "3";
  ParsedJob p = MustParse(body);
  json canon = json::parse(p.spec_json);
  for (const char* f :
       {"state", "createTime", "errorMessage", "trainingOutput", "etag", "jobPosition"}) {
    EXPECT_FALSE(canon.contains(f)) << f;
  }
}

TEST(MlDialectTest, YamlConfigThroughFormat) {
  Result<json> body = format::ParseYamlOrJson(R"(
jobId: yaml_job
trainingInput:
  scaleTier: CUSTOM
  region: us-central1
  masterType: n1-highcpu-16
  workerType: n1-highcpu-16
  workerCount: 2
  masterConfig:
    imageUri: gcr.io/p/t:1
    containerArgs: ["--batch", "64"]
)");
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  ParsedJob p = MustParse(*body);
  EXPECT_EQ(p.spec.pools[1].replica_count, 2);
  EXPECT_EQ(p.spec.pools[1].container->args, (std::vector<std::string>{"--batch", "64"}));
}

TEST(MlDialectTest, StoredSpecParsesToTheSameSpec) {
  for (const json& body : {json::parse(kSpecExample), PackageJob()}) {
    ParsedJob p = MustParse(body);
    Result<JobSpec> stored = ParseStoredSpec(Dialect::kMlV1, p.kind, p.spec_json);
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    EXPECT_EQ(stored->job_id, p.spec.job_id);
    EXPECT_EQ(stored->region, p.spec.region);
    EXPECT_EQ(stored->scale_tier, p.spec.scale_tier);
    EXPECT_EQ(stored->job_dir, p.spec.job_dir);
    EXPECT_EQ(stored->labels, p.spec.labels);
    EXPECT_EQ(stored->scheduling.timeout, p.spec.scheduling.timeout);
    ASSERT_EQ(stored->pools.size(), p.spec.pools.size());
    for (size_t i = 0; i < p.spec.pools.size(); ++i) {
      EXPECT_EQ(stored->pools[i].replica_count, p.spec.pools[i].replica_count);
      EXPECT_EQ(stored->pools[i].machine.machine_type, p.spec.pools[i].machine.machine_type);
      EXPECT_EQ(stored->pools[i].container.has_value(), p.spec.pools[i].container.has_value());
    }
    Result<ParsedJob> again = ParseMlJob(json::parse(p.spec_json));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->spec_json, p.spec_json);
  }
}

Job MakeJob(const ParsedJob& p) {
  Job job;
  job.uid = "42";
  job.dialect = Dialect::kMlV1;
  job.project = "my-proj";
  job.spec = p.spec;
  job.spec_json = p.spec_json;
  job.create_time = 1542000000LL * 1000000;
  return job;
}

// ml v1 puts a running job's shells in trainingOutput, keyed by node name.
TEST(MlDialectTest, WebAccessUrisGoInTrainingOutput) {
  json body = json::parse(kSpecExample);
  body["trainingInput"]["enableWebAccess"] = true;
  Job job = MakeJob(MustParse(body));
  job.state = JobState::kRunning;
  ReplicaRecord master;
  master.task_name = "master-replica-0";
  master.state = ReplicaState::kRunning;
  job.replicas.push_back(master);
  json out = RenderJob(job, RenderOptions{.web_access_origin = "https://h"});
  EXPECT_EQ(out["trainingOutput"]["webAccessUris"],
            json({{"master-replica-0", "https://h/console/shell.html#/v1/projects/my-proj/jobs/" +
                                           job.spec.job_id + ":shell?replica=master-replica-0"}}));
}

TEST(MlDialectTest, RenderQueuedJob) {
  Job job = MakeJob(MustParse(json::parse(kSpecExample)));
  json out = RenderJob(job, {});
  EXPECT_EQ(out["jobId"], "census_001");
  EXPECT_EQ(out["state"], "QUEUED");
  EXPECT_EQ(out["createTime"], "2018-11-12T05:20:00Z");
  EXPECT_FALSE(out.contains("startTime"));
  EXPECT_FALSE(out.contains("endTime"));
  EXPECT_FALSE(out.contains("errorMessage"));
  EXPECT_FALSE(out.contains("name"));
  EXPECT_FALSE(out.contains("jobPosition"));
  EXPECT_TRUE(out["etag"].is_string());
  EXPECT_FALSE(out["etag"].get<std::string>().empty());
  EXPECT_EQ(out["trainingInput"]["workerCount"], "2");
  EXPECT_EQ(out["labels"]["owner"], "alice");
}

TEST(MlDialectTest, RenderFailedJobAndEtagChangesWithUpdates) {
  Job job = MakeJob(MustParse(json::parse(kSpecExample)));
  std::string first_etag = RenderJob(job, {})["etag"];
  job.state = JobState::kFailed;
  job.start_time = job.create_time + 1000;
  job.end_time = job.create_time + 2000000;
  job.update_time = job.end_time;
  job.error = JobError{13, "The replica master 0 exited with a non-zero status of 1."};
  json out = RenderJob(job, RenderOptions{.enum_as_int = true});  // No effect on ml v1.
  EXPECT_EQ(out["state"], "FAILED");
  EXPECT_EQ(out["startTime"], "2018-11-12T05:20:00.001Z");
  EXPECT_EQ(out["endTime"], "2018-11-12T05:20:02Z");
  EXPECT_EQ(out["errorMessage"], "The replica master 0 exited with a non-zero status of 1.");
  EXPECT_FALSE(out.contains("error"));
  EXPECT_NE(out["etag"], first_etag);
  EXPECT_EQ(out["trainingInput"]["masterConfig"]["acceleratorConfig"]["type"], "NVIDIA_TESLA_T4");
}

TEST(MlDialectTest, FinishedJobsCarryTrainingOutputAsGoogleReturnsIt) {
  Job job = MakeJob(MustParse(json::parse(kSpecExample)));  // Master + 2 workers + 3 ps.
  EXPECT_FALSE(RenderJob(job, {}).contains("trainingOutput"));
  job.state = JobState::kSucceeded;
  job.start_time = job.create_time;
  job.end_time = job.start_time + 1800LL * 1000000;  // Half an hour.
  json out = RenderJob(job, {});
  ASSERT_TRUE(out.contains("trainingOutput")) << out.dump();
  int64_t replicas = 1 + std::stoll(out["trainingInput"].value("workerCount", "0")) +
                     std::stoll(out["trainingInput"].value("parameterServerCount", "0"));
  EXPECT_DOUBLE_EQ(out["trainingOutput"]["consumedMLUnits"].get<double>(), replicas * 0.5);
  EXPECT_FALSE(out["trainingOutput"].contains("isHyperparameterTuningJob"));
  job.start_time = 0;  // Cancelled while queued: it never ran.
  job.state = JobState::kCancelled;
  EXPECT_FALSE(RenderJob(job, {}).contains("trainingOutput"));
}

TEST(MlDialectTest, EtagIsBase64OfTheUpdateTime) {
  Job job = MakeJob(MustParse(PackageJob()));
  job.update_time = 0x0102030405060708LL;
  EXPECT_EQ(RenderJob(job, {})["etag"], "AQIDBAUGBwg=");
}

TEST(MlDialectTest, StateNames) {
  for (JobState s :
       {JobState::kUnspecified, JobState::kQueued, JobState::kPreparing, JobState::kRunning,
        JobState::kSucceeded, JobState::kFailed, JobState::kCancelling, JobState::kCancelled}) {
    std::string name = StateWireName(Dialect::kMlV1, s);
    EXPECT_EQ(name.find("JOB_STATE_"), std::string::npos);
    EXPECT_EQ(StateFromWireName(Dialect::kMlV1, name), s);
  }
  EXPECT_EQ(StateWireName(Dialect::kMlV1, JobState::kPreparing), "PREPARING");
  EXPECT_EQ(StateWireName(Dialect::kMlV1, JobState::kUnspecified), "STATE_UNSPECIFIED");
  EXPECT_EQ(StateFromWireName(Dialect::kMlV1, "JOB_STATE_RUNNING"), std::nullopt);
  EXPECT_EQ(StateFromWireName(Dialect::kMlV1, "3"), std::nullopt);
}

}  // namespace
}  // namespace ty::wire
