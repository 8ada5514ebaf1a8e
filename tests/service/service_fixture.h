// A JobService over MemoryJobStore + FakeExecutor + a real LogStore in a temp dir,
// on a manual loop and a ManualClock: nothing happens until the test runs the loop
// (WaitFor / RunLoop), and timers fire when the test advances the clock. No sleeps.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "fakes/fake_executor.h"
#include "fakes/manual_clock.h"
#include "jobstore/memory_job_store.h"
#include "logs/log_store.h"
#include "service/job_service.h"
#include "wire/dialect.h"

namespace ty::testing {

class ServiceFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ty-svc-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
    store_ = std::make_unique<jobstore::MemoryJobStore>();
    logs_ = std::move(logs::LogStore::Create((dir_ / "logs").string()).value());
    executor_ = std::make_unique<FakeExecutor>();
    StartService();
  }
  void TearDown() override {
    service_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartService() {
    service::JobServiceOptions options;
    options.jobs.stop_grace = 1000000;
    options.manual_loop_for_test = true;
    uint64_t seq = 0;
    options.random = [seq]() mutable { return ++seq; };
    options.admission = admission_;
    options.other_executors = other_executors_;
    options.register_controllers_for_test = register_controllers_;
    service_ = std::move(
        service::JobService::Create(store_.get(), executor_.get(), logs_.get(), &clock_, options)
            .value());
    ASSERT_TRUE(service_->Start().ok());
    RunLoop();
  }
  // Runs everything due on the loop (tasks, executor calls, due timers).
  void RunLoop() { service_->RunUntilIdleForTest(); }
  void RestartService(std::unique_ptr<FakeExecutor> executor) {
    service_.reset();
    executor_ = std::move(executor);
    StartService();
  }

  static nlohmann::json VertexBody(const std::string& extra_spec = "") {
    auto body = nlohmann::json::parse(R"({"displayName": "t", "jobSpec": {"workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri": "localhost/img:1", "command": ["sh", "-c", "true"]}}]}})");
    if (!extra_spec.empty()) body["jobSpec"].update(nlohmann::json::parse(extra_spec));
    return body;
  }

  model::Job SubmitVertex(const nlohmann::json& body, const std::string& project = "p") {
    auto parsed = wire::ParseVertexCustomJob(body);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto job = service_->Submit(model::Dialect::kVertex, project, "us-central1",
                                std::move(parsed).value());
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.value();  // QUEUED: the loop has not run yet.
  }

  service::JobRef Ref(const model::Job& job) const {
    return {job.dialect, job.project, job.location, job.public_id()};
  }

  model::Job Current(const model::Job& job) { return service_->Get(Ref(job)).value(); }

  // Runs the loop until nothing is due and returns the job as it is then. `pred`
  // states what the caller expects; the caller asserts on the returned view.
  model::Job WaitFor(const model::Job& job, const std::function<bool(const model::Job&)>& pred) {
    RunLoop();
    return Current(job);
  }
  model::Job WaitForState(const model::Job& job, model::JobState state) {
    return WaitFor(job, [state](const model::Job& j) { return j.state == state; });
  }

  // Capacity and quotas the service admits with (default: no nodes, admit all).
  service::AdmissionOptions admission_;
  // Controllers of the test's own on the service's loop core (default: none).
  std::function<void(service::LoopCore*)> register_controllers_;
  // Executors beside executor_ and the projects routed to them (default: none).
  std::vector<service::JobServiceOptions::OtherExecutor> other_executors_;
  ManualClock clock_;
  std::filesystem::path dir_;
  std::unique_ptr<jobstore::MemoryJobStore> store_;
  std::unique_ptr<logs::LogStore> logs_;
  std::unique_ptr<FakeExecutor> executor_;
  std::unique_ptr<service::JobService> service_;
  static inline int counter_ = 0;
};

}  // namespace ty::testing
