// GPUs for real, where this machine has NVIDIA GPUs (`nvidia-smi -L` lists one):
// the daemon finds them with its default capacity, a job granted a GPU computes on
// it while a CPU job sees none, a job waits for a GPU in use and says so, a job
// asking for more GPUs than the host has is refused at submit, and a study's GPU
// trials take turns. The process executor runs the replicas (a GPU machine need not
// have a container engine with NVIDIA's hook); where `python3` has torch, replicas
// check CUDA itself, else only what CUDA is told. Skipped without a GPU, as in CI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <set>

#include "common/time.h"
#include "integration/gpu_harness.h"

namespace ty::testing {
namespace {

const char kBase[] = "/v1/projects/gpu/locations/local/customJobs";

TimeMicros At(const nlohmann::json& time) {
  Result<TimeMicros> t = ParseRfc3339(time.get<std::string>());
  EXPECT_TRUE(t.ok()) << time;
  return t.ok() ? *t : 0;
}

// A machine type that Vertex pairs with `count` GPUs of `type` (a3 and a2 types
// have theirs built in); "" where no such type exists.
std::string MachineFor(const std::string& type, int count) {
  auto built_in = [&](const std::string& family) {
    for (int n : {1, 2, 4, 8}) {
      if (n == count) return family + std::to_string(n) + "g";
    }
    return std::string();
  };
  if (type.find("H100") != std::string::npos) return built_in("a3-highgpu-");
  if (type.find("A100") != std::string::npos) return built_in("a2-highgpu-");
  return "n1-standard-16";
}

nlohmann::json GpuPool(const std::string& type, int count, const std::string& script) {
  nlohmann::json machine = {{"machineType", MachineFor(type, count)}};
  if (count > 0) {
    machine["acceleratorType"] = type;
    machine["acceleratorCount"] = count;
  } else {
    machine["machineType"] = "n1-standard-4";
  }
  return {{"machineSpec", machine},
          {"replicaCount", "1"},
          {"containerSpec",
           {{"imageUri", "unused-by-the-process-executor"}, {"command", {"sh", "-c", script}}}}};
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gpus_ = static_cast<int>(HostGpuUuids().size());
    if (gpus_ == 0) GTEST_SKIP() << "no NVIDIA GPU here (nvidia-smi -L lists none)";
    torch_ = ShellOutput("python3 -c 'import torch; print(torch.cuda.is_available())' 2>/dev/null")
                 .find("True") != std::string::npos;
    daemon_ = std::make_unique<Daemon>(std::vector<std::string>{"--executor", "process"});
    int counted = 0;
    ASSERT_TRUE(DaemonGpuCapacity(*daemon_, &type_, &counted)) << daemon_->Get("/metrics").body;
    EXPECT_EQ(counted, gpus_) << "the daemon counts other GPUs than nvidia-smi -L";
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
    daemon_.reset();
  }
  std::string Create(const nlohmann::json& pool) {
    nlohmann::json body = {{"displayName", "gpu"}, {"jobSpec", {{"workerPoolSpecs", {pool}}}}};
    HttpReply r = daemon_->Post(kBase, body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return IdOf(r.Json());
  }
  nlohmann::json WaitEnd(const std::string& id) {
    return daemon_->WaitForField(std::string(kBase) + "/" + id, "state", kGpuJobTerminal, 180);
  }
  std::string Logs(const std::string& id) { return ReplicaLogText(*daemon_, kBase, id); }

  int gpus_ = 0;
  bool torch_ = false;
  std::string type_;
  std::unique_ptr<Daemon> daemon_;
};

// What a replica prints: the GPUs CUDA is told of and, with torch, what CUDA finds
// and a product computed on the device.
const char kProbe[] =
    "echo \"visible=[$CUDA_VISIBLE_DEVICES]\"; "
    "if [ -n \"$TORCH\" ]; then python3 -c '\n"
    "import torch\n"
    "print(\"cuda_devices=%d\" % torch.cuda.device_count())\n"
    "if torch.cuda.is_available():\n"
    "    x = torch.ones(1024, 1024, device=\"cuda\")\n"
    "    print(\"device=%s product=%d\" % (torch.cuda.get_device_name(0), int((x @ x).sum())))\n"
    "'; fi";

TEST_F(GpuTest, AGpuJobComputesOnItsGpuWhileACpuJobSeesNone) {
  const std::string probe = std::string(torch_ ? "TORCH=1; " : "") + kProbe;
  std::string gpu = Create(GpuPool(type_, 1, probe));
  std::string cpu = Create(GpuPool(type_, 0, probe));
  nlohmann::json gpu_end = WaitEnd(gpu), cpu_end = WaitEnd(cpu);
  ASSERT_EQ(gpu_end["state"], "JOB_STATE_SUCCEEDED") << gpu_end.dump(1) << Logs(gpu);
  ASSERT_EQ(cpu_end["state"], "JOB_STATE_SUCCEEDED") << cpu_end.dump(1) << Logs(cpu);
  std::string gpu_out = Logs(gpu), cpu_out = Logs(cpu);
  EXPECT_TRUE(std::regex_search(gpu_out, std::regex("visible=\\[[0-9]+\\]"))) << gpu_out;
  EXPECT_NE(cpu_out.find("visible=[]"), std::string::npos) << cpu_out;
  if (torch_) {
    EXPECT_NE(gpu_out.find("cuda_devices=1\n"), std::string::npos) << gpu_out;
    EXPECT_NE(gpu_out.find("product=1073741824"), std::string::npos) << gpu_out;
    EXPECT_NE(cpu_out.find("cuda_devices=0\n"), std::string::npos) << cpu_out;
  }
}

// Every GPU busy: the next GPU job waits QUEUED saying for what, and starts only
// after a GPU job ended; no two running jobs hold the same GPU.
TEST_F(GpuTest, AJobWaitsForAGpuInUseAndSaysWhy) {
  std::vector<std::string> ids;
  for (int i = 0; i <= gpus_; ++i) {
    ids.push_back(Create(GpuPool(type_, 1, "echo \"visible=[$CUDA_VISIBLE_DEVICES]\"; sleep 3")));
  }
  const std::string last = ids.back();
  nlohmann::json details = daemon_->Get(std::string(kBase) + "/" + last + "/details").Json();
  for (int i = 0; i < 100 && !details.contains("queue"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    details = daemon_->Get(std::string(kBase) + "/" + last + "/details").Json();
  }
  ASSERT_TRUE(details.contains("queue")) << details.dump(1);
  EXPECT_EQ(details["queue"]["reason"], "waiting for 1 GPU of " + type_ + ": 0 free")
      << details.dump(1);
  std::set<std::string> held;
  TimeMicros first_end = 0;
  for (const std::string& id : ids) {
    nlohmann::json end = WaitEnd(id);
    ASSERT_EQ(end["state"], "JOB_STATE_SUCCEEDED") << end.dump(1);
    if (id == last) {
      EXPECT_GE(At(end["startTime"]), first_end) << end.dump(1);
      continue;
    }
    std::smatch m;
    std::string out = Logs(id);
    ASSERT_TRUE(std::regex_search(out, m, std::regex("visible=\\[([0-9]+)\\]"))) << out;
    EXPECT_TRUE(held.insert(m[1]).second) << "GPU " << m[1] << " given to two running jobs";
    TimeMicros ended = At(end["endTime"]);
    if (first_end == 0 || ended < first_end) first_end = ended;
  }
}

TEST_F(GpuTest, MoreGpusThanTheHostHasIsRefusedAtSubmit) {
  const std::string machine = MachineFor(type_, gpus_ + 1);
  if (machine.empty()) GTEST_SKIP() << "no machine type holds " << gpus_ + 1 << " " << type_;
  nlohmann::json body = {{"displayName", "too-big"},
                         {"jobSpec", {{"workerPoolSpecs", {GpuPool(type_, gpus_ + 1, "true")}}}}};
  HttpReply r = daemon_->Post(kBase, body.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("needs " + std::to_string(gpus_ + 1) + " GPUs of " + type_),
            std::string::npos)
      << r.body;
}

// A study whose trials each take a GPU runs at most as many at once as there are
// GPUs, whatever parallelTrialCount says; each trial reports what it computed there.
TEST_F(GpuTest, AStudysGpuTrialsTakeTurnsOnTheGpus) {
  const std::string base = "/v1/projects/gpu/locations/local/hyperparameterTuningJobs";
  // Each trial prints when it held the GPU (ns since the epoch, from the host clock).
  const std::string trainer =
      "x=${1#--x=}; echo \"span $CLOUD_ML_TRIAL_ID start $(date +%s%N)\"; sleep 2; "
      "mkdir -p \"$(dirname \"$CLOUD_ML_HP_METRIC_FILE\")\"; "
      "echo \"{\\\"accuracy\\\": \\\"$x\\\", \\\"global_step\\\": \\\"1\\\"}\" > "
      "\"$CLOUD_ML_HP_METRIC_FILE\"; echo \"span $CLOUD_ML_TRIAL_ID end $(date +%s%N)\"";
  nlohmann::json pool = GpuPool(type_, 1, trainer);
  pool["containerSpec"]["command"].push_back("trainer");
  const int trials = gpus_ + 1;
  nlohmann::json body = {
      {"displayName", "gpu-study"},
      {"studySpec",
       {{"metrics", {{{"metricId", "accuracy"}, {"goal", "MAXIMIZE"}}}},
        {"parameters",
         {{{"parameterId", "x"}, {"doubleValueSpec", {{"minValue", 0}, {"maxValue", 1}}}}}},
        {"algorithm", "RANDOM_SEARCH"}}},
      {"maxTrialCount", trials},
      {"parallelTrialCount", trials},
      {"trialJobSpec", {{"workerPoolSpecs", {pool}}}}};
  HttpReply created = daemon_->Post(base, body.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  nlohmann::json done =
      daemon_->WaitForField(base + "/" + IdOf(created.Json()), "state", kGpuJobTerminal, 180);
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump(1);
  ASSERT_EQ(done["trials"].size(), static_cast<size_t>(trials)) << done.dump(1);
  for (const auto& t : done["trials"]) {
    EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
    EXPECT_EQ(t["finalMeasurement"]["metrics"][0]["metricId"], "accuracy") << t.dump();
  }
  // The study's log holds its trials' lines.
  nlohmann::json page =
      daemon_->Get(base + "/" + IdOf(created.Json()) + "/logs?pageSize=1000").Json();
  std::map<std::string, std::pair<int64_t, int64_t>> spans;
  std::regex span("span ([0-9]+) (start|end) ([0-9]+)");
  for (const auto& e : page.value("entries", nlohmann::json::array())) {
    std::string text = e.value("message", "");
    std::smatch m;
    if (!std::regex_search(text, m, span)) continue;
    int64_t ns = std::stoll(m[3]);
    (m[2] == "start" ? spans[m[1]].first : spans[m[1]].second) = ns;
  }
  ASSERT_EQ(spans.size(), static_cast<size_t>(trials)) << page.dump(1);
  // More trials than GPUs: at least one started only after another had ended.
  bool waited = false;
  for (const auto& [a, a_span] : spans) {
    for (const auto& [b, b_span] : spans) waited = waited || a_span.first >= b_span.second;
  }
  EXPECT_TRUE(waited) << done.dump(1);
}

}  // namespace
}  // namespace ty::testing
