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

// Issue 33: the guide's `--model-dir=gs://custom_containers/...` named a bucket the job
// did not have; its writes vanished without a word. Such names are found wherever a
// replica's command line or environment holds them; the job's and project's are not.
TEST(LaunchPlanTest, BucketsNamedButNotShownToTheReplicasAreFound) {
  executor::AttemptSpec a;
  a.buckets = {"out"};
  a.visible_buckets = {"data"};
  executor::ReplicaLaunch r;
  r.command = {"python3", "train.py"};
  r.args = {"--model-dir=gs://custom_containers/model", "--data", "gs://data/x.csv",
            "--inputs=gs://in-a/x,gs://in-b.example.com/y", "gs://"};
  r.env = {{"AIP_MODEL_DIR", "gs://out/model/"}, {"EXTRA", "gs://in-a/z"}};
  a.replicas = {r, r};
  EXPECT_EQ(UnmountedBucketsNamed(a),
            (std::vector<std::string>{"custom_containers", "in-a", "in-b.example.com"}));
  a.replicas.clear();
  EXPECT_TRUE(UnmountedBucketsNamed(a).empty());
}

// Issue 33: `--runtime-version 2.4` ran on the scikit-learn runtime without a word; the
// job's first line now says what it runs on and what it lacks.
TEST(LaunchPlanTest, ARuntimeVersionSaysWhatItRunsOn) {
  model::Job job;
  job.dialect = model::Dialect::kMlV1;
  job.spec_json = R"({"jobId":"j","trainingInput":{"runtimeVersion":"2.4","pythonVersion":"3.7"}})";
  const std::string line = RuntimeLineOf(job);
  EXPECT_EQ(line.rfind("runtimeVersion 2.4 runs on the scikit-learn runtime (", 0), 0u) << line;
  EXPECT_NE(line.find("pythonVersion 3.7 runs as its Python 3.11"), std::string::npos) << line;
  EXPECT_NE(line.find("TensorFlow, which this one lacks"), std::string::npos) << line;
  job.spec_json = R"({"jobId":"j","trainingInput":{"masterConfig":{"imageUri":"img"}}})";
  EXPECT_EQ(RuntimeLineOf(job), "");  // Its own image: nothing to say.
  job.dialect = model::Dialect::kVertex;
  job.spec_json = "not json";
  EXPECT_EQ(RuntimeLineOf(job), "");
}

}  // namespace
}  // namespace ty::service
