// FinishedJobs: finished records are read from the store once and shared; every write
// forgets what it touches, even one that races a read; live records are never kept; the
// byte bound holds, least recently read out first. And it is still a JobStore: the
// store contract runs over it.
#include "service/finished_jobs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jobstore/job_store_contract.h"
#include "jobstore/job_store_test_util.h"
#include "jobstore/memory_job_store.h"

namespace ty::service {
namespace {

// Counts the reads that reach it; `during_get` runs inside a read, after the record was
// copied and before it is returned (where a racing write lands).
class CountingStore : public jobstore::MemoryJobStore {
 public:
  Result<model::Job> GetJob(const std::string& uid) override {
    ++gets;
    Result<model::Job> job = jobstore::MemoryJobStore::GetJob(uid);
    if (during_get) {
      auto hook = std::move(during_get);
      during_get = nullptr;
      hook();
    }
    return job;
  }
  std::atomic<int> gets{0};
  std::function<void()> during_get;
};

model::Job Finished(const std::string& uid, size_t spec_bytes = 100) {
  model::Job job = jobstore::testing::FullJob(uid);
  job.state = model::JobState::kSucceeded;
  job.spec_json = std::string(spec_bytes, 'x');
  return job;
}

void NoRestore(model::Job*) {}

std::string ReadName(FinishedJobs& cache, const std::string& uid) {
  Result<std::shared_ptr<const JobRead>> read = cache.Read(uid, NoRestore);
  if (!read.ok()) return "error: " + read.status().ToString();
  return (*read)->job().spec.display_name;
}

TEST(FinishedJobsTest, AFinishedJobIsReadFromTheStoreOnceAndShared) {
  CountingStore inner;
  FinishedJobs cache(&inner);
  ASSERT_TRUE(cache.CreateJob(Finished("1")).ok());
  int restored = 0;
  auto restore = [&](model::Job* job) {
    ++restored;
    job->spec.display_name = "restored";
  };
  Result<std::shared_ptr<const JobRead>> first = cache.Read("1", restore);
  Result<std::shared_ptr<const JobRead>> second = cache.Read("1", restore);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ((*second)->job().spec.display_name, "restored");
  EXPECT_EQ(inner.gets, 1);
  EXPECT_EQ(restored, 1);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(FinishedJobsTest, EachRenderIsMadeOnceForEveryReader) {
  jobstore::MemoryJobStore inner;
  FinishedJobs cache(&inner);
  ASSERT_TRUE(cache.CreateJob(Finished("1")).ok());
  int renders = 0;
  auto render = [&](const model::Job& job) { return "r" + std::to_string(++renders) + job.uid; };
  EXPECT_EQ((*cache.Read("1", NoRestore))->Rendered(0, render), "r11");
  EXPECT_EQ((*cache.Read("1", NoRestore))->Rendered(0, render), "r11");
  EXPECT_EQ((*cache.Read("1", NoRestore))->Rendered(1, render), "r21");
  EXPECT_EQ(renders, 2);
}

TEST(FinishedJobsTest, AnMlJobIsFoundByItsIdOnceKeptAndNotAfterItIsForgotten) {
  jobstore::MemoryJobStore inner;
  FinishedJobs cache(&inner);
  model::Job job = jobstore::testing::FullJob("7", model::Dialect::kMlV1, "proj", "census_1");
  job.state = model::JobState::kFailed;
  ASSERT_TRUE(cache.CreateJob(job).ok());
  EXPECT_FALSE(cache.FindFinishedMl("proj", "census_1"));  // Not read yet.
  ASSERT_TRUE(cache.Read("7", NoRestore).ok());
  EXPECT_EQ(cache.FindFinishedMl("proj", "census_1"), "7");
  EXPECT_FALSE(cache.FindFinishedMl("other", "census_1"));
  EXPECT_FALSE(cache.FindFinishedMl("proj", "census_2"));
  ASSERT_TRUE(cache.DeleteJob("7", 1).ok());
  EXPECT_FALSE(cache.FindFinishedMl("proj", "census_1"));
}

TEST(FinishedJobsTest, ALiveJobIsNeverKept) {
  CountingStore inner;
  FinishedJobs cache(&inner);
  model::Job live = Finished("1");
  live.state = model::JobState::kRunning;
  ASSERT_TRUE(cache.CreateJob(live).ok());
  ASSERT_TRUE(cache.Read("1", NoRestore).ok());
  ASSERT_TRUE(cache.Read("1", NoRestore).ok());
  EXPECT_EQ(inner.gets, 2);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(FinishedJobsTest, UpdateAndDeleteForgetWhatWasKept) {
  CountingStore inner;
  FinishedJobs cache(&inner);
  model::Job job = Finished("1");
  ASSERT_TRUE(cache.CreateJob(job).ok());
  EXPECT_EQ(ReadName(cache, "1"), "kept as a list field");
  job.error = model::JobError{1, "rewritten"};
  ASSERT_TRUE(cache.UpdateJob(job).ok());
  Result<std::shared_ptr<const JobRead>> updated = cache.Read("1", NoRestore);
  ASSERT_TRUE(updated.ok());
  ASSERT_TRUE((*updated)->job().error.has_value());
  EXPECT_EQ((*updated)->job().error->message, "rewritten");
  ASSERT_TRUE(cache.DeleteJob("1", 1).ok());
  Result<std::shared_ptr<const JobRead>> gone = cache.Read("1", NoRestore);
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(FinishedJobsTest, AReadThatAWriteOvertookDoesNotKeepWhatItRead) {
  CountingStore inner;
  FinishedJobs cache(&inner);
  ASSERT_TRUE(cache.CreateJob(Finished("1")).ok());
  // The read copies the old record; the delete commits before the read returns.
  inner.during_get = [&] { ASSERT_TRUE(cache.DeleteJob("1", 1).ok()); };
  Result<std::shared_ptr<const JobRead>> raced = cache.Read("1", NoRestore);
  ASSERT_TRUE(raced.ok());  // What it read when it began.
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.Read("1", NoRestore).status().code(), StatusCode::kNotFound);
}

TEST(FinishedJobsTest, TheByteBoundHoldsAndTheLeastRecentlyReadGoFirst) {
  CountingStore inner;
  const size_t one = JobRead(Finished("x", 10000)).Bytes();
  FinishedJobs cache(&inner, one * 8 + one / 2);  // Room for eight.
  for (int i = 1; i <= 8; ++i) {
    ASSERT_TRUE(cache.CreateJob(Finished(std::to_string(i), 10000)).ok());
    ASSERT_TRUE(cache.Read(std::to_string(i), NoRestore).ok());
  }
  EXPECT_EQ(cache.size(), 8u);
  ASSERT_TRUE(cache.Read("1", NoRestore).ok());  // 1 is now the latest read; 2 the oldest.
  ASSERT_TRUE(cache.CreateJob(Finished("9", 10000)).ok());
  ASSERT_TRUE(cache.Read("9", NoRestore).ok());
  EXPECT_EQ(cache.size(), 8u);
  EXPECT_LE(cache.bytes(), one * 8 + one / 2);
  const int before = inner.gets;
  ASSERT_TRUE(cache.Read("1", NoRestore).ok());
  EXPECT_EQ(inner.gets, before);  // Still kept.
  ASSERT_TRUE(cache.Read("2", NoRestore).ok());
  EXPECT_EQ(inner.gets, before + 1);  // Was dropped.
}

TEST(FinishedJobsTest, ARecordOverAnEighthOfTheBoundIsServedButNotKept) {
  CountingStore inner;
  FinishedJobs cache(&inner, 1u << 20);
  ASSERT_TRUE(cache.CreateJob(Finished("1", 200000)).ok());
  ASSERT_TRUE(cache.Read("1", NoRestore).ok());
  ASSERT_TRUE(cache.Read("1", NoRestore).ok());
  EXPECT_EQ(inner.gets, 2);
  EXPECT_EQ(cache.size(), 0u);
}

// The same contract as every backend: the cache changes no answer of the store.
class OwnedInner {
 protected:
  jobstore::MemoryJobStore owned_inner_;
};
class FinishedJobsOverMemory : private OwnedInner, public FinishedJobs {
 public:
  FinishedJobsOverMemory() : FinishedJobs(&owned_inner_) {}
};
struct FinishedJobsFactory {
  static std::unique_ptr<jobstore::JobStore> Make() {
    return std::make_unique<FinishedJobsOverMemory>();
  }
};

}  // namespace
}  // namespace ty::service

namespace ty::jobstore::testing {
INSTANTIATE_TYPED_TEST_SUITE_P(FinishedJobs, JobStoreContractTest,
                               ty::service::FinishedJobsFactory);
}  // namespace ty::jobstore::testing
