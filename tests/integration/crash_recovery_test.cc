// The daemon killed -9 while it stops a job's replicas, real podman: after a restart
// the job ends as decided before the crash, no replica is restarted, nothing is left.
// The worker that keeps the stop going ignores SIGTERM, so the daemon dies inside
// the stop grace (30 s) with the outcome committed but the stop unfinished.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/time.h"
#include "integration/daemon_harness.h"

namespace ty::testing {
namespace {

constexpr char kBase[] = "/v1/projects/it/locations/local/customJobs";
const std::vector<std::string> kTerminal = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED",
                                            "JOB_STATE_CANCELLED"};
// PID 1 of the container: with `trap '' TERM` it ignores the stop's SIGTERM.
constexpr char kIgnoreTerm[] = "trap '' TERM; echo up; while true; do sleep 1; done";

nlohmann::json ShPool(const std::string& script) {
  return {{"machineSpec", {{"machineType", "n1-standard-4"}}},
          {"replicaCount", "1"},
          {"containerSpec", {{"imageUri", kTestImage}, {"command", {"sh", "-c", script}}}}};
}

class CrashRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EngineAnswers()) {
      if (std::getenv("TRAINYARD_REQUIRE_ENGINE")) FAIL() << "the engine does not answer";
      GTEST_SKIP() << "no container engine answers on " << EngineSocket();
    }
    daemon_ = std::make_unique<Daemon>(std::vector<std::string>{"--stop-grace", "30"});
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
    daemon_.reset();
  }

  std::string Create(const std::string& primary, const std::string& worker) {
    nlohmann::json body = {{"displayName", "crash-it"},
                           {"jobSpec", {{"workerPoolSpecs", {ShPool(primary), ShPool(worker)}}}}};
    HttpReply r = daemon_->Post(kBase, body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return IdOf(r.Json());
  }
  nlohmann::json Details(const std::string& id) {
    return daemon_->Get(std::string(kBase) + "/" + id + "/details").Json();
  }
  // Polls the details until replica `task` is in `state`.
  bool WaitReplica(const std::string& id, const std::string& task, const std::string& state) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      nlohmann::json d = Details(id);
      for (const auto& r : d.value("replicas", nlohmann::json::array())) {
        if (r.value("taskName", "") == task && r.value("state", "") == state) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
  // Kills the daemon, checks the stubborn replica outlived it, restarts the daemon
  // with a short grace and waits for the job to end.
  nlohmann::json CrashAndRecover(const std::string& id) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // Inside the grace.
    daemon_->Kill();
    EXPECT_GT(ContainersOfJob(id), 0u) << "the replica ignoring SIGTERM must outlive the daemon";
    daemon_->Start({"--stop-grace", "1"});
    return daemon_->WaitForField(std::string(kBase) + "/" + id, "state", kTerminal, 60);
  }
  void ExpectNothingRestarted(const std::string& id) {
    nlohmann::json d = Details(id);
    EXPECT_EQ(d.value("attempt", 0), 1) << d.dump();
    for (const auto& r : d.value("replicas", nlohmann::json::array())) {
      EXPECT_EQ(r.value("restarts", 0), 0) << d.dump();
    }
    for (const auto& e : d.value("events", nlohmann::json::array())) {
      EXPECT_NE(e.value("kind", ""), "restart") << d.dump();
    }
    std::string logs = daemon_->Get(std::string(kBase) + "/" + id + "/logs?pageSize=1000").body;
    size_t ups = 0;
    for (size_t pos = 0; (pos = logs.find("\"message\":\"up\"", pos)) != std::string::npos; ++pos)
      ++ups;
    EXPECT_LE(ups, 2u) << "a replica started twice:\n" << logs;
    EXPECT_EQ(ContainersOfJobAfterCleanup(id, 20), 0u);
  }

  std::unique_ptr<Daemon> daemon_;
};

TEST_F(CrashRecoveryTest, PrimarySucceededAndTheDaemonDiedDuringTheStop) {
  std::string id = Create("sleep 1; echo primary done", kIgnoreTerm);
  ASSERT_TRUE(WaitReplica(id, "workerpool0-0", "SUCCEEDED")) << Details(id).dump();
  nlohmann::json done = CrashAndRecover(id);
  EXPECT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump();
  ExpectNothingRestarted(id);
}

TEST_F(CrashRecoveryTest, CancelledAndTheDaemonDiedDuringTheStop) {
  std::string id = Create(kIgnoreTerm, kIgnoreTerm);
  ASSERT_EQ(
      daemon_->WaitForField(std::string(kBase) + "/" + id, "state", {"JOB_STATE_RUNNING"})["state"],
      "JOB_STATE_RUNNING");
  ASSERT_EQ(daemon_->Post(std::string(kBase) + "/" + id + ":cancel", "").status, 200);
  ASSERT_EQ(daemon_->WaitForField(std::string(kBase) + "/" + id, "state",
                                  {"JOB_STATE_CANCELLING"})["state"],
            "JOB_STATE_CANCELLING");
  nlohmann::json done = CrashAndRecover(id);
  EXPECT_EQ(done["state"], "JOB_STATE_CANCELLED") << done.dump();
  EXPECT_EQ(done["error"].value("code", 0), 1) << done.dump();
  ExpectNothingRestarted(id);
}

TEST_F(CrashRecoveryTest, WorkerFailedAndTheDaemonDiedDuringTheStop) {
  std::string id = Create(kIgnoreTerm, "sleep 1; echo worker fails; exit 1");
  ASSERT_TRUE(WaitReplica(id, "workerpool1-0", "FAILED")) << Details(id).dump();
  nlohmann::json done = CrashAndRecover(id);
  ASSERT_EQ(done["state"], "JOB_STATE_FAILED") << done.dump();
  std::string message = done["error"].value("message", "");
  EXPECT_EQ(message.rfind("The replica workerpool1-0 exited with a non-zero status of 1.", 0), 0u)
      << message;
  ExpectNothingRestarted(id);
}

// Found after a kill -9 (issue 19): a job whose replicas exited while no daemon ran
// got the restart's time as endTime. It carries the engine's finish time.
TEST_F(CrashRecoveryTest, AnExitWhileTheDaemonWasDownKeepsTheEnginesFinishTime) {
  nlohmann::json body = {{"displayName", "exit-while-down"},
                         {"jobSpec", {{"workerPoolSpecs", {ShPool("sleep 1; echo done")}}}}};
  HttpReply r = daemon_->Post(kBase, body.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string path = std::string(kBase) + "/" + IdOf(r.Json());
  ASSERT_EQ(daemon_->WaitForField(path, "state", {"JOB_STATE_RUNNING"})["state"],
            "JOB_STATE_RUNNING");
  daemon_->Kill();
  std::this_thread::sleep_for(std::chrono::seconds(4));  // It exits about 1 s in.
  const TimeMicros restart = SystemClock::Get()->Now();
  daemon_->Start();
  nlohmann::json done = daemon_->WaitForField(path, "state", kTerminal, 60);
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump();
  Result<TimeMicros> end = ParseRfc3339(done.value("endTime", ""));
  ASSERT_TRUE(end.ok()) << done.dump();
  EXPECT_LT(*end, restart - 2'000'000) << "endTime is the restart's time: " << done.dump();
  EXPECT_GT(*end, *ParseRfc3339(done.value("startTime", ""))) << done.dump();
}

}  // namespace
}  // namespace ty::testing
