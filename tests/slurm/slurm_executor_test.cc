// The Slurm executor for real (issue 21): trainyardd --executor slurm on a 3-host Slurm
// cluster of network namespaces (slurm_cluster_env.cc), jobs submitted through the REST API as
// users submit them. Every replica runs in its own podman container on the host Slurm chose.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <thread>

#include "auth/tokens.h"
#include "integration/daemon_harness.h"
#include "integration/hypertune_trainer.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

constexpr char kPythonImage[] = "localhost/trainyard/sklearn-digits:latest";
constexpr char kBase[] = "/v1/projects/it/locations/local/customJobs";
const std::vector<std::string> kTerminal = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED",
                                            "JOB_STATE_CANCELLED"};

// Each replica: its own address in TF_CONFIG is its host and a port of its own; it
// serves TCP there, connects to every address in the cluster (retrying: peers start in
// parallel), says "REACHED ALL <type> <index> <host>", and the chief then waits until
// every other replica has connected to it before it exits 0; the others serve on until
// they are stopped.
constexpr char kReplicaScript[] = R"PY(
import json, os, socket, sys, threading, time
tf = json.loads(os.environ["TF_CONFIG"])
t, i = tf["task"]["type"], tf["task"]["index"]
me = tf["cluster"][t][i]
host, port = me.rsplit(":", 1)
if host != socket.gethostname():
    print("WRONG HOST %s on %s" % (me, socket.gethostname()), flush=True); sys.exit(3)
peers = [a for role in tf["cluster"].values() for a in role]
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", int(port))); srv.listen(16)
accepted = []
def serve():
    while True:
        c, _ = srv.accept(); accepted.append(1); c.close()
threading.Thread(target=serve, daemon=True).start()
for a in peers:
    h, p = a.rsplit(":", 1)
    for _ in range(600):
        try:
            socket.create_connection((h, int(p)), timeout=1).close(); break
        except OSError:
            time.sleep(0.1)
    else:
        print("CANNOT REACH %s" % a, flush=True); sys.exit(4)
print("REACHED ALL %s %d %s" % (t, i, host), flush=True)
if t == "chief":
    while len(accepted) < len(peers):
        time.sleep(0.1)
    sys.exit(0)
time.sleep(3600)
)PY";

nlohmann::json Pool(int replicas, const std::string& image, nlohmann::json command) {
  return {{"machineSpec", {{"machineType", "n1-standard-4"}}},
          {"replicaCount", std::to_string(replicas)},
          {"containerSpec", {{"imageUri", image}, {"command", std::move(command)}}}};
}

nlohmann::json Sh(const std::string& script) { return {"sh", "-c", script}; }

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ImageExists(kPythonImage)) GTEST_SKIP() << kPythonImage << " missing";
  }

  std::unique_ptr<Daemon> StartDaemon(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--executor", "slurm", "--slurm-daemon-host", "10.201.0.1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<Daemon>(args);
  }

  static bool ImageExists(const std::string& image) {
    return RunProcess({"podman", "image", "exists", image}).rc == 0;
  }

  std::string Submit(Daemon& d, nlohmann::json pools) {
    nlohmann::json body = {{"displayName", "slurm"}, {"jobSpec", {{"workerPoolSpecs", pools}}}};
    HttpReply r = d.Post(kBase, body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return IdOf(r.Json());
  }

  nlohmann::json WaitEnd(Daemon& d, const std::string& id, int timeout_s = 120) {
    return d.WaitForField(std::string(kBase) + "/" + id, "state", kTerminal, timeout_s);
  }

  std::string Logs(Daemon& d, const std::string& id) {
    return d.Get(std::string(kBase) + "/" + id + "/logs").body;
  }

  // Slurm jobs of job `id` that have not ended.
  static std::string Squeue(const std::string& id) {
    return RunProcess({"squeue", "-h", "-n", "ty-" + id + "-1", "-t", "PD,R,CG,S", "-o", "%i %T"})
        .out;
  }
  // The containers of job `id` on any host (replica names start ty-<id>-).
  static std::string Containers(const std::string& id) {
    return RunProcess(
               {"podman", "ps", "-a", "--filter", "name=ty-" + id + "-", "--format", "{{.Names}}"})
        .out;
  }
};

TEST_F(SlurmTest, ChiefWorkersAndPsRunOnTheirOwnHostsAndReachEachOther) {
  auto d = StartDaemon();
  nlohmann::json cmd = {"python3", "-c", kReplicaScript};
  std::string id = Submit(
      *d, {Pool(1, kPythonImage, cmd), Pool(2, kPythonImage, cmd), Pool(1, kPythonImage, cmd)});
  nlohmann::json job = WaitEnd(*d, id);
  std::string logs = Logs(*d, id);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump() << logs << d->Log();
  // One host per pool (a heterogeneous job), every replica reached every other.
  std::regex reached("REACHED ALL (\\w+) (\\d) (n\\d)");
  std::map<std::string, std::set<std::string>> hosts;
  for (std::sregex_iterator it(logs.begin(), logs.end(), reached), end; it != end; ++it) {
    hosts[(*it)[1].str()].insert((*it)[3].str());
  }
  ASSERT_EQ(hosts["chief"].size(), 1u) << logs;
  ASSERT_EQ(hosts["ps"].size(), 1u) << logs;
  ASSERT_FALSE(hosts["worker"].empty()) << logs;
  std::set<std::string> all = {*hosts["chief"].begin(), *hosts["ps"].begin(),
                               *hosts["worker"].begin()};
  EXPECT_EQ(all.size(), 3u) << logs;
  // Nothing left: no Slurm job, no container.
  for (int i = 0; i < 100 && !Containers(id).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(Containers(id), "");
}

TEST_F(SlurmTest, AFailingWorkerFailsTheJobWithItsOwnExitCode) {
  auto d = StartDaemon();
  std::string id = Submit(*d, {Pool(1, kPythonImage, Sh("sleep 600")),
                               Pool(1, kPythonImage, Sh("echo worker fails; exit 7"))});
  nlohmann::json job = WaitEnd(*d, id);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_FAILED") << job.dump() << d->Log();
  EXPECT_NE(job["error"].value("message", "").find("non-zero status of 7"), std::string::npos)
      << job.dump();
  EXPECT_NE(Logs(*d, id).find("worker fails"), std::string::npos);
}

TEST_F(SlurmTest, CancelLeavesNoSlurmJobAndNoContainer) {
  auto d = StartDaemon();
  std::string id = Submit(*d, {Pool(1, kPythonImage, Sh("echo started; sleep 600")),
                               Pool(2, kPythonImage, Sh("sleep 600"))});
  d->WaitForField(std::string(kBase) + "/" + id, "state", {"JOB_STATE_RUNNING"}, 60);
  for (int i = 0; i < 200 && Logs(*d, id).find("started") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(d->Post(std::string(kBase) + "/" + id + ":cancel", "{}").status, 200);
  nlohmann::json job = WaitEnd(*d, id, 90);
  EXPECT_EQ(job.value("state", ""), "JOB_STATE_CANCELLED") << job.dump();
  for (int i = 0; i < 300 && (!Containers(id).empty() || !Squeue(id).empty()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(Containers(id), "");
  EXPECT_EQ(Squeue(id), "");
}

TEST_F(SlurmTest, AKilledDaemonReattachesAndTheJobStillSucceeds) {
  auto d = StartDaemon();
  std::string id =
      Submit(*d, {Pool(1, kPythonImage, Sh("echo before; sleep 8; echo after; exit 0")),
                  Pool(1, kPythonImage, Sh("sleep 600"))});
  d->WaitForField(std::string(kBase) + "/" + id, "state", {"JOB_STATE_RUNNING"}, 60);
  for (int i = 0; i < 200 && Logs(*d, id).find("before") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::string jobs_before = Squeue(id);
  d->Kill();
  d->Start({"--executor", "slurm", "--slurm-daemon-host", "10.201.0.1"});
  nlohmann::json job = WaitEnd(*d, id);
  EXPECT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump() << d->Log();
  std::string logs = Logs(*d, id);
  EXPECT_NE(logs.find("after"), std::string::npos) << logs;
  EXPECT_NE(logs.find("re-attached"), std::string::npos) << logs;
  // Nothing was submitted twice (the log holds both daemons' lines).
  std::string log = d->Log();
  size_t first = log.find("is Slurm job");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("is Slurm job", first + 1), std::string::npos) << log;
  EXPECT_FALSE(jobs_before.empty());
}

// A Slurm replica shares its host's address with every job there, so it reaches the
// Storage and Logging APIs with its job's credential, which STORAGE_EMULATOR_HOST
// carries as userinfo (curl, like Google's clients, sends it as Basic auth); the
// same endpoint without it is refused.
TEST_F(SlurmTest, AReplicaUsesTheStorageAndLoggingApisWithItsJobsCredential) {
  auto d = StartDaemon();
  const std::string script = R"SH(
U="$STORAGE_EMULATOR_HOST"
echo "from slurm" > /tmp/f
curl -sf -X POST --data-binary @/tmp/f -H 'Content-Type: text/plain' \
  "$U/upload/storage/v1/b/slurm-out/o?uploadType=media&name=run/obj.txt" >/dev/null && echo UPLOADED
echo "READ $(curl -sf "$U/storage/v1/b/slurm-out/o/run%2Fobj.txt?alt=media")"
sleep 1
curl -sf -X POST -H 'Content-Type: application/json' -d '{"resourceNames":["projects/it"]}' \
  "$U/v2/entries:list" | grep -q UPLOADED && echo LOGGING-OWN
NOCRED=$(echo "$U" | sed 's#//[^@]*@#//#')
echo "WITHOUT $(curl -s -o /dev/null -w '%{http_code}' "$NOCRED/storage/v1/b/slurm-out/o")"
case "$U" in http://replica:*@10.201.0.1:*) echo ENDPOINT-OK ;; esac
sleep 3
)SH";
  nlohmann::json body = {{"displayName", "slurm-storage"},
                         {"jobSpec",
                          {{"workerPoolSpecs", {Pool(1, kPythonImage, Sh(script))}},
                           {"baseOutputDirectory", {{"outputUriPrefix", "gs://slurm-out/run/"}}}}}};
  HttpReply r = d->Post(kBase, body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string id = IdOf(r.Json());
  // While the replica runs: its podman client has the environment in a file, and no
  // command line on the host (what ps shows every user) holds the credential.
  for (int i = 0; i < 300 && Logs(*d, id).find("ENDPOINT-OK") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  int env_file_clients = 0, credential_lines = 0;
  for (const auto& p : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(p.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find("--env-file") != std::string::npos &&
        cmdline.find("ty-" + id) != std::string::npos) {
      ++env_file_clients;
    }
    if (cmdline.find("STORAGE_EMULATOR_HOST=") != std::string::npos) ++credential_lines;
  }
  EXPECT_GE(env_file_clients, 1) << "the replica's podman client was not seen";
  EXPECT_EQ(credential_lines, 0);
  nlohmann::json job = WaitEnd(*d, id);
  const std::string logs = Logs(*d, id);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump() << logs << d->Log();
  EXPECT_NE(logs.find("ENDPOINT-OK"), std::string::npos) << logs;
  EXPECT_NE(logs.find("UPLOADED"), std::string::npos) << logs;
  EXPECT_NE(logs.find("READ from slurm"), std::string::npos) << logs;
  EXPECT_NE(logs.find("LOGGING-OWN"), std::string::npos) << logs;
  EXPECT_NE(logs.find("WITHOUT 403"), std::string::npos) << logs;
  // The object is in the bucket, as the main API serves it.
  HttpReply media = d->Get("/storage/v1/b/slurm-out/o/run%2Fobj.txt?alt=media");
  EXPECT_EQ(media.body, "from slurm\n") << media.status;
}

// slurmctld restarting or failing over: a job submitted meanwhile waits for it (and
// says so in its log) instead of failing, and a job running meanwhile runs on.
TEST_F(SlurmTest, AJobWaitsForAControllerThatDoesNotAnswer) {
  auto d = StartDaemon();
  const std::string cluster = std::string(TY_SOURCE_DIR) + "/scripts/slurm-cluster";
  std::string running = Submit(*d, {Pool(1, kPythonImage, Sh("echo first; sleep 12; echo done"))});
  d->WaitForField(std::string(kBase) + "/" + running, "state", {"JOB_STATE_RUNNING"}, 60);
  ASSERT_EQ(RunProcess({cluster, "controller", "stop"}).rc, 0);
  std::string waiting = Submit(*d, {Pool(1, kPythonImage, Sh("echo submitted after the outage"))});
  std::string logs;
  for (int i = 0; i < 300 && logs.find("Waiting for the Slurm controller") == std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    logs = Logs(*d, waiting);
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ProcessRun started = RunProcess({cluster, "controller", "start"});
  ASSERT_EQ(started.rc, 0) << started.err;
  EXPECT_NE(logs.find("Waiting for the Slurm controller"), std::string::npos) << logs;
  nlohmann::json after = WaitEnd(*d, waiting);
  EXPECT_EQ(after.value("state", ""), "JOB_STATE_SUCCEEDED") << after.dump() << d->Log();
  EXPECT_NE(Logs(*d, waiting).find("submitted after the outage"), std::string::npos);
  nlohmann::json first = WaitEnd(*d, running);
  EXPECT_EQ(first.value("state", ""), "JOB_STATE_SUCCEEDED") << first.dump();
  EXPECT_NE(Logs(*d, running).find("done"), std::string::npos);
  // Submitted once.
  std::string log = d->Log();
  size_t at = log.find("job " + waiting + " attempt 1 is Slurm job");
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_EQ(log.find("job " + waiting + " attempt 1 is Slurm job", at + 1), std::string::npos);
}

// A spot job in the preemptible partition, preempted by Slurm for a job of the higher
// tier that Trainyard never saw: queued again (not a failure, not a retry), it waits in
// Slurm's queue behind that job and then runs to the end.
TEST_F(SlurmTest, ASpotJobSlurmPreemptsIsQueuedAgainAndSucceeds) {
  auto d = StartDaemon({"--slurm-spot-partition", "spot"});
  const std::string runs = d->data_dir() + "/buckets/spot-b/runs";
  // n1-standard-8: a whole host (8 CPUs each).
  nlohmann::json pool = Pool(1, kPythonImage,
                             Sh("echo run >> /gcs/spot-b/runs; echo spot started; sleep 20; "
                                "echo spot finished"));
  pool["machineSpec"]["machineType"] = "n1-standard-8";
  nlohmann::json body = {{"displayName", "spot"},
                         {"jobSpec",
                          {{"workerPoolSpecs", {pool}},
                           {"scheduling", {{"strategy", "SPOT"}}},
                           {"baseOutputDirectory", {{"outputUriPrefix", "gs://spot-b/out/"}}}}}};
  HttpReply r = d->Post(kBase, body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string id = IdOf(r.Json());
  for (int i = 0; i < 300 && Logs(*d, id).find("spot started") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(Logs(*d, id).find("spot started"), std::string::npos)
      << d->Get(std::string(kBase) + "/" + id).body << Logs(*d, id) << d->Log();
  // Slurm preempts only where that lets the other job run: wait until the spot job is
  // all the cluster runs (earlier tests' jobs may still be completing).
  std::string queue;
  for (int i = 0; i < 600; ++i) {
    queue = RunProcess({"squeue", "-h", "-o", "%i"}).out;
    if (std::count(queue.begin(), queue.end(), '\n') == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(std::count(queue.begin(), queue.end(), '\n'), 1) << queue;
  // Someone else's job of the higher tier needs every host.
  ProcessRun other = RunProcess({"sbatch", "-p", "train", "-N", "3", "--exclusive", "-J",
                                 "not-trainyard", "--wrap", "sleep 3"});
  ASSERT_EQ(other.rc, 0) << other.err;
  nlohmann::json job = WaitEnd(*d, id, 180);
  const std::string logs = Logs(*d, id);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump() << logs << d->Log();
  EXPECT_NE(logs.find("Slurm preempted job"), std::string::npos) << logs;
  EXPECT_NE(logs.find("restarts as attempt 2"), std::string::npos) << logs;
  EXPECT_NE(logs.find("spot finished"), std::string::npos) << logs;
  std::ifstream in(runs);
  int n = 0;
  for (std::string l; std::getline(in, l);) ++n;
  EXPECT_EQ(n, 2) << "preempted once, then ran to the end";
  EXPECT_EQ(logs.find("non-zero status"), std::string::npos) << logs;     // Not a failure,
  EXPECT_EQ(logs.find("Restarting replica"), std::string::npos) << logs;  // nor a restart,
  EXPECT_EQ(logs.find("forwarding signal"), std::string::npos) << logs;   // nor podman's noise.
}

TEST_F(SlurmTest, ARequestSlurmRefusesFailsTheJobWithSlurmsReason) {
  auto d = StartDaemon({"--slurm-partition", "nosuchpartition"});
  std::string id = Submit(*d, {Pool(1, kPythonImage, Sh("true"))});
  nlohmann::json job = WaitEnd(*d, id, 60);
  ASSERT_EQ(job.value("state", ""), "JOB_STATE_FAILED") << job.dump();
  EXPECT_NE(job["error"].value("message", "").find("Invalid partition name"), std::string::npos)
      << job.dump();
}

// The registry on the cluster's address takes tokens (issue 30 item 2): the host Slurm
// chose pulls with the job's own credential (an auth file beside its env file), from
// the token service on the daemon's address; nobody pulls or pushes without one.
TEST_F(SlurmTest, AnImagePushedByItsGcrNameIsPulledOnTheHostSlurmChose) {
  constexpr char kEditor[] = "slurm-it-editor-token-0123456789";
  const std::filesystem::path config =
      std::filesystem::temp_directory_path() / ("ty-slurm-tokens-" + std::to_string(getpid()));
  std::ofstream(config) << "tokens:\n  - name: editor\n    sha256: " << auth::Sha256Hex(kEditor)
                        << "\n    role: editor\n    projects: [it]\n";
  // Beyond loopback, as a cluster's daemon listens (tokens allow it): the token service
  // is then on the registry's address, which the hosts reach.
  auto d = StartDaemon(
      {"--config", config.string(), "--listen", "0.0.0.0:0", "--registry", "10.201.0.1:80"});
  std::filesystem::remove(config);
  d->set_token(kEditor);
  const std::string pushed = "10.201.0.1:80/it/slurm-bb:1";
  ASSERT_EQ(RunProcess({"podman", "tag", "localhost/trainyard/busybox:latest", pushed}).rc, 0);
  ProcessRun anonymous = RunProcess({"podman", "push", "-q", "--tls-verify=false", pushed});
  EXPECT_NE(anonymous.rc, 0) << "a push without a token: " << d->Log();
  ProcessRun push = RunProcess({"podman", "push", "-q", "--tls-verify=false", "--creds",
                                std::string("oauth2accesstoken:") + kEditor, pushed});
  ASSERT_EQ(push.rc, 0) << push.err << d->Log();
  RunProcess({"podman", "rmi", pushed, "gcr.io/it/slurm-bb:1"});
  std::string id = Submit(*d, {Pool(1, "gcr.io/it/slurm-bb:1", Sh("echo pulled on $(hostname)"))});
  nlohmann::json job = WaitEnd(*d, id);
  std::string logs = Logs(*d, id);
  EXPECT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump() << logs << d->Log();
  EXPECT_TRUE(std::regex_search(logs, std::regex("pulled on n\\d"))) << logs;
  RunProcess({"podman", "rmi", "gcr.io/it/slurm-bb:1"});
}

TEST_F(SlurmTest, AFourTrialStudyRunsItsTrialsOnSlurm) {
  auto d = StartDaemon();
  const std::string base = "/v1/projects/it/locations/us-central1/hyperparameterTuningJobs";
  nlohmann::json body = {
      {"displayName", "slurm-study"},
      {"studySpec",
       {{"metrics", {{{"metricId", "accuracy"}, {"goal", "MAXIMIZE"}}}},
        {"parameters",
         {{{"parameterId", "x"}, {"doubleValueSpec", {{"minValue", 0}, {"maxValue", 1}}}}}},
        {"algorithm", "RANDOM_SEARCH"}}},
      {"maxTrialCount", 4},
      {"parallelTrialCount", 2},
      {"trialJobSpec",
       {{"workerPoolSpecs",
         {Pool(1, "localhost/trainyard/busybox:latest", {"sh", "-c", kTrainer, "trainer"})}}}}};
  HttpReply created = d->Post(base, body.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  nlohmann::json done = d->WaitForField(base + "/" + IdOf(created.Json()), "state", kTerminal, 180);
  ASSERT_EQ(done.value("state", ""), "JOB_STATE_SUCCEEDED") << done.dump(1) << d->Log();
  ASSERT_EQ(done["trials"].size(), 4u) << done.dump(1);
  for (const auto& t : done["trials"]) {
    double x = -1;
    for (const auto& p : t["parameters"]) x = p["value"];
    EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
    EXPECT_NEAR(t["finalMeasurement"]["metrics"][0]["value"].get<double>(), x, 1e-5) << t.dump();
  }
}

TEST_F(SlurmTest, APythonPackageJobInstallsItsPackageOnTheHostAndRuns) {
  auto d = StartDaemon();
  // An sdist in bucket pk-slurm: trainer/task.py prints its arguments.
  std::filesystem::path src = std::filesystem::path(d->data_dir()) / "sdist" / "trainer-0.1";
  std::filesystem::create_directories(src / "trainer");
  std::ofstream(src / "setup.py")
      << "from setuptools import setup\nsetup(name='trainer', version='0.1', "
         "packages=['trainer'])\n";
  std::ofstream(src / "trainer" / "__init__.py") << "";
  std::ofstream(src / "trainer" / "task.py")
      << "import socket, sys\nprint('package ran on', socket.gethostname(), sys.argv[1:])\n";
  ASSERT_EQ(d->Post("/storage/v1/b?project=it", R"({"name":"pk-slurm"})").status, 200);
  std::filesystem::path bucket = std::filesystem::path(d->data_dir()) / "buckets" / "pk-slurm";
  std::filesystem::create_directories(bucket);
  ProcessRun tar = RunProcess({"tar", "czf", (bucket / "trainer-0.1.tar.gz").string(), "-C",
                               src.parent_path().string(), "trainer-0.1"});
  ASSERT_EQ(tar.rc, 0) << tar.err;
  nlohmann::json pool = {
      {"machineSpec", {{"machineType", "n1-standard-4"}}},
      {"replicaCount", "1"},
      {"pythonPackageSpec",
       {{"executorImageUri", "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest"},
        {"packageUris", {"gs://pk-slurm/trainer-0.1.tar.gz"}},
        {"pythonModule", "trainer.task"},
        {"args", {"--epochs", "1"}}}}};
  std::string id = Submit(*d, {pool});
  nlohmann::json job = WaitEnd(*d, id, 180);
  std::string logs = Logs(*d, id);
  EXPECT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << job.dump() << logs;
  EXPECT_TRUE(std::regex_search(logs, std::regex("package ran on n\\d \\['--epochs', '1'\\]")))
      << logs;
}

}  // namespace
}  // namespace ty::testing
