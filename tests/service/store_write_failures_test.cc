// Issue 31 item 1: an input whose commit fails for want of a store that writes (the
// data disk full) is kept and committed again once it writes, in order, without a
// restart; /healthz's view says so meanwhile. On d2135ab such an input was dropped: a
// job whose replica exited while the disk was full stayed RUNNING for ever.
#include <gtest/gtest.h>

#include <atomic>

#include "service/commit_retry.h"
#include "service/service_fixture.h"

namespace ty::testing {
namespace {

using model::JobState;

// The memory store with a full disk on demand: writes fail as SQLite's SQLITE_FULL does.
class FullDiskStore : public jobstore::MemoryJobStore {
 public:
  std::atomic<bool> full{false};
  std::atomic<int> refused{0};
  Status CommitJob(const model::Job& job, bool create,
                   const std::vector<model::JobEvent>& events) override {
    return full ? Refuse() : MemoryJobStore::CommitJob(job, create, events);
  }

 private:
  Status Refuse() {
    ++refused;
    return ResourceExhausted("COMMIT: database or disk is full");
  }
};

class StoreWriteFailuresTest : public ServiceFixture {
 protected:
  void SetUp() override {
    ServiceFixture::SetUp();
    service_.reset();
    auto store = std::make_unique<FullDiskStore>();
    disk_ = store.get();
    store_ = std::move(store);
    StartService();
  }
  // Lets every retry due within `d` run.
  void Pass(DurationMicros d) {
    for (DurationMicros t = 0; t < d; t += 100'000) {
      clock_.Advance(100'000);
      RunLoop();
    }
  }
  FullDiskStore* disk_ = nullptr;
};

TEST_F(StoreWriteFailuresTest, AnExitWhileTheDiskIsFullEndsTheJobOnceItWritesAgain) {
  model::Job job = SubmitVertex(VertexBody());
  ASSERT_EQ(WaitForState(job, JobState::kRunning).state, JobState::kRunning);
  disk_->full = true;
  executor_->Exit(job.uid, 1, 0, 0, 0);
  Pass(30'000'000);
  EXPECT_EQ(Current(job).state, JobState::kRunning) << "nothing committed, nothing acted on";
  service::StoreWriteHealth health = service_->store_health();
  EXPECT_TRUE(health.failing);
  EXPECT_EQ(health.jobs_waiting, 1u);
  EXPECT_EQ(health.waiting.count(job.uid), 1u) << "describe names the job as waiting";
  EXPECT_NE(health.detail.find("disk is full"), std::string::npos) << health.detail;
  const int tries = disk_->refused;
  EXPECT_GE(tries, 4) << "retried";
  EXPECT_LE(tries, 12) << "with a growing delay (30 s: 0.1 + 0.2 + ... + 10 s each)";

  disk_->full = false;
  Pass(11'000'000);
  model::Job done = Current(job);
  EXPECT_EQ(done.state, JobState::kSucceeded);
  EXPECT_EQ(done.replicas.at(0).exit_code, 0);
  health = service_->store_health();
  EXPECT_FALSE(health.failing);
  EXPECT_EQ(health.jobs_waiting, 0u);
  EXPECT_TRUE(health.waiting.empty());
  EXPECT_GE(health.failed_writes, static_cast<uint64_t>(tries));
  EXPECT_EQ(executor_->cleaned().count(job.uid + "/1"), 1u) << "acted on once it committed";
}

// A replica killed by a signal while the disk is full restarts in place once the store
// writes (its restart is decided and committed, then acted on); a submit meanwhile is
// refused with RESOURCE_EXHAUSTED (HTTP 429), nothing of it kept.
TEST_F(StoreWriteFailuresTest, ASignalDeathWhileFullRestartsInPlaceOnceItWrites) {
  model::Job job = SubmitVertex(VertexBody());
  ASSERT_EQ(WaitForState(job, JobState::kRunning).state, JobState::kRunning);
  disk_->full = true;
  executor_->Exit(job.uid, 1, 0, 0, 137, 9);
  RunLoop();
  Status submit = service_
                      ->Submit(model::Dialect::kVertex, "p", "us-central1",
                               wire::ParseVertexCustomJob(VertexBody()).value())
                      .status();
  EXPECT_EQ(submit.code(), StatusCode::kResourceExhausted) << submit.ToString();
  disk_->full = false;
  Pass(1'000'000);
  model::Job restarted = Current(job);
  EXPECT_EQ(restarted.state, JobState::kRunning);
  EXPECT_EQ(restarted.replicas.at(0).restarts, 1);
  executor_->Exit(job.uid, 1, 0, 0, 0);
  RunLoop();
  EXPECT_EQ(Current(job).state, JobState::kSucceeded);
}

TEST(CommitRetryTest, WhatEachStoreErrorMeans) {
  using service::CommitFailure;
  for (const Status& s :
       {ResourceExhausted("full"), Unavailable("busy"), FailedPrecondition("read-only"),
        Internal("disk I/O error"), Status(StatusCode::kDataLoss, "malformed")}) {
    EXPECT_EQ(service::MeaningOf(s), CommitFailure::kRetry) << s.ToString();
  }
  for (const Status& s : {NotFound("job 1 not found"), Aborted("the daemon died (test)"),
                          InvalidArgument("cannot change the identity")}) {
    EXPECT_EQ(service::MeaningOf(s), CommitFailure::kDrop) << s.ToString();
  }
}

TEST(CommitRetryTest, DelaysGrowToTenSeconds) {
  EXPECT_EQ(service::RetryDelay(1), 100'000);
  EXPECT_EQ(service::RetryDelay(2), 200'000);
  EXPECT_EQ(service::RetryDelay(7), 6'400'000);
  EXPECT_EQ(service::RetryDelay(8), 10'000'000);
  EXPECT_EQ(service::RetryDelay(1000), 10'000'000);
}

TEST(CommitRetryTest, HeldInputsKeepTheirOrderAndTheirBound) {
  service::HeldInputs held;
  EXPECT_FALSE(held.Holding("j"));
  for (int i = 0; i < 3; ++i) {
    machines::JobInput in;
    in.exit_code = i;
    EXPECT_TRUE(held.Add("j", in));
  }
  EXPECT_EQ(held.CountTry("j"), 1);
  EXPECT_EQ(held.CountTry("j"), 2);
  EXPECT_EQ(held.Front("j")->exit_code, 0);
  held.Pop("j");
  EXPECT_EQ(held.CountTry("j"), 1) << "the next input's tries start again";
  EXPECT_EQ(held.Front("j")->exit_code, 1);
  held.Pop("j");
  held.Pop("j");
  EXPECT_FALSE(held.Holding("j"));
  for (size_t i = 0; i < service::HeldInputs::kMaxPerJob; ++i) held.Add("k", machines::JobInput{});
  EXPECT_FALSE(held.Add("k", machines::JobInput{})) << "past the bound the oldest goes";
}

}  // namespace
}  // namespace ty::testing
