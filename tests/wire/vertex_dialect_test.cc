// Valid Vertex CustomJob bodies: what they parse to, their canonical form and how
// jobs render back (the Vertex REST reference: CustomJob, CustomJobSpec, JobState).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "format/yaml_json.h"
#include "wire/dialect.h"

namespace ty::wire {

using namespace model;
namespace {

using nlohmann::json;

// docs/contracts/vertex-v1.md §10.
constexpr const char* kSpecExample = R"({"displayName": "train-1",
 "labels": {"team": "ml"},
 "jobSpec": {
   "workerPoolSpecs": [
     {"machineSpec": {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1},
      "replicaCount": "1",
      "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/trainer:1", "args": ["--epochs=10"],
                        "env": [{"name": "MODE", "value": "train"}]}},
     {"machineSpec": {"machineType": "n1-standard-8"}, "replicaCount": "2",
      "containerSpec": {"imageUri": "us-docker.pkg.dev/p/r/trainer:1"}},
     {}],
   "scheduling": {"timeout": "7200s", "restartJobOnWorkerRestart": false},
   "baseOutputDirectory": {"outputUriPrefix": "gs://bucket/train-1/"}}})";

ParsedJob MustParse(const json& body) {
  Result<ParsedJob> r = ParseVertexCustomJob(body);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ParsedJob{};
}

TEST(VertexDialectTest, SpecExampleMapsToJobSpec) {
  ParsedJob p = MustParse(json::parse(kSpecExample));
  const JobSpec& s = p.spec;
  EXPECT_EQ(s.dialect, Dialect::kVertex);
  EXPECT_EQ(s.display_name, "train-1");
  EXPECT_TRUE(s.job_id.empty());
  EXPECT_EQ(s.labels, (std::map<std::string, std::string>{{"team", "ml"}}));
  ASSERT_EQ(s.pools.size(), 2u);  // The trailing `{}` placeholder is dropped.

  const WorkerPool& chief = s.pools[0];
  EXPECT_EQ(chief.replica_count, 1);
  EXPECT_EQ(chief.machine.machine_type, "n1-standard-8");
  EXPECT_EQ(chief.machine.accelerator_type, "NVIDIA_TESLA_T4");
  EXPECT_EQ(chief.machine.accelerator_count, 1);
  ASSERT_TRUE(chief.container.has_value());
  EXPECT_FALSE(chief.python_package.has_value());
  EXPECT_EQ(chief.container->image_uri, "us-docker.pkg.dev/p/r/trainer:1");
  EXPECT_EQ(chief.container->args, std::vector<std::string>{"--epochs=10"});
  EXPECT_TRUE(chief.container->command.empty());
  ASSERT_EQ(chief.container->env.size(), 1u);
  EXPECT_EQ(chief.container->env[0].name, "MODE");
  EXPECT_EQ(chief.container->env[0].value, "train");

  EXPECT_EQ(s.pools[1].replica_count, 2);
  EXPECT_TRUE(s.pools[1].machine.accelerator_type.empty());
  EXPECT_EQ(s.scheduling.timeout, 7200LL * 1000000);
  EXPECT_FALSE(s.scheduling.restart_job_on_worker_restart);
  EXPECT_EQ(s.scheduling.max_wait, 0);
  EXPECT_EQ(s.base_output_directory, "gs://bucket/train-1/");
  EXPECT_TRUE(s.region.empty());
  EXPECT_TRUE(s.scale_tier.empty());
}

TEST(VertexDialectTest, CanonicalFormKeepsUserFieldsAndNormalisesTypes) {
  ParsedJob p = MustParse(json::parse(kSpecExample));
  json canon = json::parse(p.spec_json);
  EXPECT_EQ(canon["displayName"], "train-1");
  const json& pools = canon["jobSpec"]["workerPoolSpecs"];
  ASSERT_EQ(pools.size(), 3u);  // The placeholder stays, as the client sent it.
  EXPECT_EQ(pools[0]["replicaCount"], "1");
  EXPECT_EQ(pools[1]["replicaCount"], "2");
  EXPECT_EQ(pools[2], json::object());
  EXPECT_EQ(pools[0]["machineSpec"]["acceleratorCount"], 1);
  EXPECT_EQ(pools[0]["machineSpec"]["acceleratorType"], "NVIDIA_TESLA_T4");
  EXPECT_EQ(canon["jobSpec"]["scheduling"]["timeout"], "7200s");
  EXPECT_EQ(canon["jobSpec"]["scheduling"]["restartJobOnWorkerRestart"], false);
  EXPECT_EQ(canon["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"], "gs://bucket/train-1/");
  EXPECT_EQ(canon["labels"]["team"], "ml");
  EXPECT_FALSE(canon.contains("name"));
  EXPECT_FALSE(canon.contains("state"));
}

TEST(VertexDialectTest, GapicStyleBodyWithNumbersAndOutputOnlyFields) {
  // What @google-cloud/aiplatform sends: enums as numbers, int64 as strings, empty maps,
  // plus output-only fields a client may echo back.
  json body = json::parse(R"({
    "name": "projects/p/locations/l/customJobs/1", "state": 3, "createTime": "2024-01-01T00:00:00Z",
    "webAccessUris": {}, "satisfiesPzs": false, "error": {"code": 1, "message": "x"},
    "displayName": "gapic", "labels": {},
    "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "a2-highgpu-2g", "acceleratorType": 8, "acceleratorCount": 2},
        "replicaCount": "1",
        "containerSpec": {"imageUri": "img", "command": ["python", "-m", "t"]}}],
      "scheduling": {"strategy": 4, "timeout": "60s"}}})");
  ParsedJob p = MustParse(body);
  EXPECT_EQ(p.spec.pools[0].machine.accelerator_type, "NVIDIA_TESLA_A100");
  EXPECT_EQ(p.spec.pools[0].machine.accelerator_count, 2);
  EXPECT_EQ(p.spec.pools[0].container->command, (std::vector<std::string>{"python", "-m", "t"}));
  json canon = json::parse(p.spec_json);
  EXPECT_EQ(canon["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"],
            "NVIDIA_TESLA_A100");
  EXPECT_EQ(canon["jobSpec"]["scheduling"]["strategy"], "SPOT");
  for (const char* f : {"name", "state", "createTime", "webAccessUris", "satisfiesPzs", "error"}) {
    EXPECT_FALSE(canon.contains(f)) << f;
  }
}

TEST(VertexDialectTest, SnakeCaseKeysAndNumericInt64) {
  json body = json::parse(R"({"display_name": "snake", "job_spec": {"worker_pool_specs": [{
      "machine_spec": {"machine_type": "e2-standard-4"}, "replica_count": 1,
      "python_package_spec": {"executor_image_uri": "us-docker.pkg.dev/vertex-ai/training/tf:latest",
                              "package_uris": ["gs://b/trainer-0.1.tar.gz"], "python_module": "trainer.task",
                              "args": ["--x"], "env": [{"name": "_A1", "value": "v"}]},
      "disk_spec": {"boot_disk_type": "pd-standard", "boot_disk_size_gb": 200}}],
    "base_output_directory": {"output_uri_prefix": "gs://b/out"},
    "scheduling": {"disable_retries": true, "restart_job_on_worker_restart": true,
                   "max_wait_duration": "3600s"}}})");
  ParsedJob p = MustParse(body);
  const WorkerPool& pool = p.spec.pools[0];
  ASSERT_TRUE(pool.python_package.has_value());
  EXPECT_EQ(pool.python_package->executor_image_uri,
            "us-docker.pkg.dev/vertex-ai/training/tf:latest");
  EXPECT_EQ(pool.python_package->package_uris,
            std::vector<std::string>{"gs://b/trainer-0.1.tar.gz"});
  EXPECT_EQ(pool.python_package->python_module, "trainer.task");
  EXPECT_EQ(pool.python_package->args, std::vector<std::string>{"--x"});
  EXPECT_EQ(pool.python_package->env[0].name, "_A1");
  EXPECT_EQ(pool.disk.boot_disk_type, "pd-standard");
  EXPECT_EQ(pool.disk.boot_disk_size_gb, 200);
  EXPECT_EQ(p.spec.base_output_directory, "gs://b/out/");  // Trailing '/' added.
  EXPECT_TRUE(p.spec.scheduling.disable_retries);
  EXPECT_FALSE(p.spec.scheduling.restart_job_on_worker_restart);  // Forced off by disableRetries.
  EXPECT_EQ(p.spec.scheduling.max_wait, 3600LL * 1000000);
  EXPECT_EQ(p.spec.scheduling.timeout, Scheduling::kDefaultTimeout);

  json canon = json::parse(p.spec_json);
  EXPECT_TRUE(canon.contains("displayName"));
  EXPECT_EQ(canon["jobSpec"]["workerPoolSpecs"][0]["replicaCount"], "1");
  EXPECT_EQ(canon["jobSpec"]["workerPoolSpecs"][0]["diskSpec"]["bootDiskSizeGb"], 200);
  EXPECT_EQ(canon["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"], "gs://b/out");  // As sent.
  EXPECT_EQ(canon["jobSpec"]["scheduling"]["maxWaitDuration"], "3600s");
}

TEST(VertexDialectTest, PlaceholdersInTheMiddleBecomeEmptyPools) {
  json body = json::parse(R"({"displayName": "ps-only", "jobSpec": {"workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1", "containerSpec": {"imageUri": "i"}},
      {"replicaCount": "0", "nfsMounts": []},
      {"machineSpec": {"machineType": "n2-highmem-8"}, "replicaCount": "3", "containerSpec": {"imageUri": "ps"}}]}})");
  ParsedJob p = MustParse(body);
  ASSERT_EQ(p.spec.pools.size(), 3u);
  EXPECT_TRUE(p.spec.pools[1].empty());
  EXPECT_FALSE(p.spec.pools[1].container.has_value());
  EXPECT_EQ(p.spec.pools[2].replica_count, 3);
  EXPECT_EQ(p.spec.pools[2].container->image_uri, "ps");
}

TEST(VertexDialectTest, OptionalJobSpecFieldsAreKept) {
  json body = json::parse(R"({"displayName": "all", "encryptionSpec": {"kmsKeyName": "k"},
    "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "cloud-tpu", "acceleratorType": "TPU_V3", "acceleratorCount": 8,
                        "tpuTopology": "2x2", "reservationAffinity": {"reservationAffinityType": 2}},
        "replicaCount": "1", "containerSpec": {"imageUri": "i"},
        "nfsMounts": [{"server": "10.0.0.2", "path": "/export", "mountPoint": "data"}],
        "lustreMounts": [{"instanceIp": "10.0.0.3", "volumeHandle": "v", "filesystem": "fs", "mountPoint": "l"}]}],
      "serviceAccount": "sa@p.iam.gserviceaccount.com", "network": "projects/1/global/networks/n",
      "reservedIpRanges": ["r1"], "tensorboard": "projects/p/locations/l/tensorboards/1",
      "baseOutputDirectory": {"outputUriPrefix": "gs://b/out"},
      "enableWebAccess": true, "enableDashboardAccess": false, "experiment": "e", "experimentRun": "r",
      "persistentResourceId": "pr", "protectedArtifactLocationId": "loc", "models": ["m"],
      "pscInterfaceConfig": {"networkAttachment": "na"},
      "scheduling": {"strategy": "FLEX_START"}}})");
  ParsedJob p = MustParse(body);
  EXPECT_EQ(p.spec.pools[0].machine.accelerator_type, "TPU_V3");
  EXPECT_EQ(p.spec.scheduling.max_wait, 24LL * 3600 * 1000000);  // FLEX_START default.
  json canon = json::parse(p.spec_json);
  EXPECT_EQ(canon["encryptionSpec"]["kmsKeyName"], "k");
  const json& js = canon["jobSpec"];
  EXPECT_EQ(js["serviceAccount"], "sa@p.iam.gserviceaccount.com");
  EXPECT_EQ(js["reservedIpRanges"], json::array({"r1"}));
  EXPECT_EQ(js["enableWebAccess"], true);
  EXPECT_EQ(js["pscInterfaceConfig"]["networkAttachment"], "na");
  EXPECT_EQ(
      js["workerPoolSpecs"][0]["machineSpec"]["reservationAffinity"]["reservationAffinityType"],
      "ANY_RESERVATION");
  EXPECT_EQ(js["workerPoolSpecs"][0]["nfsMounts"][0]["mountPoint"], "data");
  EXPECT_EQ(js["workerPoolSpecs"][0]["lustreMounts"][0]["filesystem"], "fs");
  EXPECT_FALSE(js["scheduling"].contains("maxWaitDuration"));  // Default not injected.
  EXPECT_EQ(p.spec.tensorboard, "projects/p/locations/l/tensorboards/1");
}

TEST(VertexDialectTest, ATensorboardIsAResourceNameAndNeedsAnOutputDirectory) {
  auto with = [](const json& extra) {
    json body = {{"displayName", "tb"},
                 {"jobSpec",
                  {{"workerPoolSpecs",
                    {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                      {"replicaCount", "1"},
                      {"containerSpec", {{"imageUri", "i"}}}}}}}}};
    body["jobSpec"].update(extra);
    return ParseVertexCustomJob(body);
  };
  Result<ParsedJob> no_base = with({{"tensorboard", "projects/p/locations/l/tensorboards/1"}});
  ASSERT_FALSE(no_base.ok());
  EXPECT_EQ(no_base.status().field(), "jobSpec.baseOutputDirectory.outputUriPrefix");
  for (const char* bad : {"tensorboards/1", "projects/p/locations/l/tensorboards/", "x/p/y/l/z/1",
                          "projects/p/locations/l/tensorboards/1/experiments/e"}) {
    Result<ParsedJob> r =
        with({{"tensorboard", bad}, {"baseOutputDirectory", {{"outputUriPrefix", "gs://b/o"}}}});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().field(), "jobSpec.tensorboard") << bad;
  }
  Result<ParsedJob> fine = with({{"tensorboard", "projects/p/locations/l/tensorboards/1"},
                                 {"baseOutputDirectory", {{"outputUriPrefix", "gs://b/o"}}}});
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ(fine->spec.tensorboard, "projects/p/locations/l/tensorboards/1");
}

TEST(VertexDialectTest, InternationalLabelsAndLongDisplayNameInCharacters) {
  std::string name;
  for (int i = 0; i < 128; ++i) name += "é";  // 128 characters, 256 bytes.
  json body = {{"displayName", name},
               {"labels", {{"équipe", "données"}, {"k_1-x", ""}}},
               {"jobSpec",
                {{"workerPoolSpecs",
                  {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                    {"replicaCount", "1"},
                    {"containerSpec", {{"imageUri", "i"}}}}}}}}};
  ParsedJob p = MustParse(body);
  EXPECT_EQ(p.spec.labels.at("équipe"), "données");
}

TEST(VertexDialectTest, YamlConfigThroughFormat) {
  Result<json> body = format::ParseYamlOrJson(R"(
displayName: from-yaml
jobSpec:
  workerPoolSpecs:
  - machineSpec:
      machineType: n1-standard-4
    replicaCount: 1
    containerSpec:
      imageUri: gcr.io/p/t:1
      args: ["--steps", "100"]
  - machineSpec:
      machineType: n1-standard-4
    replicaCount: 2
    containerSpec:
      imageUri: gcr.io/p/t:1
)");
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  ParsedJob p = MustParse(*body);
  EXPECT_EQ(p.spec.pools[1].replica_count, 2);
  EXPECT_EQ(p.spec.pools[0].container->args, (std::vector<std::string>{"--steps", "100"}));
  EXPECT_EQ(json::parse(p.spec_json)["jobSpec"]["workerPoolSpecs"][1]["replicaCount"], "2");
}

TEST(VertexDialectTest, StoredSpecParsesToTheSameSpec) {
  for (const char* text : {kSpecExample}) {
    ParsedJob p = MustParse(json::parse(text));
    Result<JobSpec> stored = ParseStoredSpec(Dialect::kVertex, p.kind, p.spec_json);
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    EXPECT_EQ(stored->display_name, p.spec.display_name);
    EXPECT_EQ(stored->labels, p.spec.labels);
    ASSERT_EQ(stored->pools.size(), p.spec.pools.size());
    for (size_t i = 0; i < p.spec.pools.size(); ++i) {
      EXPECT_EQ(stored->pools[i].replica_count, p.spec.pools[i].replica_count);
      EXPECT_EQ(stored->pools[i].machine.machine_type, p.spec.pools[i].machine.machine_type);
      EXPECT_EQ(stored->pools[i].machine.accelerator_type,
                p.spec.pools[i].machine.accelerator_type);
      EXPECT_EQ(stored->pools[i].container->image_uri, p.spec.pools[i].container->image_uri);
      EXPECT_EQ(stored->pools[i].container->args, p.spec.pools[i].container->args);
    }
    EXPECT_EQ(stored->scheduling.timeout, p.spec.scheduling.timeout);
    EXPECT_EQ(stored->base_output_directory, p.spec.base_output_directory);
    // Canonical form is a fixed point.
    Result<ParsedJob> again = ParseVertexCustomJob(json::parse(p.spec_json));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->spec_json, p.spec_json);
  }
}

TEST(VertexDialectTest, StoredSpecThatIsNotJsonIsInternal) {
  Result<JobSpec> r = ParseStoredSpec(Dialect::kVertex, JobKind::kJob, "{not json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

Job MakeJob(const ParsedJob& p) {
  Job job;
  job.uid = "1234567890123456789";
  job.dialect = Dialect::kVertex;
  job.project = "my-proj";
  job.location = "us-central1";
  job.spec = p.spec;
  job.spec_json = p.spec_json;
  job.create_time = 1600000000LL * 1000000 + 549112;
  job.update_time = 1600000005LL * 1000000;
  return job;
}

TEST(VertexDialectTest, RenderAddsOutputOnlyFields) {
  Job job = MakeJob(MustParse(json::parse(kSpecExample)));
  job.state = JobState::kPreparing;
  json out = RenderJob(job, {});
  EXPECT_EQ(out["name"], "projects/my-proj/locations/us-central1/customJobs/1234567890123456789");
  EXPECT_EQ(out["state"], "JOB_STATE_PENDING");
  EXPECT_EQ(out["createTime"], "2020-09-13T12:26:40.549112Z");
  EXPECT_EQ(out["updateTime"], "2020-09-13T12:26:45Z");
  EXPECT_FALSE(out.contains("startTime"));  // Zero times are omitted.
  EXPECT_FALSE(out.contains("endTime"));
  EXPECT_FALSE(out.contains("error"));
  EXPECT_EQ(out["displayName"], "train-1");
  EXPECT_EQ(out["jobSpec"]["workerPoolSpecs"][1]["replicaCount"], "2");  // int64 as string.
  EXPECT_EQ(out["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"],
            "NVIDIA_TESLA_T4");
}

// enableWebAccess: a terminal page per running replica of a running job, keyed by the
// replica's name, at the origin the caller reached; nothing otherwise.
TEST(VertexDialectTest, WebAccessUrisNameEachRunningReplicasShell) {
  json body = json::parse(kSpecExample);
  body["jobSpec"]["enableWebAccess"] = true;
  Job job = MakeJob(MustParse(body));
  job.state = JobState::kRunning;
  for (int i = 0; i < 3; ++i) {
    ReplicaRecord r;
    r.pool = i == 0 ? 0 : 1;
    r.index = i == 0 ? 0 : i - 1;
    r.task_name = "workerpool" + std::to_string(r.pool) + "-" + std::to_string(r.index);
    r.state = i == 2 ? ReplicaState::kSucceeded : ReplicaState::kRunning;
    job.replicas.push_back(r);
  }
  const RenderOptions at{.web_access_origin = "http://box:8080"};
  json out = RenderJob(job, at);
  EXPECT_EQ(out["webAccessUris"],
            json({{"workerpool0-0",
                   "http://box:8080/console/shell.html#/v1/projects/my-proj/locations/"
                   "us-central1/customJobs/1234567890123456789:shell?replica=workerpool0-0"},
                  {"workerpool1-0",
                   "http://box:8080/console/shell.html#/v1/projects/my-proj/locations/"
                   "us-central1/customJobs/1234567890123456789:shell?replica=workerpool1-0"}}));
  EXPECT_FALSE(RenderJob(job, {}).contains("webAccessUris"));  // No origin known.
  job.state = JobState::kSucceeded;
  EXPECT_FALSE(RenderJob(job, at).contains("webAccessUris"));
  job.state = JobState::kRunning;
  job.spec.enable_web_access = false;
  EXPECT_FALSE(RenderJob(job, at).contains("webAccessUris"));
}

TEST(VertexDialectTest, RenderFailedJobWithErrorAndEnumsAsInt) {
  json body = json::parse(kSpecExample);
  body["jobSpec"]["scheduling"]["strategy"] = "SPOT";
  Job job = MakeJob(MustParse(body));
  job.state = JobState::kCancelled;
  job.start_time = job.create_time + 1000000;
  job.end_time = job.create_time + 2000000;
  job.error = JobError{1, "Job was cancelled."};
  json out = RenderJob(job, RenderOptions{.enum_as_int = true});
  EXPECT_EQ(out["state"], 7);
  EXPECT_EQ(out["error"], json({{"code", 1}, {"message", "Job was cancelled."}}));
  EXPECT_EQ(out["startTime"], "2020-09-13T12:26:41.549112Z");
  EXPECT_EQ(out["endTime"], "2020-09-13T12:26:42.549112Z");
  EXPECT_EQ(out["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"], 5);
  EXPECT_EQ(out["jobSpec"]["scheduling"]["strategy"], 4);
  EXPECT_EQ(out["jobSpec"]["workerPoolSpecs"][0]["replicaCount"], "1");  // int64 stays a string.
}

TEST(VertexDialectTest, StateNamesAndNumbers) {
  struct Case {
    JobState state;
    const char* name;
    int number;
  };
  for (const Case& c : {Case{JobState::kUnspecified, "JOB_STATE_UNSPECIFIED", 0},
                        Case{JobState::kQueued, "JOB_STATE_QUEUED", 1},
                        Case{JobState::kPreparing, "JOB_STATE_PENDING", 2},
                        Case{JobState::kRunning, "JOB_STATE_RUNNING", 3},
                        Case{JobState::kSucceeded, "JOB_STATE_SUCCEEDED", 4},
                        Case{JobState::kFailed, "JOB_STATE_FAILED", 5},
                        Case{JobState::kCancelling, "JOB_STATE_CANCELLING", 6},
                        Case{JobState::kCancelled, "JOB_STATE_CANCELLED", 7}}) {
    EXPECT_EQ(StateWireName(Dialect::kVertex, c.state), c.name);
    EXPECT_EQ(VertexStateNumber(c.state), c.number);
    EXPECT_EQ(StateFromWireName(Dialect::kVertex, c.name), c.state);
    EXPECT_EQ(StateFromWireName(Dialect::kVertex, std::to_string(c.number)), c.state);
  }
  EXPECT_EQ(StateFromWireName(Dialect::kVertex, "RUNNING"), std::nullopt);
  EXPECT_EQ(StateFromWireName(Dialect::kVertex, "JOB_STATE_PAUSED"), std::nullopt);
  EXPECT_EQ(StateFromWireName(Dialect::kVertex, "JOB_STATE_PREPARING"), std::nullopt);
  EXPECT_EQ(StateFromWireName(Dialect::kVertex, "12"), std::nullopt);
}

}  // namespace
}  // namespace ty::wire
