// Admission inside the service (manual loop, FakeExecutor): jobs wait for capacity
// with their reason, GPUs are granted by index and reach the launch, grants survive
// a daemon restart, and a spot job is preempted, re-queued and run again.
#include <gtest/gtest.h>

#include "service/service_fixture.h"

namespace ty::testing {
namespace {

using model::JobState;

class AdmissionServiceTest : public ServiceFixture {
 protected:
  void SetUp() override {
    scheduler::Node node{"box", 4, 15, {{"NVIDIA_TESLA_T4", 0}, {"NVIDIA_TESLA_T4", 1}}};
    admission_.capacity.nodes = {node};
    ServiceFixture::SetUp();
  }
  static nlohmann::json GpuBody(const std::string& extra = "") {
    nlohmann::json body = VertexBody(extra);
    body["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"] = "NVIDIA_TESLA_T4";
    body["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"] = 1;
    return body;
  }
};

TEST_F(AdmissionServiceTest, TheSecondJobWaitsWithItsReasonAndRunsWhenTheFirstEnds) {
  model::Job first = SubmitVertex(GpuBody());
  model::Job second = SubmitVertex(GpuBody());
  ASSERT_EQ(WaitForState(first, JobState::kRunning).state, JobState::kRunning);
  model::Job waiting = Current(second);
  EXPECT_EQ(waiting.state, JobState::kQueued);
  EXPECT_EQ(waiting.queue_position, 1);
  EXPECT_EQ(waiting.queue_reason, "waiting for 4 vCPUs: 0 free");
  std::optional<executor::AttemptSpec> launch = executor_->LastLaunchOf(first.uid);
  ASSERT_TRUE(launch.has_value());
  EXPECT_EQ(launch->replicas[0].gpu_indices, std::vector<int>{0});
  EXPECT_EQ(launch->replicas[0].cpu_limit, 4);
  EXPECT_EQ(launch->replicas[0].memory_limit_gb, 15);

  executor_->Exit(first.uid, 1, 0, 0, 0);
  model::Job running = WaitForState(second, JobState::kRunning);
  EXPECT_EQ(running.state, JobState::kRunning);
  EXPECT_EQ(running.queue_position, 0);
  ASSERT_EQ(running.grants.size(), 1u);
  EXPECT_EQ(running.grants[0].gpu_indices, std::vector<int>{0});
  EXPECT_EQ(running.grants[0].node_name, "box");
}

TEST_F(AdmissionServiceTest, AJobThatCanNeverFitIsRefusedAtSubmit) {
  nlohmann::json body = GpuBody();
  body["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorCount"] = 4;
  auto parsed = wire::ParseVertexCustomJob(body);
  ASSERT_TRUE(parsed.ok());
  auto job = service_->Submit(model::Dialect::kVertex, "p", "us-central1", std::move(*parsed));
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(job.status().message().find("4 GPUs of NVIDIA_TESLA_T4"), std::string::npos)
      << job.status().message();
  EXPECT_TRUE(store_->ListLiveJobs()->empty()) << "nothing stored";
}

TEST_F(AdmissionServiceTest, GrantsSurviveARestartSoNothingIsAdmittedTwice) {
  model::Job first = SubmitVertex(GpuBody());
  WaitForState(first, JobState::kRunning);
  auto next = std::make_unique<FakeExecutor>();
  executor::ObservedReplica running;
  running.job_uid = first.uid;
  running.attempt = 1;
  running.running = true;
  next->SetRecovered({running});
  RestartService(std::move(next));
  model::Job second = SubmitVertex(GpuBody());
  EXPECT_EQ(WaitForState(second, JobState::kRunning).state, JobState::kQueued)
      << "the restarted daemon still counts the first job's resources";
  EXPECT_EQ(Current(first).grants.size(), 1u);
  executor_->Exit(first.uid, 1, 0, 0, 0);
  EXPECT_EQ(WaitForState(second, JobState::kRunning).state, JobState::kRunning);
}

TEST_F(AdmissionServiceTest, ASpotJobIsPreemptedRequeuedAndRunsAgainWithoutUsingARetry) {
  model::Job spot = SubmitVertex(VertexBody(R"({"scheduling": {"strategy": "SPOT"}})"));
  ASSERT_EQ(WaitForState(spot, JobState::kRunning).state, JobState::kRunning);
  model::Job urgent = SubmitVertex(VertexBody());
  clock_.Advance(1000);  // The preemption comes after the urgent job was queued.
  RunLoop();
  // FakeExecutor's Stop ends the spot replica with SIGTERM: back to the queue.
  model::Job requeued = Current(spot);
  EXPECT_EQ(requeued.state, JobState::kQueued);
  EXPECT_EQ(requeued.preemptions, 1);
  EXPECT_TRUE(requeued.grants.empty());
  EXPECT_EQ(WaitForState(urgent, JobState::kRunning).state, JobState::kRunning);
  EXPECT_EQ(Current(spot).queue_reason, "waiting for 4 vCPUs: 0 free");
  executor_->Exit(urgent.uid, 1, 0, 0, 0);
  model::Job again = WaitForState(spot, JobState::kRunning);
  ASSERT_EQ(again.state, JobState::kRunning);
  EXPECT_EQ(again.attempt, 2);
  executor_->Exit(spot.uid, 2, 0, 0, 0);
  EXPECT_EQ(WaitForState(spot, JobState::kSucceeded).state, JobState::kSucceeded);
}

TEST_F(AdmissionServiceTest, CancellingAQueuedJobTakesItOutOfTheQueue) {
  model::Job first = SubmitVertex(VertexBody());
  model::Job second = SubmitVertex(VertexBody());
  WaitForState(first, JobState::kRunning);
  ASSERT_TRUE(service_->Cancel(Ref(second)).ok());
  EXPECT_EQ(WaitForState(second, JobState::kCancelled).state, JobState::kCancelled);
  executor_->Exit(first.uid, 1, 0, 0, 0);
  WaitForState(first, JobState::kSucceeded);
  EXPECT_FALSE(executor_->LastLaunchOf(second.uid).has_value()) << "a cancelled job never runs";
}

}  // namespace
}  // namespace ty::testing
