// GPUs of container replicas on real NVIDIA hardware: where `nvidia-smi -L` lists a
// GPU, the container engine answers and TRAINYARD_GPU_PROBE_IMAGE names an image
// holding `nvidia-smi` (scripts/gpu-bundle builds one on the GPU machine), the daemon
// runs with the container executor and its default capacity, and what a replica
// sees is asked of the driver itself: a GPU job's nvidia-smi reaches exactly the GPU
// it was granted (by UUID), a CPU job's reaches none. The devices come from the
// host's CDI spec for nvidia.com/gpu, as `nvidia-ctk cdi generate` writes it.
// Skipped elsewhere (CI has no GPU); container_gpu_test covers the request itself
// with a CDI spec of the test's own.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "integration/gpu_harness.h"

namespace ty::testing {
namespace {

const char kBase[] = "/v1/projects/gpu/locations/local/customJobs";
// What a replica prints: the variables CUDA and NVIDIA's tools read, the device
// nodes it has, and what the driver answers through them.
const char kProbe[] =
    "echo \"visible=[$CUDA_VISIBLE_DEVICES] nvidia=[$NVIDIA_VISIBLE_DEVICES]\"; "
    "echo \"nodes=[$(ls /dev | grep '^nvidia[0-9]' | tr '\\n' ' ')]\"; "
    "nvidia-smi -L 2>&1; echo \"smi_rc=$?\"";

class GpuContainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uuids_ = HostGpuUuids();
    if (uuids_.empty()) GTEST_SKIP() << "no NVIDIA GPU here (nvidia-smi -L lists none)";
    const char* image = std::getenv("TRAINYARD_GPU_PROBE_IMAGE");
    if (image == nullptr || *image == '\0') {
      GTEST_SKIP() << "TRAINYARD_GPU_PROBE_IMAGE names no image with nvidia-smi";
    }
    image_ = image;
    if (!EngineAnswers()) GTEST_SKIP() << "no container engine at " << EngineSocket();
    ASSERT_TRUE(EngineHasImage(image_)) << image_;
    daemon_ = std::make_unique<Daemon>(std::vector<std::string>{"--executor", "container"});
    int counted = 0;
    ASSERT_TRUE(DaemonGpuCapacity(*daemon_, &type_, &counted)) << daemon_->Get("/metrics").body;
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
    daemon_.reset();
  }

  nlohmann::json Pool(int gpus) const {
    nlohmann::json machine = {{"machineType", gpus > 0 ? "a3-highgpu-1g" : "n1-standard-4"}};
    if (gpus > 0) {
      machine["acceleratorType"] = type_;
      machine["acceleratorCount"] = gpus;
    }
    return {{"machineSpec", machine},
            {"replicaCount", "1"},
            {"containerSpec", {{"imageUri", image_}, {"command", {"sh", "-c", kProbe}}}}};
  }
  std::string Create(const nlohmann::json& pool) {
    nlohmann::json body = {{"displayName", "gpu-container"},
                           {"jobSpec", {{"workerPoolSpecs", {pool}}}}};
    HttpReply r = daemon_->Post(kBase, body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return IdOf(r.Json());
  }
  std::string Logs(const std::string& id) { return ReplicaLogText(*daemon_, kBase, id); }

  std::vector<std::string> uuids_;
  std::string image_, type_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(GpuContainerTest, AGpuReplicaReachesItsGpuAndACpuReplicaNone) {
  std::string gpu = Create(Pool(1));
  std::string cpu = Create(Pool(0));
  for (const std::string& id : {gpu, cpu}) {
    nlohmann::json end =
        daemon_->WaitForField(std::string(kBase) + "/" + id, "state", kGpuJobTerminal, 180);
    ASSERT_EQ(end["state"], "JOB_STATE_SUCCEEDED") << end.dump(1) << Logs(id);
  }
  std::string gpu_out = Logs(gpu), cpu_out = Logs(cpu);
  std::cout << "GPU replica:\n" << gpu_out << "CPU replica:\n" << cpu_out;

  // The GPU job: NVIDIA's variable names the host index granted, CUDA counts from 0,
  // and the driver answers with that GPU's UUID and no other.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(gpu_out, m, std::regex("visible=\\[0\\] nvidia=\\[([0-9]+)\\]")))
      << gpu_out;
  size_t granted = std::stoul(m[1]);
  ASSERT_LT(granted, uuids_.size()) << gpu_out;
  EXPECT_NE(gpu_out.find("smi_rc=0"), std::string::npos) << gpu_out;
  EXPECT_NE(gpu_out.find(uuids_[granted]), std::string::npos) << gpu_out;
  for (size_t i = 0; i < uuids_.size(); ++i) {
    if (i != granted) {
      EXPECT_EQ(gpu_out.find(uuids_[i]), std::string::npos) << gpu_out;
    }
  }
  EXPECT_NE(gpu_out.find("nodes=[nvidia" + std::to_string(granted) + " ]"), std::string::npos)
      << gpu_out;

  // The CPU job: no device node, and the driver does not answer.
  EXPECT_NE(cpu_out.find("nodes=[]"), std::string::npos) << cpu_out;
  EXPECT_EQ(cpu_out.find("smi_rc=0"), std::string::npos) << cpu_out;
  for (const std::string& uuid : uuids_) {
    EXPECT_EQ(cpu_out.find(uuid), std::string::npos) << cpu_out;
  }
}

}  // namespace
}  // namespace ty::testing
