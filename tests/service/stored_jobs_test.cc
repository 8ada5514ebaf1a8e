// Start-up with stored jobs that can no longer run: a spec that no longer validates
// and one past today's size limits are failed with an internal error and reported,
// never run, and never stop the daemon from serving the others.
#include <gtest/gtest.h>

#include "model/spec_record.h"
#include "service/service_fixture.h"

namespace ty::testing {
namespace {

using model::JobState;

class StoredJobsTest : public ServiceFixture {
 protected:
  // A stored, still-queued job with the given canonical spec.
  model::Job Plant(const std::string& uid, const std::string& spec_json) {
    model::Job job;
    job.uid = uid;
    job.dialect = model::Dialect::kVertex;
    job.project = "p";
    job.location = "us-central1";
    job.spec_json = spec_json;
    job.state = JobState::kQueued;
    job.create_time = job.update_time = job.phases.queued = clock_.Now();
    EXPECT_TRUE(store_->CreateJob(job).ok());
    return job;
  }
  static std::string Pools(const std::string& second_count) {
    return R"({"displayName":"t","jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1","containerSpec":{"imageUri":"img"}},
      {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":")" +
           second_count + R"(","containerSpec":{"imageUri":"img"}}]}})";
  }
};

// A stored queued job whose record names a machine type this server cannot size (a
// hostile row, or one from a build that knew more types): admission cannot queue it,
// so it fails saying why instead of waiting for ever unexplained.
TEST_F(StoredJobsTest, AQueuedJobNoMachineSizeFitsFailsSayingWhy) {
  auto parsed = wire::ParseVertexCustomJob(nlohmann::json::parse(Pools("1")));
  ASSERT_TRUE(parsed.ok());
  parsed->spec.pools[1].machine.machine_type = "team-box";
  model::Job job;
  job.uid = "1000000000000000004";
  job.dialect = model::Dialect::kVertex;
  job.project = "p";
  job.location = "us-central1";
  job.spec_json = Pools("1");
  job.spec_record = model::EncodeSpecRecord(parsed->spec);
  job.state = JobState::kQueued;
  job.create_time = job.update_time = job.phases.queued = clock_.Now();
  ASSERT_TRUE(store_->CreateJob(job).ok());
  RestartService(std::make_unique<FakeExecutor>());
  model::Job failed = Current(job);
  ASSERT_EQ(failed.state, JobState::kFailed);
  ASSERT_TRUE(failed.error.has_value());
  EXPECT_NE(failed.error->message.find("team-box"), std::string::npos) << failed.error->message;
  EXPECT_NE(failed.error->message.find("workerPoolSpecs[1]"), std::string::npos)
      << failed.error->message;
  EXPECT_TRUE(executor_->launches().empty());
}

// A stored study that can no longer be resumed (here its record's search space has no
// parameter left) is failed with why and reported, never left RUNNING for ever.
TEST_F(StoredJobsTest, AStudyThatCannotBeResumedIsFailedAndReported) {
  auto parsed = wire::ParseMlJob(nlohmann::json::parse(R"({"jobId": "tuned", "trainingInput": {
    "scaleTier": "CUSTOM", "masterType": "n1-standard-4", "masterConfig": {"imageUri": "img"},
    "region": "us-central1", "hyperparameters": {"goal": "MAXIMIZE",
    "hyperparameterMetricTag": "accuracy", "maxTrials": 2, "params": [{"parameterName": "x",
    "type": "DOUBLE", "minValue": 0, "maxValue": 1}]}}})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  model::StudySpec emptied = *parsed->spec.study;
  emptied.params.clear();
  parsed->spec.study = std::make_shared<const model::StudySpec>(std::move(emptied));
  model::Job study;
  study.uid = "1000000000000000005";
  study.dialect = model::Dialect::kMlV1;
  study.project = "p";
  study.spec = parsed->spec;
  study.spec_json = parsed->spec_json;
  study.spec_record = model::EncodeSpecRecord(parsed->spec);
  study.state = JobState::kRunning;
  study.create_time = study.update_time = study.phases.queued = clock_.Now();
  ASSERT_TRUE(store_->CreateJob(study).ok());
  RestartService(std::make_unique<FakeExecutor>());
  auto stored = store_->GetJob(study.uid);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->state, JobState::kFailed);
  ASSERT_TRUE(stored->error.has_value());
  EXPECT_EQ(stored->error->code, machines::kErrorCodeInternal);
  EXPECT_NE(stored->error->message.find("no parameters"), std::string::npos)
      << stored->error->message;
  std::vector<std::string> problems = service_->problems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("study " + study.uid), std::string::npos) << problems[0];
}

TEST_F(StoredJobsTest, UnreadableAndOversizedJobsAreFailedAndTheOthersRun) {
  model::Job good = Plant("1000000000000000001", Pools("2"));
  model::Job invalid = Plant("1000000000000000002",
                             R"({"displayName":"t","jobSpec":{"workerPoolSpecs":[{"bogus":1}]}})");
  model::Job huge = Plant("1000000000000000003", Pools("1000000000000"));
  RestartService(std::make_unique<FakeExecutor>());

  model::Job g = Current(good);
  EXPECT_EQ(g.state, JobState::kRunning);  // Served and run.
  model::Job i = Current(invalid);
  ASSERT_EQ(i.state, JobState::kFailed);
  EXPECT_EQ(i.error->code, 13);
  EXPECT_NE(i.error->message.find("Internal error: the stored job can no longer be run"),
            std::string::npos);
  EXPECT_NE(i.error->message.find("workerPoolSpecs[0]"), std::string::npos) << i.error->message;
  EXPECT_NE(i.error->message.find("cannot be read"), std::string::npos) << i.error->message;
  model::Job h = Current(huge);
  ASSERT_EQ(h.state, JobState::kFailed);
  EXPECT_NE(h.error->message.find("jobSpec.workerPoolSpecs[1].replicaCount"), std::string::npos)
      << h.error->message;
  // Only the good job was launched; the failures are reported for /healthz.
  ASSERT_EQ(executor_->launches().size(), 1u);
  EXPECT_EQ(executor_->launches()[0].job_uid, good.uid);
  std::vector<std::string> problems = service_->problems();
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find(invalid.uid), std::string::npos);
  // The failure is durable: the next start does not report it again as new work.
  EXPECT_EQ(store_->GetJob(huge.uid)->state, JobState::kFailed);
  RestartService(std::make_unique<FakeExecutor>());
  EXPECT_TRUE(service_->problems().empty());
  EXPECT_EQ(Current(huge).state, JobState::kFailed);
}

// Found by a hostile request (issue 19): the image reached the engine API path as
// given, the engine's answer to "/images/../containers/json?all=true&x=/json" was an
// array, and the daemon aborted on it at every start. A stored row with such an
// image, however it got there, is set aside; the daemon serves on.
TEST_F(StoredJobsTest, AStoredImageThatIsNotAReferenceIsSetAside) {
  const std::string spec = R"({"displayName":"t","jobSpec":{"workerPoolSpecs":[
      {"machineSpec":{"machineType":"n1-standard-4"},"replicaCount":"1",
       "containerSpec":{"imageUri":"../containers/json?all=true&x="}}]}})";
  model::Job bad = Plant("1000000000000000004", spec);
  model::Job good = Plant("1000000000000000005", Pools("1"));
  RestartService(std::make_unique<FakeExecutor>());
  model::Job b = Current(bad);
  ASSERT_EQ(b.state, JobState::kFailed);
  EXPECT_NE(b.error->message.find("jobSpec.workerPoolSpecs[0].containerSpec.imageUri"),
            std::string::npos)
      << b.error->message;
  EXPECT_EQ(Current(good).state, JobState::kRunning);
  ASSERT_EQ(executor_->launches().size(), 1u);
  EXPECT_EQ(executor_->launches()[0].job_uid, good.uid);
}

// A job stored with its spec record runs from the record, without re-validating: a
// wire rule tightened after it was accepted does not fail it.
TEST_F(StoredJobsTest, AJobWithASpecRecordRunsEvenIfItsWireJsonNoLongerValidates) {
  model::Job accepted = SubmitVertex(VertexBody());  // Stored with its record.
  std::string record = store_->GetJob(accepted.uid)->spec_record;
  ASSERT_FALSE(record.empty());
  model::Job planted = Plant("1000000000000000005",
                             R"({"displayName":"t","jobSpec":{"workerPoolSpecs":[{"bogus":1}]}})");
  planted.spec_record = record;
  ASSERT_TRUE(store_->DeleteJob(planted.uid, 1).ok());
  ASSERT_TRUE(store_->CreateJob(planted).ok());
  RestartService(std::make_unique<FakeExecutor>());
  EXPECT_EQ(Current(planted).state, JobState::kRunning);
  EXPECT_TRUE(service_->problems().empty());
  ASSERT_EQ(executor_->launches().size(), 2u);  // Both jobs, from their records.
  for (const auto& launch : executor_->launches()) {
    EXPECT_EQ(launch.replicas[0].image, "localhost/img:1");
  }
}

TEST_F(StoredJobsTest, AFinishedJobWithAnUnreadableSpecIsStillServed) {
  model::Job old = Plant("1000000000000000004", R"({"displayName":"t","jobSpec":{"gone":true}})");
  old.state = JobState::kSucceeded;
  old.end_time = clock_.Now();
  ASSERT_TRUE(store_->UpdateJob(old).ok());
  RestartService(std::make_unique<FakeExecutor>());
  EXPECT_EQ(Current(old).state, JobState::kSucceeded);
  EXPECT_TRUE(service_->problems().empty());
}

}  // namespace
}  // namespace ty::testing
