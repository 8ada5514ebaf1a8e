// GPUs of a container replica through real podman, without a GPU: a CDI spec written
// for the test names three "GPUs" of its own kind, each of which sets a variable in
// the container that gets it (what NVIDIA's spec does with device nodes and driver
// libraries). The executor must create such a replica through podman's native API
// (its compat create ignores DeviceRequests) and ask for exactly the granted devices.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "executor/container/container_executor.h"
#include "executor/executor_contract.h"

namespace ty::testing {
namespace {

using executor::AttemptSpec;
using executor::ExecutorEventKind;
using executor::ReplicaLaunch;
using ::testing::Contains;

class ContainerGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TY_REQUIRE_ENGINE_OR_SKIP();
    // Podman reads CDI specs from /etc/cdi and /var/run/cdi (root's).
    std::error_code ec;
    std::filesystem::create_directories("/var/run/cdi", ec);
    spec_ = "/var/run/cdi/trainyard-test-" + std::to_string(getpid()) + ".json";
    // A kind of this process's own: two specs naming the same devices conflict, and
    // podman then resolves neither (tests run in parallel).
    kind_ = "test.trainyard.dev/gpu" + std::to_string(getpid());
    std::ofstream out(spec_);
    out << R"({"cdiVersion": "0.3.0", "kind": ")" << kind_ << R"(", "devices": [)";
    for (int i = 0; i < 3; ++i) {
      out << (i ? "," : "") << R"({"name": ")" << i
          << R"(", "containerEdits": {"env": ["TY_TEST_GPU_)" << i << R"(=present"]}})";
    }
    out << "]}";
    out.close();
    if (!out) GTEST_SKIP() << "cannot write " << spec_ << " (CDI specs need root)";
    uid_ = UniqueJobUid();
    executor::ContainerExecutor::Options o;
    o.clock = SystemClock::Get();
    o.random = SystemRandom::Get();
    o.engine_socket = EngineSocket();
    o.log_sink = &sink_;
    o.cdi_gpu_kind = kind_;
    auto ex = executor::ContainerExecutor::Create(o);
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    ex_ = std::move(*ex);
    ex_->SetEventCallback(events_.Callback());
  }
  void TearDown() override {
    if (ex_ != nullptr) ex_->Cleanup(uid_, 1).IgnoreError();
    ex_.reset();
    ContainerBackend().ForceClean(uid_);
    std::error_code ec;
    if (!spec_.empty()) std::filesystem::remove(spec_, ec);
  }
  ReplicaLaunch Replica(const std::string& script) {
    ReplicaLaunch r = TestReplica(uid_, 0, 0);
    r.image = kTestImage;
    r.command = {"/bin/sh", "-c", script};
    return r;
  }
  std::vector<std::string> RunAndCollect(const ReplicaLaunch& r) {
    AttemptSpec a;
    a.job_uid = uid_;
    a.attempt = 1;
    a.replicas = {r};
    Status launched = ex_->Launch(a);
    EXPECT_TRUE(launched.ok()) << launched.ToString();
    std::optional<executor::ExecutorEvent> outcome = events_.WaitForLaunch(uid_);
    EXPECT_TRUE(outcome && outcome->kind == ExecutorEventKind::kAttemptStarted)
        << (outcome ? outcome->message : "no launch outcome");
    auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
    EXPECT_EQ(exits.size(), 1u);
    if (exits.size() == 1) {
      EXPECT_EQ(exits[0].exit_code, 0);
    }
    return sink_.Messages(uid_);
  }

  std::string spec_;
  std::string kind_;
  std::string uid_;
  RecordingLogSink sink_;
  EventRecorder events_{&sink_};
  std::unique_ptr<executor::ContainerExecutor> ex_;
};

const char kShowDevices[] =
    "echo \"gpus=${TY_TEST_GPU_0:-_},${TY_TEST_GPU_1:-_},${TY_TEST_GPU_2:-_} "
    "cuda=$CUDA_VISIBLE_DEVICES nvidia=$NVIDIA_VISIBLE_DEVICES\"";

TEST_F(ContainerGpuTest, AReplicaGetsExactlyItsGrantedDevices) {
  ReplicaLaunch r = Replica(kShowDevices);
  r.accelerator_type = "NVIDIA_TESLA_T4";
  r.accelerator_count = 2;
  r.gpu_indices = {0, 2};
  // Inside, CUDA numbers the devices it sees from 0.
  EXPECT_THAT(RunAndCollect(r), Contains("gpus=present,_,present cuda=0,1 nvidia=0,2"));
}

// A GPU no CDI spec names (no `nvidia-ctk cdi generate` on the host): the launch
// fails saying what to do, and leaves nothing.
TEST_F(ContainerGpuTest, AGpuWithoutACdiSpecFailsTheLaunchSayingWhatToDo) {
  ReplicaLaunch r = Replica(kShowDevices);
  r.accelerator_type = "NVIDIA_TESLA_T4";
  r.accelerator_count = 1;
  r.gpu_indices = {7};
  AttemptSpec a;
  a.job_uid = uid_;
  a.attempt = 1;
  a.replicas = {r};
  ASSERT_TRUE(ex_->Launch(a).ok());
  std::optional<executor::ExecutorEvent> outcome = events_.WaitForLaunch(uid_);
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(outcome->message, ::testing::HasSubstr("nvidia-ctk cdi generate"));
  EXPECT_FALSE(ContainerBackend().Leftovers(uid_));
}

TEST_F(ContainerGpuTest, AReplicaGrantedNoGpuGetsNone) {
  ReplicaLaunch r = Replica(kShowDevices);
  EXPECT_THAT(RunAndCollect(r), Contains("gpus=_,_,_ cuda= nvidia=void"));
}

}  // namespace
}  // namespace ty::testing
