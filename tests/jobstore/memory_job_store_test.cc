// MemoryJobStore behaviour beyond the shared contract.
#include "jobstore/memory_job_store.h"

#include <gtest/gtest.h>

#include "jobstore/job_store_test_util.h"

namespace ty::jobstore {
namespace {

TEST(MemoryJobStoreTest, ReturnsCopiesNotAliases) {
  MemoryJobStore store;
  model::Job job = testing::FullJob("1");
  ASSERT_TRUE(store.CreateJob(job).ok());
  job.state = model::JobState::kFailed;  // Changing the caller's copy changes nothing.
  Result<model::Job> got = store.GetJob("1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, model::JobState::kRunning);
  got->replicas.clear();
  Result<model::Job> again = store.GetJob("1");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->replicas.size(), 3u);
}

}  // namespace
}  // namespace ty::jobstore
