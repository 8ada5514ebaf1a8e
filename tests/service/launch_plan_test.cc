#include "service/launch_plan.h"

#include <gtest/gtest.h>

namespace ty::service {
namespace {

TEST(LaunchPlanTest, AnAskedTimeoutAndSpotReachTheExecutorTheDefaultTimeoutDoesNot) {
  model::Job job;
  job.uid = "42";
  job.attempt = 1;
  EXPECT_EQ(BuildAttemptSpec(job, "/gcs").time_limit, 0) << "the 7-day default";
  job.spec.scheduling.timeout = 3600LL * 1000000;
  job.spec.scheduling.spot = true;
  executor::AttemptSpec spec = BuildAttemptSpec(job, "/gcs");
  EXPECT_EQ(spec.time_limit, 3600LL * 1000000);
  EXPECT_TRUE(spec.spot);
}

}  // namespace
}  // namespace ty::service
