// Admission and enforcement with the real daemon and podman: a declared capacity
// queues the second job with its reason, a spot job is preempted and finishes
// later, a replica past its memory limit fails the job as out of memory, and
// maxRunningTime cancels a job.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "integration/daemon_harness.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

const char kVertexBase[] = "/v1/projects/it/locations/local/customJobs";
const char kMlBase[] = "/v1/projects/it/jobs";
const char kPythonImage[] = "localhost/trainyard/sklearn-digits:latest";
const std::vector<std::string> kTerminal = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED",
                                            "JOB_STATE_CANCELLED"};

std::string VertexJob(const std::vector<std::string>& command,
                      const std::string& image = kTestImage, const std::string& scheduling = "",
                      const std::string& output = "") {
  nlohmann::json body = {{"displayName", "sched"},
                         {"jobSpec",
                          {{"workerPoolSpecs",
                            {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                              {"replicaCount", "1"},
                              {"containerSpec", {{"imageUri", image}, {"command", command}}}}}}}}};
  if (!scheduling.empty()) body["jobSpec"]["scheduling"] = nlohmann::json::parse(scheduling);
  if (!output.empty()) body["jobSpec"]["baseOutputDirectory"] = nlohmann::json::parse(output);
  return body.dump();
}

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EngineAnswers()) {
      if (std::getenv("TRAINYARD_REQUIRE_ENGINE")) FAIL() << "the engine does not answer";
      GTEST_SKIP() << "no container engine answers on " << EngineSocket();
    }
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
    daemon_.reset();
  }
  // Starts the daemon with this YAML config.
  void StartWith(const std::string& yaml) {
    if (yaml.empty()) {
      daemon_ = std::make_unique<Daemon>();
      return;
    }
    config_ = std::filesystem::temp_directory_path() / ("ty-sched-" + std::to_string(::getpid()) +
                                                        "-" + std::to_string(++counter_) + ".yaml");
    std::ofstream(config_) << yaml;
    daemon_ = std::make_unique<Daemon>(std::vector<std::string>{"--config", config_.string()});
  }
  ~SchedulerTest() override {
    std::error_code ec;
    if (!config_.empty()) std::filesystem::remove(config_, ec);
  }
  std::string Create(const std::string& body) {
    HttpReply r = daemon_->Post(kVertexBase, body);
    EXPECT_EQ(r.status, 200) << r.body;
    return IdOf(r.Json());
  }
  nlohmann::json WaitState(const std::string& id, const std::vector<std::string>& states,
                           int timeout_s = 60) {
    return daemon_->WaitForField(std::string(kVertexBase) + "/" + id, "state", states, timeout_s);
  }
  nlohmann::json Details(const std::string& id) {
    return daemon_->Get(std::string(kVertexBase) + "/" + id + "/details").Json();
  }
  nlohmann::json WaitForQueueInfo(const std::string& id) {
    nlohmann::json details = Details(id);
    for (int i = 0; i < 100 && !details.contains("queue"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      details = Details(id);
    }
    return details;
  }
  std::string ServiceLog(const std::string& id) {
    auto j = daemon_->Get(std::string(kVertexBase) + "/" + id + "/logs?task=service").Json();
    std::string out;
    for (const auto& e : j.value("entries", nlohmann::json::array())) {
      out += e.value("message", "") + "\n";
    }
    return out;
  }

  std::unique_ptr<Daemon> daemon_;
  std::filesystem::path config_;
  static inline int counter_ = 0;
};

TEST_F(SchedulerTest, WithRoomForOneJobTheSecondWaitsWithItsReasonThenRuns) {
  StartWith("capacity: {cpus: 4, memory_gb: 15}\n");
  std::string first = Create(VertexJob({"sh", "-c", "sleep 2; echo first"}));
  WaitState(first, {"JOB_STATE_RUNNING"});
  std::string second = Create(VertexJob({"sh", "-c", "echo second"}));
  nlohmann::json queued = daemon_->Get(std::string(kVertexBase) + "/" + second).Json();
  EXPECT_EQ(queued["state"], "JOB_STATE_QUEUED") << queued.dump();
  // Admission passes run asynchronously after a submit: wait for the one that placed it.
  nlohmann::json details = WaitForQueueInfo(second);
  ASSERT_TRUE(details.contains("queue")) << details.dump();
  EXPECT_EQ(details["queue"]["position"], 1);
  EXPECT_EQ(details["queue"]["reason"], "waiting for 4 vCPUs: 0 free");
  // The ml v1 view of a queued job carries its position too.
  nlohmann::json ml_job = {{"jobId", "queued_ml"},
                           {"trainingInput",
                            {{"scaleTier", "CUSTOM"},
                             {"masterType", "n1-standard-4"},
                             {"masterConfig", {{"imageUri", kTestImage}}},
                             {"args", {"true"}},
                             {"region", "us-central1"}}}};
  ASSERT_EQ(daemon_->Post(kMlBase, ml_job.dump()).status, 200);
  nlohmann::json ml = daemon_->Get(std::string(kMlBase) + "/queued_ml").Json();
  for (int i = 0; i < 100 && !ml.contains("jobPosition"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ml = daemon_->Get(std::string(kMlBase) + "/queued_ml").Json();
  }
  EXPECT_EQ(ml["state"], "QUEUED");
  EXPECT_EQ(ml["jobPosition"], "2") << ml.dump();

  nlohmann::json done = WaitState(second, kTerminal);
  EXPECT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump();
  nlohmann::json first_done = daemon_->Get(std::string(kVertexBase) + "/" + first).Json();
  EXPECT_EQ(first_done["state"], "JOB_STATE_SUCCEEDED");
  // Not before the first ended.
  EXPECT_GE(done["startTime"].get<std::string>(), first_done["endTime"].get<std::string>());
  EXPECT_NE(ServiceLog(second).find("Waiting in the queue (position 1): waiting for 4 vCPUs: "
                                    "0 free."),
            std::string::npos)
      << ServiceLog(second);
}

TEST_F(SchedulerTest, AJobBiggerThanTheDeclaredCapacityIsRefusedAtSubmit) {
  StartWith("capacity: {cpus: 4, memory_gb: 15}\n");
  nlohmann::json body = nlohmann::json::parse(VertexJob({"true"}));
  body["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["machineType"] = "n1-standard-8";
  HttpReply r = daemon_->Post(kVertexBase, body.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("jobSpec.workerPoolSpecs[0].machineSpec: a replica needs 8 vCPUs"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("the biggest is"), std::string::npos) << r.body;
}

TEST_F(SchedulerTest, ASpotJobIsPreemptedForAnOnDemandJobAndFinishesLater) {
  StartWith("capacity: {cpus: 4, memory_gb: 15}\n");
  // The spot job counts its attempts in a bucket file: the first is preempted
  // (SIGTERM) while it sleeps; the second runs to the end.
  std::string spot = Create(VertexJob(
      {"sh", "-c", "mkdir -p /gcs/spot; echo x >> /gcs/spot/attempts; sleep 3; echo spot done"},
      kTestImage, R"({"strategy": "SPOT"})", R"({"outputUriPrefix": "gs://spot/out/"})"));
  WaitState(spot, {"JOB_STATE_RUNNING"});
  std::string urgent = Create(VertexJob({"sh", "-c", "echo urgent done"}));
  nlohmann::json urgent_done = WaitState(urgent, kTerminal);
  EXPECT_EQ(urgent_done["state"], "JOB_STATE_SUCCEEDED") << urgent_done.dump();
  nlohmann::json spot_done = WaitState(spot, kTerminal);
  EXPECT_EQ(spot_done["state"], "JOB_STATE_SUCCEEDED") << spot_done.dump();
  nlohmann::json details = Details(spot);
  EXPECT_EQ(details["attempt"], 2) << details.dump();
  EXPECT_EQ(details["preemptions"], 1) << details.dump();
  std::ifstream attempts(daemon_->data_dir() + "/buckets/spot/attempts");
  std::string all((std::istreambuf_iterator<char>(attempts)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "x\nx\n");
  std::string log = ServiceLog(spot);
  EXPECT_NE(log.find("Preempting this spot job"), std::string::npos) << log;
  EXPECT_NE(log.find("Job was preempted; it is queued again and restarts as attempt 2."),
            std::string::npos)
      << log;
}

TEST_F(SchedulerTest, AReplicaPastItsMemoryLimitFailsTheJobAsOutOfMemory) {
  // n1-standard-4 made small here, so the limit (its memory, capped by the node) is
  // 128 MiB and the trainer's 400 MiB cannot fit.
  StartWith("machine_types: {n1-standard-4: {cpus: 1, memory_gb: 0.125}}\n");
  std::string id = Create(VertexJob(
      {"python3", "-c",
       "import time; print('allocating', flush=True); time.sleep(1.5); x = bytearray(400 << 20); "
       "print('survived', flush=True)"},
      kPythonImage));
  nlohmann::json done = WaitState(id, kTerminal, 120);
  ASSERT_EQ(done["state"], "JOB_STATE_FAILED") << done.dump();
  std::string message = done["error"]["message"];
  EXPECT_EQ(message.rfind("The replica workerpool0-0 ran out of memory and exited with a "
                          "non-zero status of 137",
                          0),
            0u)
      << message;
  nlohmann::json details = Details(id);
  EXPECT_EQ(details["attempt"], 1) << "an out-of-memory failure is not retried";
}

TEST_F(SchedulerTest, MaxRunningTimeOfThreeSecondsCancelsASleepingJob) {
  StartWith("");
  nlohmann::json ml_job = {{"jobId", "short_leash"},
                           {"trainingInput",
                            {{"scaleTier", "CUSTOM"},
                             {"masterType", "n1-standard-4"},
                             {"masterConfig", {{"imageUri", kTestImage}}},
                             {"args", {"sleep", "600"}},
                             {"region", "us-central1"},
                             {"scheduling", {{"maxRunningTime", "3s"}}}}}};
  ASSERT_EQ(daemon_->Post(kMlBase, ml_job.dump()).status, 200);
  nlohmann::json done = daemon_->WaitForField(std::string(kMlBase) + "/short_leash", "state",
                                              {"SUCCEEDED", "FAILED", "CANCELLED"}, 60);
  ASSERT_EQ(done["state"], "CANCELLED") << done.dump();
  EXPECT_EQ(done["errorMessage"], "Job was cancelled: it exceeded its timeout of 3s.");
  // Cancelled about 3 s after it started running.
  auto seconds = [](const std::string& t) {
    return std::stod(t.substr(17, t.size() - 18));  // SS.ffffff of ...THH:MM:SS.ffffffZ
  };
  double ran = seconds(done["endTime"]) - seconds(done["startTime"]);
  if (ran < 0) ran += 60;
  EXPECT_GE(ran, 3.0);
  EXPECT_LT(ran, 15.0);
}

TEST_F(SchedulerTest, MetricsSayWhatWaitsAndWhatIsHeldAndPromtoolAcceptsThem) {
  StartWith("capacity: {cpus: 4, memory_gb: 15, gpus: {NVIDIA_TESLA_T4: 2}}\n");
  std::string first = Create(VertexJob({"sh", "-c", "sleep 2"}));
  WaitState(first, {"JOB_STATE_RUNNING"});
  std::string second = Create(VertexJob({"true"}));
  ASSERT_TRUE(WaitForQueueInfo(second).contains("queue"));
  HttpReply r = daemon_->Get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  for (const char* line :
       {"trainyard_jobs{state=\"RUNNING\"} 1\n", "trainyard_jobs{state=\"QUEUED\"} 1\n",
        "trainyard_queue_length 1\n", "trainyard_capacity_cpus 4\n",
        "trainyard_capacity_gpus{type=\"NVIDIA_TESLA_T4\"} 2\n", "trainyard_admitted_cpus 4\n",
        "trainyard_admissions_total 1\n", "trainyard_preemptions_total 0\n"}) {
    EXPECT_NE(r.body.find(line), std::string::npos) << line << " in:\n" << r.body;
  }
  // Per node: its capacity, and what the running job holds there (all of it).
  auto node_sample = [&](const std::string& family) {
    const size_t at = r.body.find("\n" + family + "{node=\"");
    if (at == std::string::npos) return std::string("missing");
    const size_t end = r.body.find('\n', at + 1);
    const std::string line = r.body.substr(at + 1, end - at - 1);
    return line.substr(line.rfind(' ') + 1);
  };
  EXPECT_EQ(node_sample("trainyard_node_capacity_cpus"), "4") << r.body;
  EXPECT_EQ(node_sample("trainyard_node_held_cpus"), "4") << r.body;
  EXPECT_EQ(node_sample("trainyard_node_capacity_gpus"), "2") << r.body;
  if (RunProcess({"sh", "-c", "command -v promtool"}).rc != 0) {
    GTEST_SKIP() << "promtool is not installed (scripts/setup installs it)";
  }
  std::filesystem::path file = config_.string() + ".prom";
  std::ofstream(file) << r.body;
  ProcessRun check = RunProcess({"sh", "-c", "promtool check metrics < " + file.string()});
  std::filesystem::remove(file);
  EXPECT_EQ(check.rc, 0) << check.out << check.err;
  EXPECT_EQ(check.out + check.err, "") << "promtool found problems";
  WaitState(second, kTerminal);
}

// The trainyard CLI: describe of a queued job shows its place and reason; a GPU
// job on a machine without that GPU is refused at submit naming the field.
TEST_F(SchedulerTest, TheCliShowsWhyAJobWaitsAndRefusesGpusThatAreNotThere) {
  StartWith("capacity: {cpus: 4, memory_gb: 15}\n");
  std::string first = Create(VertexJob({"sh", "-c", "sleep 3"}));
  WaitState(first, {"JOB_STATE_RUNNING"});
  std::string second = Create(VertexJob({"true"}));
  ASSERT_TRUE(WaitForQueueInfo(second).contains("queue"));
  const std::string cli = std::string(TY_BINARY_DIR) + "/bin/trainyard";
  const std::map<std::string, std::string> env = {{"TRAINYARD_API", daemon_->base()},
                                                  {"TRAINYARD_PROJECT", "it"}};
  ProcessRun described =
      RunProcess({cli, "ai", "custom-jobs", "describe", second, "--region=local"}, env);
  ASSERT_EQ(described.rc, 0) << described.err;
  EXPECT_NE(described.out.find("state: JOB_STATE_QUEUED"), std::string::npos) << described.out;
  EXPECT_NE(described.out.find("position: 1"), std::string::npos) << described.out;
  EXPECT_NE(described.out.find("reason: \"waiting for 4 vCPUs: 0 free\""), std::string::npos)
      << described.out;

  ProcessRun gpu = RunProcess(
      {cli, "ai-platform", "jobs", "submit", "training", "gpu_job", "--region=us-central1",
       "--scale-tier=custom", "--master-machine-type=n1-standard-4",
       std::string("--master-image-uri=") + kTestImage,
       "--master-accelerator=type=nvidia-tesla-t4,count=1", "--", "true"},
      env);
  EXPECT_EQ(gpu.rc, 1) << gpu.out << gpu.err;
  EXPECT_NE(gpu.err.find("trainingInput.masterType: a replica needs 1 GPU of NVIDIA_TESLA_T4"),
            std::string::npos)
      << gpu.err;
  WaitState(second, kTerminal);
}

}  // namespace
}  // namespace ty::testing
