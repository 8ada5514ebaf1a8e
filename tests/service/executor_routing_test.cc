// One daemon, two executors (issue 21's per-project choice): the jobs of a project
// routed to the second run there and only there, are admitted against its capacity
// (not the first's), reach the storage API its way, and are stopped, recovered and
// cleaned up there. Manual loop, FakeExecutors; the daemon's real wiring with podman
// and Slurm side by side is tests/slurm's MixedDaemonTest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "service/service_fixture.h"

namespace ty::testing {
namespace {

using model::JobState;
using ::testing::HasSubstr;

constexpr char kClusterProject[] = "on-slurm";

class ExecutorRoutingTest : public ServiceFixture {
 protected:
  void SetUp() override {
    // This machine: one job of n1-standard-4 at a time. The cluster: three of them.
    admission_.capacity.nodes = {scheduler::Node{"box", 4, 15, {}}};
    cluster_ = std::make_unique<FakeExecutor>();
    cluster_->SetDaemonHost("daemon.cluster", /*needs_credential=*/true);
    service::JobServiceOptions::OtherExecutor other;
    other.name = "slurm";
    other.executor = cluster_.get();
    for (const char* n : {"node1", "node2", "node3"}) {
      other.admission.capacity.nodes.push_back(scheduler::Node{n, 8, 30, {}});
    }
    other.projects = {kClusterProject};
    other_executors_ = {other};
    ServiceFixture::SetUp();
  }

  static std::string EnvOf(const executor::AttemptSpec& a, const std::string& name) {
    for (const model::EnvVar& e : a.replicas.at(0).env) {
      if (e.name == name) return e.value;
    }
    return "";
  }

  std::unique_ptr<FakeExecutor> cluster_;
};

TEST_F(ExecutorRoutingTest, ARoutedProjectsJobsRunOnItsExecutorAndTheRestOnTheDefault) {
  service_->SetReplicaCredentials([](const std::string& uid) { return "token-" + uid; });
  service_->SetReplicaStoragePort(4443);
  model::Job here = SubmitVertex(VertexBody());
  model::Job there = SubmitVertex(VertexBody(), kClusterProject);
  ASSERT_EQ(WaitForState(here, JobState::kRunning).state, JobState::kRunning);
  ASSERT_EQ(WaitForState(there, JobState::kRunning).state, JobState::kRunning);

  EXPECT_TRUE(executor_->LastLaunchOf(here.uid).has_value());
  EXPECT_FALSE(executor_->LastLaunchOf(there.uid).has_value());
  EXPECT_TRUE(cluster_->LastLaunchOf(there.uid).has_value());
  EXPECT_FALSE(cluster_->LastLaunchOf(here.uid).has_value());
  // Each reaches the storage API its executor's way; only the cluster's carry a credential.
  EXPECT_EQ(EnvOf(*executor_->LastLaunchOf(here.uid), "STORAGE_EMULATOR_HOST"),
            "http://127.0.0.1:4443");
  EXPECT_EQ(EnvOf(*cluster_->LastLaunchOf(there.uid), "STORAGE_EMULATOR_HOST"),
            "http://replica:token-" + there.uid + "@daemon.cluster:4443");

  ASSERT_TRUE(service_->Cancel(Ref(there)).ok());
  RunLoop();
  EXPECT_EQ(Current(there).state, JobState::kCancelled);
  EXPECT_EQ(cluster_->stop_calls(), 1);
  EXPECT_EQ(executor_->stop_calls(), 0);
  EXPECT_TRUE(cluster_->cleaned().count(there.uid + "/1"));
  EXPECT_FALSE(executor_->cleaned().count(there.uid + "/1"));
}

TEST_F(ExecutorRoutingTest, EachExecutorAdmitsAgainstItsOwnCapacity) {
  model::Job first = SubmitVertex(VertexBody());
  model::Job second = SubmitVertex(VertexBody());
  std::vector<model::Job> cluster_jobs;
  for (int i = 0; i < 3; ++i) cluster_jobs.push_back(SubmitVertex(VertexBody(), kClusterProject));
  RunLoop();
  EXPECT_EQ(Current(first).state, JobState::kRunning);
  model::Job waiting = Current(second);
  EXPECT_EQ(waiting.state, JobState::kQueued) << "this machine holds one such job";
  EXPECT_EQ(waiting.queue_reason, "waiting for 4 vCPUs: 0 free");
  // The cluster's nodes are its own: none of its jobs waits for this machine's.
  for (const model::Job& j : cluster_jobs) {
    model::Job now = Current(j);
    EXPECT_EQ(now.state, JobState::kRunning) << now.queue_reason;
    ASSERT_EQ(now.grants.size(), 1u);
    EXPECT_THAT(now.grants[0].node_name, HasSubstr("node"));
  }
  // Three more fill the cluster (two to a node); a seventh waits, for the cluster.
  std::vector<model::Job> more;
  for (int i = 0; i < 3; ++i) more.push_back(SubmitVertex(VertexBody(), kClusterProject));
  RunLoop();
  EXPECT_EQ(Current(more[0]).state, JobState::kRunning);
  EXPECT_EQ(Current(more[1]).state, JobState::kRunning);
  EXPECT_EQ(Current(more[2]).state, JobState::kRunning);
  model::Job seventh = SubmitVertex(VertexBody(), kClusterProject);
  RunLoop();
  EXPECT_EQ(Current(seventh).state, JobState::kQueued);
  EXPECT_EQ(Current(seventh).queue_position, 1) << "its queue is the cluster's, not this machine's";
  // A job ending here frees this machine only.
  executor_->Exit(first.uid, 1, 0, 0, 0);
  RunLoop();
  EXPECT_EQ(Current(second).state, JobState::kRunning);
  EXPECT_EQ(Current(seventh).state, JobState::kQueued);
  service::AdmissionStats stats = service_->Admission();
  EXPECT_EQ(stats.queued, 1);
  EXPECT_EQ(stats.admitted_cpus, 4 * 7);
  EXPECT_EQ(service_->Capacities().size(), 2u);
}

TEST_F(ExecutorRoutingTest, ASubmitIsCheckedAgainstTheCapacityOfItsProjectsExecutor) {
  nlohmann::json big = VertexBody();
  big["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["machineType"] = "n1-standard-8";
  auto parsed = wire::ParseVertexCustomJob(big);
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(
      service_->Submit(model::Dialect::kVertex, kClusterProject, "us-central1", *parsed).ok());
  auto here = service_->Submit(model::Dialect::kVertex, "p", "us-central1", *parsed);
  EXPECT_EQ(here.status().code(), StatusCode::kInvalidArgument) << here.status().ToString();
}

TEST_F(ExecutorRoutingTest, ARestartRecoversFromEveryExecutorAndCleansUpWhereTheLeftoversAre) {
  model::Job here = SubmitVertex(VertexBody());
  model::Job there = SubmitVertex(VertexBody(), kClusterProject);
  WaitForState(there, JobState::kRunning);
  WaitForState(here, JobState::kRunning);

  // The daemon restarts; the cluster's replica still runs, this machine's ended 3,
  // and the cluster holds a leftover of a job long gone.
  auto observed = [](const std::string& uid, bool running, int code) {
    executor::ObservedReplica o;
    o.job_uid = uid;
    o.attempt = 1;
    o.running = running;
    o.exit_code = code;
    return o;
  };
  auto local = std::make_unique<FakeExecutor>();
  local->SetRecovered({observed(here.uid, false, 3)});
  std::unique_ptr<FakeExecutor> before = std::move(cluster_);  // The old service's, until it goes.
  cluster_ = std::make_unique<FakeExecutor>();
  cluster_->SetRecovered({observed(there.uid, true, 0), observed("gone", false, 0)});
  other_executors_[0].executor = cluster_.get();
  RestartService(std::move(local));

  EXPECT_EQ(WaitForState(here, JobState::kFailed).state, JobState::kFailed);
  EXPECT_EQ(Current(there).state, JobState::kRunning);
  EXPECT_TRUE(cluster_->cleaned().count("gone/1"));
  cluster_->Exit(there.uid, 1, 0, 0, 0);
  EXPECT_EQ(WaitForState(there, JobState::kSucceeded).state, JobState::kSucceeded);
}

TEST_F(ExecutorRoutingTest, AProjectRoutedTwiceIsRefused) {
  service::JobServiceOptions options;
  options.random = [] { return uint64_t{7}; };  // Not what this test refuses.
  options.other_executors = other_executors_;
  options.other_executors.push_back(other_executors_[0]);
  options.other_executors[1].name = "another";
  auto made =
      service::JobService::Create(store_.get(), executor_.get(), logs_.get(), &clock_, options);
  EXPECT_EQ(made.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(made.status().message(), HasSubstr("on-slurm"));
}

}  // namespace
}  // namespace ty::testing
