// The container engine goes away under a running job (issue 19): /healthz and /metrics
// say so within seconds, and when it answers again they recover and the job ends as
// it would have. The daemon reaches the engine through a symlink the test removes.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "common/time.h"
#include "integration/daemon_harness.h"

namespace ty::testing {
namespace {

const char kBase[] = "/v1/projects/it/locations/local/customJobs";

// A one-replica job of the test image running `script`.
nlohmann::json ShellJob(const std::string& script) {
  return {
      {"displayName", "outage"},
      {"jobSpec",
       {{"workerPoolSpecs",
         {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
           {"replicaCount", "1"},
           {"containerSpec", {{"imageUri", kTestImage}, {"command", {"sh", "-c", script}}}}}}}}}};
}

class EngineOutageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EngineAnswers()) {
      ASSERT_EQ(std::getenv("TRAINYARD_REQUIRE_ENGINE"), nullptr) << "the engine does not answer";
      GTEST_SKIP() << "no container engine answers on " << EngineSocket();
    }
    real_socket_ = EngineSocket();
    link_ = std::filesystem::temp_directory_path() /
            ("ty-engine-link-" + std::to_string(::getpid()) + ".sock");
    std::filesystem::remove(link_);
    std::filesystem::create_symlink(real_socket_, link_);
    ::setenv("TRAINYARD_ENGINE_SOCKET", link_.c_str(), 1);
    daemon_ = std::make_unique<Daemon>();
  }
  void TearDown() override {
    if (link_.empty()) return;
    Restore();
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
    daemon_.reset();
    ::setenv("TRAINYARD_ENGINE_SOCKET", real_socket_.c_str(), 1);
    std::filesystem::remove(link_);
  }
  void Restore() {
    if (!std::filesystem::is_symlink(link_)) std::filesystem::create_symlink(real_socket_, link_);
  }
  // /healthz's body once `pred` holds for it, or the last one after `timeout_s`.
  nlohmann::json HealthWhen(const std::function<bool(const nlohmann::json&)>& pred,
                            int timeout_s = 10) {
    nlohmann::json h;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    do {
      h = daemon_->Get("/healthz").Json();
      if (pred(h)) return h;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } while (std::chrono::steady_clock::now() < deadline);
    return h;
  }

  std::string real_socket_;
  std::filesystem::path link_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(EngineOutageTest, HealthAndMetricsSayTheEngineIsGoneAndTheJobStillSucceeds) {
  EXPECT_EQ(HealthWhen([](const nlohmann::json& h) { return h["status"] == "ok"; })["status"],
            "ok");
  HttpReply created = daemon_->Post(kBase, ShellJob("sleep 8; echo done").dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string path = std::string(kBase) + "/" + IdOf(created.Json());
  daemon_->WaitForField(path, "state", {"JOB_STATE_RUNNING"});

  std::filesystem::remove(link_);  // The engine's socket is gone.
  nlohmann::json down =
      HealthWhen([](const nlohmann::json& h) { return h["status"] == "degraded"; });
  ASSERT_EQ(down["status"], "degraded") << down.dump();
  EXPECT_EQ(down["engine"]["reachable"], false);
  EXPECT_FALSE(down["engine"]["detail"].get<std::string>().empty());
  EXPECT_NE(daemon_->Get("/metrics").body.find("trainyard_engine_up 0"), std::string::npos);
  // The job's details (what `describe` shows) say why it may not progress.
  nlohmann::json details = daemon_->Get(path + "/details").Json();
  EXPECT_EQ(details["engine"]["reachable"], false) << details.dump();

  Restore();
  nlohmann::json up = HealthWhen([](const nlohmann::json& h) { return h["status"] == "ok"; });
  EXPECT_EQ(up["status"], "ok") << up.dump();
  EXPECT_FALSE(up.contains("engine"));
  EXPECT_NE(daemon_->Get("/metrics").body.find("trainyard_engine_up 1"), std::string::npos);
  EXPECT_FALSE(daemon_->Get(path + "/details").Json().contains("engine"));
  nlohmann::json done = daemon_->WaitForField(
      path, "state", {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}, 60);
  EXPECT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump();
}

// Issue 30 item 6: a replica that exits while the engine does not answer ends the job
// at the engine's own finish time, not when the engine came back (11.7 s late on
// 3c2a683).
TEST_F(EngineOutageTest, AnExitDuringTheOutageKeepsTheEnginesFinishTime) {
  HttpReply created = daemon_->Post(kBase, ShellJob("sleep 1; echo done").dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string path = std::string(kBase) + "/" + IdOf(created.Json());
  daemon_->WaitForField(path, "state", {"JOB_STATE_RUNNING"});
  std::filesystem::remove(link_);
  std::this_thread::sleep_for(std::chrono::seconds(6));  // The replica exits meanwhile.
  const TimeMicros restored = SystemClock::Get()->Now();
  Restore();
  nlohmann::json done = daemon_->WaitForField(
      path, "state", {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}, 60);
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump();
  Result<TimeMicros> end = ParseRfc3339(done.value("endTime", ""));
  ASSERT_TRUE(end.ok()) << done.dump();
  EXPECT_LT(*end, restored - 2000000) << "endTime " << done["endTime"] << " is when the engine "
                                      << "came back, not when the replica exited";
}

}  // namespace
}  // namespace ty::testing
