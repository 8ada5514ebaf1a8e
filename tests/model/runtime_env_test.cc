// Golden tests: what each replica receives (docs/contracts/runtime.md §2-§6), byte-exact.
#include "model/runtime_env.h"

#include <gtest/gtest.h>

namespace ty::model {
namespace {

WorkerPool Pool(int64_t replicas, const std::string& image = "img") {
  WorkerPool p;
  p.replica_count = replicas;
  p.machine.machine_type = "n1-standard-4";
  if (replicas > 0) p.container = ContainerSpec{image, {}, {}, {}};
  return p;
}

std::string Env(const ReplicaRuntime& rt, const std::string& name) {
  for (const auto& e : rt.env) {
    if (e.name == name) return e.value;
  }
  return "<unset>";
}

Job VertexJob(std::vector<WorkerPool> pools) {
  Job job;
  job.uid = "42";
  job.dialect = Dialect::kVertex;
  job.project = "proj";
  job.location = "us-central1";
  job.spec.dialect = Dialect::kVertex;
  job.spec.pools = std::move(pools);
  job.spec_json = R"({"displayName":"d","jobSpec":{"workerPoolSpecs":[{"replicaCount":"1"}]}})";
  return job;
}

TEST(RuntimeEnvTest, StorageClientsPointAtTheDaemonUnlessTheUserSaysOtherwise) {
  Job job = VertexJob({Pool(1)});
  EXPECT_EQ(Env(BuildReplicaRuntime(job, 0, 0), "STORAGE_EMULATOR_HOST"), "<unset>");
  RuntimeOptions options;
  options.storage_endpoint = "http://host.containers.internal:4443";
  ReplicaRuntime rt = BuildReplicaRuntime(job, 0, 0, options);
  EXPECT_EQ(Env(rt, "STORAGE_EMULATOR_HOST"), "http://host.containers.internal:4443");
  EXPECT_EQ(Env(rt, "CLOUD_STORAGE_EMULATOR_ENDPOINT"), "http://host.containers.internal:4443");
  job.spec.pools[0].container->env = {{"STORAGE_EMULATOR_HOST", "http://elsewhere:1"}};
  EXPECT_EQ(Env(BuildReplicaRuntime(job, 0, 0, options), "STORAGE_EMULATOR_HOST"),
            "http://elsewhere:1");
}

TEST(RuntimeEnvTest, VertexSingleReplicaHasClusterSpecButNoTfConfig) {
  Job job = VertexJob({Pool(1)});
  ReplicaRuntime rt = BuildReplicaRuntime(job, 0, 0);
  EXPECT_EQ(Env(rt, "TF_CONFIG"), "<unset>");
  EXPECT_EQ(
      Env(rt, "CLUSTER_SPEC"),
      R"({"cluster":{"workerpool0":["ty-42-workerpool0-0:2222"]},"environment":"cloud",)"
      R"("task":{"type":"workerpool0","index":0},"job":{"worker_pool_specs":[{"replica_count":"1"}]}})");
  EXPECT_EQ(Env(rt, "RANK"), "0");
  EXPECT_EQ(Env(rt, "WORLD_SIZE"), "1");
  EXPECT_EQ(Env(rt, "MASTER_ADDR"), "ty-42-workerpool0-0");
  EXPECT_EQ(Env(rt, "MASTER_PORT"), "2222");
  EXPECT_EQ(Env(rt, "CLOUD_ML_JOB_ID"), "42");
  EXPECT_EQ(Env(rt, "AIP_MODEL_DIR"), "<unset>");
}

TEST(RuntimeEnvTest, VertexDistributedTfConfigMapsPoolsToRoles) {
  Job job = VertexJob({Pool(1), Pool(2), Pool(1), Pool(1)});
  ReplicaRuntime worker1 = BuildReplicaRuntime(job, 1, 1);
  EXPECT_EQ(
      Env(worker1, "TF_CONFIG"),
      R"({"cluster":{"chief":["ty-42-workerpool0-0:2222"],"worker":["ty-42-workerpool1-0:2222",)"
      R"("ty-42-workerpool1-1:2222"],"ps":["ty-42-workerpool2-0:2222"]},"task":{"type":"worker","index":1},)"
      R"("job":{"worker_pool_specs":[{"replica_count":"1"}]},"environment":"cloud"})");
  EXPECT_EQ(Env(worker1, "RANK"), "2");
  EXPECT_EQ(Env(worker1, "WORLD_SIZE"), "3");
  ReplicaRuntime evaluator = BuildReplicaRuntime(job, 3, 0);
  std::string tf = Env(evaluator, "TF_CONFIG");
  EXPECT_NE(tf.find(R"("task":{"type":"evaluator","index":0})"), std::string::npos) << tf;
  EXPECT_EQ(tf.find("workerpool3"), std::string::npos);  // Evaluators are never in `cluster`.
  EXPECT_NE(Env(evaluator, "CLUSTER_SPEC").find(R"("workerpool3":["ty-42-workerpool3-0:2222"])"),
            std::string::npos);
}

TEST(RuntimeEnvTest, VertexEmptyPlaceholderPoolsAreLeftOut) {
  Job job = VertexJob({Pool(1), Pool(0), Pool(1)});
  std::string cs = Env(BuildReplicaRuntime(job, 2, 0), "CLUSTER_SPEC");
  EXPECT_EQ(cs.find("workerpool1"), std::string::npos);
  EXPECT_NE(cs.find(R"("task":{"type":"workerpool2","index":0})"), std::string::npos);
}

TEST(RuntimeEnvTest, OutputDirectoriesFromBaseOutputDirectory) {
  Job job = VertexJob({Pool(1)});
  job.spec.base_output_directory = "gs://b/run/";
  ReplicaRuntime rt = BuildReplicaRuntime(job, 0, 0);
  EXPECT_EQ(Env(rt, "AIP_MODEL_DIR"), "gs://b/run/model/");
  EXPECT_EQ(Env(rt, "AIP_CHECKPOINT_DIR"), "gs://b/run/checkpoints/");
  EXPECT_EQ(Env(rt, "AIP_TENSORBOARD_LOG_DIR"), "gs://b/run/logs/");
  RuntimeOptions trial;
  trial.trial_id = "3";
  ReplicaRuntime rt3 = BuildReplicaRuntime(job, 0, 0, trial);
  EXPECT_EQ(Env(rt3, "AIP_MODEL_DIR"), "gs://b/run/3/model/");
  EXPECT_EQ(Env(rt3, "CLOUD_ML_TRIAL_ID"), "3");
}

TEST(RuntimeEnvTest, MlSingleReplicaAlwaysHasTfConfigWithMaster) {
  Job job;
  job.uid = "7";
  job.dialect = Dialect::kMlV1;
  job.project = "proj";
  job.spec.dialect = Dialect::kMlV1;
  job.spec.job_id = "census_1";
  job.spec.pools = {Pool(1)};
  job.spec.job_dir = "gs://b/census";
  job.spec.pools[0].container->args = {"--epochs=2"};
  job.spec_json = R"({"jobId":"census_1","trainingInput":{"scaleTier":"BASIC","region":"r"}})";
  ReplicaRuntime rt = BuildReplicaRuntime(job, 0, 0);
  EXPECT_EQ(Env(rt, "TF_CONFIG"),
            R"({"cluster":{"master":["ty-7-master-0:2222"]},"task":{"type":"master","index":0},)"
            R"("job":{"scale_tier":"BASIC","region":"r"},"environment":"cloud"})");
  EXPECT_EQ(Env(rt, "CLUSTER_SPEC"),
            R"({"cluster":{"master":["ty-7-master-0:2222"]},"environment":"cloud",)"
            R"("task":{"type":"master","index":0},"job":{"scale_tier":"BASIC","region":"r"}})");
  EXPECT_EQ(rt.args, (std::vector<std::string>{"--epochs=2", "--job-dir", "gs://b/census"}));
  EXPECT_EQ(Env(rt, "CLOUD_ML_JOB_ID"), "census_1");
  job.spec.use_chief_in_tf_config = true;
  std::string tf = Env(BuildReplicaRuntime(job, 0, 0), "TF_CONFIG");
  EXPECT_NE(tf.find(R"({"cluster":{"chief":["ty-7-chief-0:2222"]},"task":{"type":"chief")"),
            std::string::npos)
      << tf;
}

TEST(RuntimeEnvTest, UserEnvExpandsReferencesAndOverrides) {
  Job job = VertexJob({Pool(1)});
  job.spec.base_output_directory = "gs://b/x/";
  job.spec.pools[0].container->env = {{"OUT", "$(AIP_MODEL_DIR)final"},
                                      {"LIT", "$$(AIP_MODEL_DIR)"},
                                      {"MISS", "$(NOPE)"},
                                      {"RANK", "override"}};
  ReplicaRuntime rt = BuildReplicaRuntime(job, 0, 0);
  EXPECT_EQ(Env(rt, "OUT"), "gs://b/x/model/final");
  EXPECT_EQ(Env(rt, "LIT"), "$(AIP_MODEL_DIR)");
  EXPECT_EQ(Env(rt, "MISS"), "$(NOPE)");
  EXPECT_EQ(Env(rt, "RANK"), "override");
}

Job MlDistributedJob(bool use_chief) {
  Job job;
  job.uid = "9";
  job.dialect = Dialect::kMlV1;
  job.project = "proj";
  job.spec.dialect = Dialect::kMlV1;
  job.spec.job_id = "dist_1";
  job.spec.use_chief_in_tf_config = use_chief;
  job.spec.pools = {Pool(1), Pool(2), Pool(1), Pool(1)};
  job.spec_json = R"({"jobId":"dist_1","trainingInput":{"scaleTier":"CUSTOM"}})";
  return job;
}

TEST(RuntimeEnvTest, MlDistributedEveryRoleSeesTheSameClusterAndItsOwnTask) {
  Job job = MlDistributedJob(false);
  const std::string cluster =
      R"("cluster":{"master":["ty-9-master-0:2222"],"worker":["ty-9-worker-0:2222","ty-9-worker-1:2222"],)"
      R"("ps":["ty-9-ps-0:2222"]})";
  struct Case {
    int pool, index;
    const char* type;
    const char* rank;
  } cases[] = {{0, 0, "master", "0"},
               {1, 0, "worker", "1"},
               {1, 1, "worker", "2"},
               {2, 0, "ps", "3"},
               {3, 0, "evaluator", "4"}};
  for (const Case& c : cases) {
    ReplicaRuntime rt = BuildReplicaRuntime(job, c.pool, c.index);
    EXPECT_EQ(Env(rt, "TF_CONFIG"), std::string("{") + cluster + R"(,"task":{"type":")" + c.type +
                                        R"(","index":)" + std::to_string(c.index) +
                                        R"(},"job":{"scale_tier":"CUSTOM"},"environment":"cloud"})")
        << c.type << c.index;
    // CLUSTER_SPEC of a custom container lists evaluators too, under their role.
    EXPECT_EQ(
        Env(rt, "CLUSTER_SPEC"),
        std::string(
            R"({"cluster":{"master":["ty-9-master-0:2222"],"worker":["ty-9-worker-0:2222",)"
            R"("ty-9-worker-1:2222"],"ps":["ty-9-ps-0:2222"],"evaluator":["ty-9-evaluator-0:2222"]},)"
            R"("environment":"cloud","task":{"type":")") +
            c.type + R"(","index":)" + std::to_string(c.index) +
            R"(},"job":{"scale_tier":"CUSTOM"}})");
    EXPECT_EQ(Env(rt, "RANK"), c.rank);
    EXPECT_EQ(Env(rt, "WORLD_SIZE"), "3");
    EXPECT_EQ(Env(rt, "MASTER_ADDR"), "ty-9-master-0");
  }
}

TEST(RuntimeEnvTest, MlUseChiefRenamesThePrimaryEverywhere) {
  Job job = MlDistributedJob(true);
  ReplicaRuntime chief = BuildReplicaRuntime(job, 0, 0);
  std::string tf = Env(chief, "TF_CONFIG");
  EXPECT_EQ(tf.rfind(R"({"cluster":{"chief":["ty-9-chief-0:2222"],"worker":)", 0), 0u) << tf;
  EXPECT_NE(tf.find(R"("task":{"type":"chief","index":0})"), std::string::npos) << tf;
  EXPECT_EQ(tf.find("master"), std::string::npos) << tf;
  EXPECT_EQ(Env(chief, "MASTER_ADDR"), "ty-9-chief-0");
  EXPECT_EQ(ReplicaHostname(job, 0, 0), "ty-9-chief-0");
}

TEST(RuntimeEnvTest, VertexEveryRoleOfADistributedJob) {
  Job job = VertexJob({Pool(1), Pool(2), Pool(1), Pool(1)});
  const char* types[] = {"chief", "worker", "ps", "evaluator"};
  for (int pool = 0; pool < 4; ++pool) {
    ReplicaRuntime rt = BuildReplicaRuntime(job, pool, 0);
    std::string tf = Env(rt, "TF_CONFIG");
    EXPECT_NE(tf.find(std::string(R"("task":{"type":")") + types[pool] + R"(","index":0})"),
              std::string::npos)
        << tf;
    std::string cs = Env(rt, "CLUSTER_SPEC");
    EXPECT_NE(cs.find("\"task\":{\"type\":\"workerpool" + std::to_string(pool) + "\",\"index\":0}"),
              std::string::npos)
        << cs;
    EXPECT_EQ(
        cs.rfind(
            R"({"cluster":{"workerpool0":["ty-42-workerpool0-0:2222"],"workerpool1":["ty-42-workerpool1-0:2222",)"
            R"("ty-42-workerpool1-1:2222"],"workerpool2":["ty-42-workerpool2-0:2222"],)"
            R"("workerpool3":["ty-42-workerpool3-0:2222"]},"environment":"cloud",)",
            0),
        0u)
        << cs;
  }
}

// On Slurm the executor places replicas (a host and a reserved port each): the same
// variables, the same meaning, only the addresses differ (issue 21: the golden
// environment holds there too). Every variable but the cluster maps and PyTorch's
// primary address is byte-identical.
TEST(RuntimeEnvTest, PlacedReplicasGetTheSameEnvironmentWithTheirAddresses) {
  Job job = VertexJob({Pool(1), Pool(2), Pool(1)});
  RuntimeOptions placed;
  placed.peer_addresses = {{"n1:12000"}, {"n2:12001", "n2:12002"}, {"n3:12003"}};
  for (int pool = 0; pool < 3; ++pool) {
    ReplicaRuntime local = BuildReplicaRuntime(job, pool, 0);
    ReplicaRuntime slurm = BuildReplicaRuntime(job, pool, 0, placed);
    ASSERT_EQ(local.env.size(), slurm.env.size());
    for (size_t i = 0; i < local.env.size(); ++i) {
      const std::string& name = local.env[i].name;
      ASSERT_EQ(name, slurm.env[i].name);
      std::string expected = local.env[i].value;
      if (name == "TF_CONFIG" || name == "CLUSTER_SPEC") {
        const std::pair<const char*, const char*> moved[] = {
            {"ty-42-workerpool0-0:2222", "n1:12000"},
            {"ty-42-workerpool1-0:2222", "n2:12001"},
            {"ty-42-workerpool1-1:2222", "n2:12002"},
            {"ty-42-workerpool2-0:2222", "n3:12003"}};
        for (const auto& [from, to] : moved) {
          expected.replace(expected.find(from), std::string(from).size(), to);
        }
      } else if (name == "MASTER_ADDR") {
        expected = "n1";
      } else if (name == "MASTER_PORT") {
        expected = "12000";
      }
      EXPECT_EQ(slurm.env[i].value, expected) << name;
    }
  }
}

TEST(RuntimeEnvTest, SplitsGcsUris) {
  EXPECT_EQ(SplitGcsUri("gs://bucket/a/b")->first, "bucket");
  EXPECT_EQ(SplitGcsUri("gs://bucket/a/b")->second, "a/b");
  EXPECT_EQ(SplitGcsUri("gs://bucket")->second, "");
  EXPECT_FALSE(SplitGcsUri("/local/path").has_value());
  EXPECT_FALSE(SplitGcsUri("gs:///x").has_value());
}

}  // namespace
}  // namespace ty::model
