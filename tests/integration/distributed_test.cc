// Multi-replica jobs through the real daemon and engine: every replica checks the
// TF_CONFIG / CLUSTER_SPEC / PyTorch variables it was given (docs/contracts/runtime.md §2-§4),
// serves on its cluster port and reaches every peer by the host name listed there;
// plus the failure rules of §9 (a worker's exit 1 fails the job; the primary's exit 0
// ends it and stops the rest). The checking replicas run python3 from the
// sklearn-digits sample image (scripts/build-sample-image), used as a plain runtime;
// the failure cases use the busybox test image.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "integration/daemon_harness.h"

namespace ty::testing {
namespace {

constexpr char kPythonImage[] = "localhost/trainyard/sklearn-digits:latest";
constexpr char kVertexBase[] = "/v1/projects/it/locations/local/customJobs";
const std::vector<std::string> kVertexTerminal = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED",
                                                  "JOB_STATE_CANCELLED"};

// argv: TF_TYPE CS_TYPE OK_DIR WANT_OK CS_KEYS TF_KEYS RANK_BASE
// Checks its own task in both variables, that it is listed under its own host name,
// the PyTorch variables, then serves TCP on its port, connects to every address in
// CLUSTER_SPEC (retrying up to 120 s: peers come up in parallel, and podman's DNS here
// (aardvark-dns 1.4) was seen not to answer a replica's lookups of a peer for 30-50 s
// after a first "not found"), writes OK_DIR/<task>.ok.
// The primary then waits for WANT_OK .ok files and exits 0; the others sleep until
// they are stopped. Any failed check exits 3.
constexpr char kReplicaScript[] = R"PY(
import json, os, socket, sys, threading, time
# podman's DNS may not answer for a while as containers join the network; glibc's
# default 5 s x 2 attempts per server and query would stall one lookup for up to 40 s.
# Fail fast and retry instead.
os.environ.setdefault("RES_OPTIONS", "timeout:1 attempts:1")
tf_type, cs_type, ok_dir, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
cs_keys, tf_keys, rank_base = sys.argv[5].split(","), sys.argv[6].split(","), int(sys.argv[7])
def log(m): print("[%s] %s" % (cs_type, m), flush=True)
def check(ok, m):
    if not ok:
        log("CHECK FAILED: " + m)
        sys.exit(3)
tf = json.loads(os.environ["TF_CONFIG"])
cs = json.loads(os.environ["CLUSTER_SPEC"])
check(tf["task"]["type"] == tf_type, "TF_CONFIG task %r" % tf["task"])
check(cs["task"]["type"] == cs_type, "CLUSTER_SPEC task %r" % cs["task"])
idx = cs["task"]["index"]
check(tf["task"]["index"] == idx, "task indices differ")
check(sorted(cs["cluster"]) == sorted(cs_keys), "CLUSTER_SPEC keys %r" % sorted(cs["cluster"]))
check(sorted(tf["cluster"]) == sorted(tf_keys), "TF_CONFIG keys %r" % sorted(tf["cluster"]))
check("evaluator" not in tf["cluster"], "evaluator in TF_CONFIG cluster")
check(tf["environment"] == "cloud" and cs["environment"] == "cloud", "environment")
me = cs["cluster"][cs_type][idx]
if tf_type != "evaluator":
    check(tf["cluster"][tf_type][idx] == me, "TF_CONFIG and CLUSTER_SPEC addresses differ")
host, port = me.rsplit(":", 1)
check(port == "2222", "port %s" % port)
check(socket.gethostname() == host, "hostname %s, listed as %s" % (socket.gethostname(), host))
primary = cs["cluster"][cs_keys[0]][0].rsplit(":", 1)[0]
check(os.environ.get("MASTER_ADDR") == primary, "MASTER_ADDR %r" % os.environ.get("MASTER_ADDR"))
check(os.environ.get("MASTER_PORT") == "2222", "MASTER_PORT")
check(os.environ.get("WORLD_SIZE") == "3", "WORLD_SIZE %r" % os.environ.get("WORLD_SIZE"))
check(os.environ.get("RANK") == str(rank_base + idx), "RANK %r" % os.environ.get("RANK"))
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", int(port)))
srv.listen(64)
def serve():
    while True:
        c, _ = srv.accept()
        c.close()
threading.Thread(target=serve, daemon=True).start()
peers = [a for pool in cs["cluster"].values() for a in pool]
t0 = time.time()
for addr in peers:
    h, p = addr.rsplit(":", 1)
    deadline = time.time() + 120
    while True:
        try:
            socket.create_connection((h, int(p)), timeout=2).close()
            break
        except OSError as e:
            check(time.time() < deadline, "cannot reach %s: %s" % (addr, e))
            log("retrying %s after %.1f s: %s" % (addr, time.time() - t0, e))
            time.sleep(0.2)
log("reached %d peers in %.1f s" % (len(peers), time.time() - t0))
os.makedirs(ok_dir, exist_ok=True)
open(os.path.join(ok_dir, "%s-%d.ok" % (cs_type, idx)), "w").write(socket.gethostname())
if rank_base == 0:
    deadline = time.time() + 180
    while len([f for f in os.listdir(ok_dir) if f.endswith(".ok")]) < want:
        check(time.time() < deadline, "only %s" % sorted(os.listdir(ok_dir)))
        time.sleep(0.1)
    log("all %d replicas ok" % want)
    sys.exit(0)
time.sleep(600)
)PY";

bool ImageExists(const std::string& image) {
  return Http("GET", "http://d/v1.41/images/" + image + "/json", "", true, EngineSocket(), 10)
             .status == 200;
}

nlohmann::json Pool(int replicas, const std::string& image, nlohmann::json command,
                    nlohmann::json args = nullptr) {
  nlohmann::json container = {{"imageUri", image}, {"command", std::move(command)}};
  if (!args.is_null()) container["args"] = std::move(args);
  return {{"machineSpec", {{"machineType", "n1-standard-4"}}},
          {"replicaCount", std::to_string(replicas)},
          {"containerSpec", container}};
}

nlohmann::json ShPool(int replicas, const std::string& script) {
  return Pool(replicas, kTestImage, {"sh", "-c", script});
}

// The replicas' "reached N peers in T s" lines (how long the peers took to answer).
std::string Reached(const std::string& messages) {
  std::string out;
  size_t pos = 0;
  while ((pos = messages.find("reached ", pos)) != std::string::npos) {
    size_t start = messages.rfind('\n', pos);
    size_t end = messages.find('\n', pos);
    out += "  " +
           messages.substr(start == std::string::npos ? 0 : start + 1,
                           end - (start == std::string::npos ? 0 : start + 1)) +
           "\n";
    pos = end;
  }
  return out;
}

std::vector<std::string> OkFiles(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

class DistributedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bool required = std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr;
    if (!EngineAnswers()) {
      if (required) FAIL() << "TRAINYARD_REQUIRE_ENGINE is set but the engine does not answer";
      GTEST_SKIP() << "no container engine answers on " << EngineSocket();
    }
    for (const char* image : {kTestImage, kPythonImage}) {
      if (!ImageExists(image)) {
        if (required)
          FAIL() << image
                 << " is missing: run scripts/build-test-image and scripts/build-sample-image";
        GTEST_SKIP() << image << " unavailable";
      }
    }
    daemon_ = std::make_unique<Daemon>();
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
    daemon_.reset();
  }

  std::string Messages(const std::string& logs_path) {
    std::string all;
    for (const auto& e :
         daemon_
             ->Get(logs_path + (logs_path.find('?') == std::string::npos ? "?" : "&") +
                   "pageSize=10000")
             .Json()
             .value("entries", nlohmann::json::array())) {
      all += e.value("taskName", "") + ": " + e.value("message", "") + "\n";
    }
    return all;
  }
  std::string CreateVertex(const nlohmann::json& pools) {
    // Replicas see the buckets their job names (and their project's): "dist" here.
    nlohmann::json body = {{"displayName", "dist-it"},
                           {"jobSpec",
                            {{"workerPoolSpecs", pools},
                             {"baseOutputDirectory", {{"outputUriPrefix", "gs://dist/out/"}}}}}};
    HttpReply r = daemon_->Post(kVertexBase, body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return IdOf(r.Json());
  }
  nlohmann::json WaitVertex(const std::string& id, int timeout_s = 300) {
    return daemon_->WaitForField(std::string(kVertexBase) + "/" + id, "state", kVertexTerminal,
                                 timeout_s);
  }
  size_t ContainersLeft(const std::string& uid) { return ContainersOfJobAfterCleanup(uid); }
  std::string RunVertexClusterJob(const std::string& run);

  std::unique_ptr<Daemon> daemon_;
};

nlohmann::json ReplicaCommand() { return {"python3", "-c", kReplicaScript}; }

// Runs a 5-replica Vertex job (chief, 2 workers, ps, evaluator) whose replicas
// check their cluster variables and reach every peer; expects SUCCEEDED and every
// replica's .ok file under /gcs/dist/<run>. Returns the job id.
std::string DistributedTest::RunVertexClusterJob(const std::string& run) {
  const std::string ok_dir = "/gcs/dist/" + run;
  const std::string cs_keys = "workerpool0,workerpool1,workerpool2,workerpool3";
  const std::string tf_keys = "chief,worker,ps";
  auto args = [&](const std::string& tf, const std::string& cs, int rank_base) {
    return nlohmann::json{tf, cs, ok_dir, "5", cs_keys, tf_keys, std::to_string(rank_base)};
  };
  std::string id =
      CreateVertex({Pool(1, kPythonImage, ReplicaCommand(), args("chief", "workerpool0", 0)),
                    Pool(2, kPythonImage, ReplicaCommand(), args("worker", "workerpool1", 1)),
                    Pool(1, kPythonImage, ReplicaCommand(), args("ps", "workerpool2", 3)),
                    Pool(1, kPythonImage, ReplicaCommand(), args("evaluator", "workerpool3", 4))});
  auto t0 = std::chrono::steady_clock::now();
  nlohmann::json done = WaitVertex(id);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(done["state"], "JOB_STATE_SUCCEEDED")
      << done.dump() << "\n"
      << Messages(std::string(kVertexBase) + "/" + id + "/logs");
  std::cerr << "5-replica Vertex job succeeded in " << secs << " s\n"
            << Reached(Messages(std::string(kVertexBase) + "/" + id + "/logs"));
  EXPECT_EQ(OkFiles(daemon_->data_dir() + "/buckets/dist/" + run),
            (std::vector<std::string>{"workerpool0-0.ok", "workerpool1-0.ok", "workerpool1-1.ok",
                                      "workerpool2-0.ok", "workerpool3-0.ok"}));
  return id;
}

TEST_F(DistributedTest, VertexReplicasSeeTheirClusterAndReachEveryPeer) {
  std::string id = RunVertexClusterJob("vertex");
  EXPECT_EQ(ContainersLeft(id), 0u);
}

// With --warm-pool, the first job of a shape leaves a warm gang behind and the
// next job of that shape starts from it: the same checks pass (cluster variables,
// host names, every peer reached), describe says how it started, and nothing of
// it is left afterwards.
TEST_F(DistributedTest, ASecondJobOfTheShapeStartsFromWarmSandboxes) {
  daemon_ = std::make_unique<Daemon>(std::vector<std::string>{"--warm-pool", "16"});
  std::string first = RunVertexClusterJob("warm-first");
  auto details = [&](const std::string& id) {
    return daemon_->Get(std::string(kVertexBase) + "/" + id + "/details").body;
  };
  EXPECT_EQ(details(first).find("warm sandboxes"), std::string::npos);
  // The gang of this shape: five sandboxes, made in the background.
  for (int i = 0; i < 600 && daemon_->WarmSandboxes() < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(daemon_->WarmSandboxes(), 5u);
  std::string second = RunVertexClusterJob("warm-second");
  EXPECT_NE(details(second).find("Job is running (replicas started from warm sandboxes)."),
            std::string::npos)
      << details(second);
  EXPECT_EQ(ContainersLeft(first), 0u);
  // The second job's replicas were sandboxes (no job label): once its cleanup ran
  // and the refill made the next gang, the only sandboxes left are that gang's.
  for (int i = 0; i < 600 && (daemon_->WarmReplicasOf(second) != 0 ||
                              daemon_->WarmSandboxes() < 5 || daemon_->SandboxContainers() != 5);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(daemon_->WarmReplicasOf(second), 0u);
  EXPECT_EQ(daemon_->WarmSandboxes(), 5u);
  EXPECT_EQ(daemon_->SandboxContainers(), 5u);
}

class MlDistributedTest : public DistributedTest, public ::testing::WithParamInterface<bool> {};

TEST_P(MlDistributedTest, MlReplicasSeeTheirClusterAndReachEveryPeer) {
  const bool use_chief = GetParam();
  const std::string primary = use_chief ? "chief" : "master";
  const std::string job_id = use_chief ? "dist_chief" : "dist_master";
  const std::string ok_dir = "/gcs/dist/" + job_id;
  auto args = [&](const std::string& type, int rank_base) {
    return nlohmann::json{type,
                          type,
                          ok_dir,
                          "5",
                          primary + ",worker,ps,evaluator",
                          primary + ",worker,ps",
                          std::to_string(rank_base)};
  };
  nlohmann::json input = {{"scaleTier", "CUSTOM"},
                          {"region", "local"},
                          {"masterType", "n1-standard-4"},
                          {"workerType", "n1-standard-4"},
                          {"workerCount", "2"},
                          {"parameterServerType", "n1-standard-4"},
                          {"parameterServerCount", "1"},
                          {"evaluatorType", "n1-standard-4"},
                          {"evaluatorCount", "1"},
                          {"masterConfig",
                           {{"imageUri", kPythonImage},
                            {"containerCommand", ReplicaCommand()},
                            {"containerArgs", args(primary, 0)}}},
                          {"workerConfig", {{"containerArgs", args("worker", 1)}}},
                          {"parameterServerConfig", {{"containerArgs", args("ps", 3)}}},
                          {"evaluatorConfig", {{"containerArgs", args("evaluator", 4)}}}};
  if (use_chief) input["useChiefInTfConfig"] = true;
  input["jobDir"] = "gs://dist/" + job_id + "-dir";  // Mounts the bucket ("--job-dir" is ignored).
  nlohmann::json body = {{"jobId", job_id}, {"trainingInput", input}};
  HttpReply created = daemon_->Post("/v1/projects/it/jobs", body.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string path = "/v1/projects/it/jobs/" + job_id;
  nlohmann::json done =
      daemon_->WaitForField(path, "state", {"SUCCEEDED", "FAILED", "CANCELLED"}, 300);
  ASSERT_EQ(done["state"], "SUCCEEDED") << done.dump() << "\n" << Messages(path + "/logs");
  std::cerr << Reached(Messages(path + "/logs"));
  std::vector<std::string> want = {primary + "-0.ok", "evaluator-0.ok", "ps-0.ok", "worker-0.ok",
                                   "worker-1.ok"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(OkFiles(daemon_->data_dir() + "/buckets/dist/" + job_id), want);
}

INSTANTIATE_TEST_SUITE_P(MasterAndChief, MlDistributedTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Chief" : "Master"; });

TEST_F(DistributedTest, WorkerExitingOneFailsTheJobAndStopsEveryReplica) {
  std::string id = CreateVertex(
      {ShPool(1, "echo primary waiting; sleep 1000"),
       ShPool(2, "if [ \"$RANK\" = 1 ]; then sleep 1; echo worker fails; exit 1; fi; sleep 1000")});
  auto t0 = std::chrono::steady_clock::now();
  nlohmann::json done = WaitVertex(id, 60);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(done["state"], "JOB_STATE_FAILED") << done.dump();
  std::string message = done["error"].value("message", "");
  EXPECT_EQ(message.rfind("The replica workerpool1-0 exited with a non-zero status of 1.", 0), 0u)
      << message;
  EXPECT_LT(secs, 30) << "the failure took " << secs << " s to end the job";
  EXPECT_EQ(ContainersLeft(id), 0u);
}

TEST_F(DistributedTest, PrimarySuccessEndsTheJobWhileAParameterServerStillRuns) {
  // Pool 1 is left empty ({}), as Vertex allows for a job with a parameter server only.
  std::string id = CreateVertex({ShPool(1, "sleep 1; echo primary done"), nlohmann::json::object(),
                                 ShPool(1, "echo ps serving forever; sleep 1000")});
  auto t0 = std::chrono::steady_clock::now();
  nlohmann::json done = WaitVertex(id, 60);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump();
  EXPECT_LT(secs, 30) << "the job took " << secs << " s to end";
  EXPECT_EQ(ContainersLeft(id), 0u);
  std::string logs = Messages(std::string(kVertexBase) + "/" + id + "/logs");
  EXPECT_NE(logs.find("ps serving forever"), std::string::npos) << logs;
}

}  // namespace
}  // namespace ty::testing
