// The Slurm launcher's pure parts: the context round trip, the environment placed on
// Slurm's hosts (byte-identical to the service's own for placed replicas: the golden
// environment holds on Slurm), the podman command line, the sbatch shape and squeue.
#include "executor/slurm/slurm_context.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "executor/slurm/slurm_submit.h"
#include "model/runtime_env.h"

namespace ty::executor {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

model::WorkerPool Pool(int64_t replicas) {
  model::WorkerPool p;
  p.replica_count = replicas;
  p.machine.machine_type = "n1-standard-4";
  p.container = model::ContainerSpec{"img", {}, {}, {}};
  return p;
}

model::Job ChiefWorkersPs() {
  model::Job job;
  job.uid = "42";
  job.dialect = model::Dialect::kVertex;
  job.project = "proj";
  job.location = "us-central1";
  job.spec.dialect = model::Dialect::kVertex;
  job.spec.pools = {Pool(1), Pool(2), Pool(1)};
  job.spec_json = R"({"displayName":"d","jobSpec":{"workerPoolSpecs":[{"replicaCount":"1"}]}})";
  return job;
}

std::vector<ReplicaLaunch> Replicas(const model::Job& job, const model::RuntimeOptions& o = {}) {
  std::vector<ReplicaLaunch> out;
  for (int pool = 0; pool < 3; ++pool) {
    for (int index = 0; index < job.spec.pools[pool].replica_count; ++index) {
      ReplicaLaunch r;
      r.pool = pool;
      r.index = index;
      r.name = ReplicaName(job.uid, 1, pool, index);
      r.task_name = "workerpool" + std::to_string(pool) + "-" + std::to_string(index);
      r.hostname = model::ReplicaHostname(job, pool, index);
      model::ReplicaRuntime rt = model::BuildReplicaRuntime(job, pool, index, o);
      r.image = rt.image;
      r.env = rt.env;
      out.push_back(r);
    }
  }
  return out;
}

TEST(SlurmContextTest, PlacedEnvironmentIsWhatTheServiceComputesForPlacedReplicas) {
  model::Job job = ChiefWorkersPs();
  SlurmTopology placed;
  placed.addresses = {{"n1:12000"}, {"n2:12001", "n2:12002"}, {"n3:12003"}};
  model::RuntimeOptions o;
  o.peer_addresses = placed.addresses;
  std::vector<ReplicaLaunch> local = Replicas(job), golden = Replicas(job, o);
  for (size_t i = 0; i < local.size(); ++i) {
    std::vector<model::EnvVar> env = PlaceEnvironment(local[i].env, local, placed);
    ASSERT_EQ(env.size(), golden[i].env.size());
    for (size_t k = 0; k < env.size(); ++k) {
      EXPECT_EQ(env[k].name, golden[i].env[k].name);
      EXPECT_EQ(env[k].value, golden[i].env[k].value) << env[k].name;
    }
  }
}

TEST(SlurmContextTest, ContextRoundTripsAndRejectsGarbage) {
  SlurmContext c;
  c.job_uid = "42";
  c.attempt = 2;
  c.labels = {{"trainyard.job", "42"}};
  c.userns_base = 2000000000;
  c.replicas = Replicas(ChiefWorkersPs());
  c.replicas[0].command = {"python3", "-c", "print('hi')"};
  c.replicas[0].mounts = {{"/data/buckets/b", "/gcs/b", false}};
  Result<SlurmContext> back = SlurmContextFromJson(SlurmContextToJson(c));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(SlurmContextToJson(*back), SlurmContextToJson(c));
  EXPECT_FALSE(SlurmContextFromJson("[1]").ok());
  EXPECT_FALSE(SlurmContextFromJson(R"({"job_uid":"x"})").ok());
  EXPECT_FALSE(SlurmContextFromJson("{\"job_uid\":7,").ok());
}

TEST(SlurmContextTest, PodmanRunsTheReplicaOnTheHostNetworkHardenedWithItsMounts) {
  SlurmContext c;
  c.job_uid = "42";
  c.userns_base = 2000000000;
  c.labels = {{"trainyard.job", "42"}};
  ReplicaLaunch r = Replicas(ChiefWorkersPs())[0];
  r.command = {"python3", "-m", "trainer"};
  r.args = {"--epochs", "3"};
  r.mounts = {{"/shared/buckets/b", "/gcs/b", false}};
  std::vector<std::string> a =
      PodmanRunArgs(c, r, "/shared/42-1/workerpool0-0.env", "",
                    SplitEnvironment({{"A", "x y"}, {"B", "1\n2"}}), "17", {1, 3});
  EXPECT_THAT(a, Contains("host"));
  EXPECT_THAT(a, Contains("trainyard.slurm_job=17"));
  EXPECT_THAT(a, Contains("no-new-privileges"));
  EXPECT_THAT(a, Contains("0:2000000000:65536"));
  EXPECT_THAT(a, Contains("/shared/buckets/b:/gcs/b"));
  EXPECT_THAT(a, Contains("/shared/42-1/workerpool0-0.env"));
  EXPECT_THAT(a, ::testing::Not(Contains("A=x y")));  // In the file, not for ps to show.
  EXPECT_THAT(a, Contains("B=1\n2"));                 // A file line cannot hold it.
  EXPECT_THAT(a, Contains("nvidia.com/gpu=3"));
  EXPECT_THAT(a, Contains(R"(["python3","-m","trainer"])"));
  ASSERT_GE(a.size(), 3u);
  EXPECT_EQ(a[a.size() - 3], "img");  // Then the args, as given.
  EXPECT_EQ(a.back(), "3");
}

// With registry tokens the hosts pull a Google name at every start, with the job's
// credential for that name's host in an auth file (never on the command line).
TEST(SlurmContextTest, ARegistryWithTokensPullsGoogleNamesAlwaysWithTheJobsCredential) {
  SlurmContext c;
  c.job_uid = "42";
  ReplicaLaunch r = Replicas(ChiefWorkersPs())[0];
  r.image = "us-central1-docker.pkg.dev/p/repo/img:1";
  EXPECT_EQ(RegistryAuthFile(c, r), "");  // No tokens: nothing to give.
  c.registry_password = "42.secret";
  nlohmann::json auth = nlohmann::json::parse(RegistryAuthFile(c, r));
  EXPECT_EQ(auth["auths"]["us-central1-docker.pkg.dev"]["auth"],
            Base64Encode("trainyard-job:42.secret"));
  std::vector<std::string> a =
      PodmanRunArgs(c, r, "", "/shared/42-1/w.auth.json", SplitEnvironment({}), "17", {});
  EXPECT_THAT(a, Contains("/shared/42-1/w.auth.json"));
  EXPECT_THAT(a, Contains("always"));
  EXPECT_THAT(a, ::testing::Not(Contains(::testing::HasSubstr("42.secret"))));
  r.image = "localhost/mine:1";
  EXPECT_EQ(RegistryAuthFile(c, r), "");  // Not the registry's name.
  EXPECT_THAT(PodmanRunArgs(c, r, "", "", SplitEnvironment({}), "17", {}), Contains("missing"));
  // The context carries it to the hosts.
  c.replicas = {r};
  Result<SlurmContext> back = SlurmContextFromJson(SlurmContextToJson(c));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->registry_password, "42.secret");
}

TEST(SlurmContextTest, TheEnvironmentFileHoldsEveryValueWithoutALineBreakVerbatim) {
  PodmanEnvironment env = SplitEnvironment({{"TF_CONFIG", R"({"task": {"type": "chief"}})"},
                                            {"EMPTY", ""},
                                            {"SPACES", " a = b "},
                                            {"MULTI", "one\ntwo"},
                                            {"CR", "x\ry"}});
  EXPECT_EQ(env.env_file_text,
            "TF_CONFIG={\"task\": {\"type\": \"chief\"}}\nEMPTY=\nSPACES= a = b \n");
  ASSERT_EQ(env.on_command_line.size(), 2u);
  EXPECT_EQ(env.on_command_line[0].name, "MULTI");
  EXPECT_EQ(env.on_command_line[1].name, "CR");
}

AttemptSpec Attempt(std::vector<ReplicaLaunch> replicas) {
  AttemptSpec a;
  a.job_uid = "42";
  a.attempt = 1;
  a.replicas = std::move(replicas);
  return a;
}

TEST(SlurmSubmitTest, OneComponentPerPoolWhenTheClusterHasAHostPerPool) {
  std::vector<ReplicaLaunch> rs = Replicas(ChiefWorkersPs());
  for (ReplicaLaunch& r : rs) {
    r.cpu_limit = 1.5;
    r.memory_limit_gb = 3;
  }
  internal::SlurmSubmitSettings s{"/shared/42-1", "/opt/ty-slurm-launch", "train", "", 3};
  internal::SlurmJobShape shape = internal::ShapeSlurmJob(Attempt(rs), s);
  EXPECT_TRUE(shape.heterogeneous);
  EXPECT_EQ(shape.pools, "0:1,1:2,2:1");
  const std::vector<std::string>& a = shape.sbatch_args;
  EXPECT_EQ(std::count(a.begin(), a.end(), ":"), 2);
  EXPECT_THAT(a, Contains("--job-name=ty-42-1"));
  EXPECT_THAT(a, Contains("--partition=train"));
  EXPECT_THAT(a, Contains("--ntasks=2"));
  EXPECT_THAT(a, Contains("--cpus-per-task=2"));
  EXPECT_THAT(a, Contains("--mem-per-cpu=1536"));
  EXPECT_EQ(a.back(), "/shared/42-1/batch.sh");
  EXPECT_THAT(shape.script, HasSubstr("export TY_SLURM_POOLS=0:1,1:2,2:1\n"));
  EXPECT_THAT(shape.script,
              HasSubstr("exec srun --resv-ports=4 --het-group=0 -n1 '/opt/ty-slurm-launch' "
                        "--context '/shared/42-1' : --het-group=1 -n2"));
}

TEST(SlurmSubmitTest, OneHomogeneousJobOnASmallerCluster) {
  std::vector<ReplicaLaunch> rs = Replicas(ChiefWorkersPs());
  rs[3].accelerator_count = 2;
  internal::SlurmSubmitSettings s{"/d", "/l", "", "", 1};
  internal::SlurmJobShape shape = internal::ShapeSlurmJob(Attempt(rs), s);
  EXPECT_FALSE(shape.heterogeneous);
  EXPECT_THAT(shape.sbatch_args, Contains("--ntasks=4"));
  EXPECT_THAT(shape.sbatch_args, Contains("--gpus-per-task=2"));
  EXPECT_THAT(shape.sbatch_args, ::testing::Not(Contains(":")));
  EXPECT_THAT(shape.script, HasSubstr("exec srun --resv-ports=4 -n4 '/l' --context '/d'\n"));
}

TEST(SlurmSubmitTest, SqueueGivesEachJobItsLeadersState) {
  auto states = internal::ParseSqueue(
      "12+0|RUNNING|None\n12+1|RUNNING|None\n13|PENDING|Resources\ngarbage\n|x|y\n14+1|FAILED|x\n");
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states["12"].state, "RUNNING");
  EXPECT_EQ(states["13"].reason, "Resources");
  EXPECT_TRUE(internal::IsSlurmEnded("CANCELLED"));
  EXPECT_FALSE(internal::IsSlurmEnded("PENDING"));
  EXPECT_TRUE(internal::IsSlurmRunning("COMPLETING"));
}

TEST(SlurmSubmitTest, PythonPackagesAreInstalledByTheReplicaBeforeItsCommand) {
  ReplicaLaunch r;
  r.command = {"python3", "-m", "trainer.task"};
  r.python_packages = {"gs://b/dir/it's.tar.gz"};
  ReplicaLaunch wrapped = internal::WithPackageInstall(r, "/gcs");
  ASSERT_EQ(wrapped.command.size(), 7u);
  EXPECT_EQ(wrapped.command[0], "sh");
  EXPECT_THAT(wrapped.command[2], HasSubstr("--no-index"));
  // The user's path only ever inside single quotes.
  EXPECT_THAT(wrapped.command[2],
              HasSubstr("--find-links '/gcs/b/dir' '/gcs/b/dir/it'\\''s.tar.gz'"));
  EXPECT_EQ(wrapped.command[4], "python3");
  EXPECT_TRUE(wrapped.python_packages.empty());
  r.python_packages.clear();
  EXPECT_EQ(internal::WithPackageInstall(r, "/gcs").command, r.command);
}

TEST(SlurmSubmitTest, OneReplicaRunsInTheBatchStepWithoutASrunStep) {
  std::vector<ReplicaLaunch> rs = {Replicas(ChiefWorkersPs())[0]};
  internal::SlurmSubmitSettings s{"/d", "/l", "", "", 3};
  internal::SlurmJobShape shape = internal::ShapeSlurmJob(Attempt(rs), s);
  EXPECT_THAT(shape.script, HasSubstr("export TY_SLURM_SINGLE=1\nexec '/l' --context '/d'\n"));
  EXPECT_THAT(shape.script, ::testing::Not(HasSubstr("srun")));
  auto env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "TY_SLURM_POOLS") return "0:1";
    return std::nullopt;
  };
  Result<SlurmTopology> t = SingleReplicaTopology(env, "n2", 40000);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->addresses, (std::vector<std::vector<std::string>>{{"n2:40000"}}));
  EXPECT_FALSE(SingleReplicaTopology(env, "n2", 0).ok());
  auto two = [](const std::string& name) -> std::optional<std::string> {
    if (name == "TY_SLURM_POOLS") return "0:2";
    return std::nullopt;
  };
  EXPECT_FALSE(SingleReplicaTopology(two, "n2", 40000).ok());
}

TEST(SlurmSubmitTest, SqueueSaysAHetJobEndedOnlyWhenEveryComponentHas) {
  auto states =
      internal::ParseSqueue("7+0|CANCELLED|None\n7+1|COMPLETING|None\n8|COMPLETED|None\n");
  EXPECT_EQ(states["7"].state, "CANCELLED");
  EXPECT_FALSE(states["7"].all_ended);
  EXPECT_TRUE(states["8"].all_ended);
}

TEST(SlurmSubmitTest, SinfoNodesGiveAdmissionTheClustersShape) {
  auto nodes = internal::ParseSinfoNodes(
      "n1|8|65536|(null)\nn1|8|65536|(null)\ng1|16|128000|gpu:t4:2(S:0),shard:4\n"
      "g2|4|1024|gpu:3\nbad|x|y|z\n");
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].name, "n1");
  EXPECT_EQ(nodes[0].cpus, 8);
  EXPECT_EQ(nodes[0].memory_gb, 64);
  EXPECT_EQ(nodes[0].gpus, 0);
  EXPECT_EQ(nodes[1].gpu_type, "NVIDIA_TESLA_T4");
  EXPECT_EQ(nodes[1].gpus, 2);
  EXPECT_EQ(nodes[2].gpu_type, "");
  EXPECT_EQ(nodes[2].gpus, 3);
}

TEST(SlurmSubmitTest, TimeoutsBoundTheJobAndSpotJobsGoWhereTheClusterPreempts) {
  AttemptSpec a = Attempt({Replicas(ChiefWorkersPs())[0]});
  a.time_limit = 90LL * 1000000;  // 1.5 min -> 2 min, and two of grace behind the daemon.
  internal::SlurmSubmitSettings s{"/d", "/l", "train", "normal", 3, "scavenger", "low"};
  internal::SlurmJobShape shape = internal::ShapeSlurmJob(a, s);
  EXPECT_THAT(shape.sbatch_args, Contains("--time=4"));
  EXPECT_THAT(shape.sbatch_args, Contains("--partition=train"));
  EXPECT_THAT(shape.sbatch_args, Contains("--qos=normal"));
  a.spot = true;
  shape = internal::ShapeSlurmJob(a, s);
  EXPECT_THAT(shape.sbatch_args, Contains("--partition=scavenger"));
  EXPECT_THAT(shape.sbatch_args, Contains("--qos=low"));
}

}  // namespace
}  // namespace ty::executor
