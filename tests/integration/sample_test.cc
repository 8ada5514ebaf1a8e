// The sklearn-digits sample as a real training job through the real daemon and
// engine, in both dialects: it trains, logs its progress, and its model lands in
// the bucket directory. Needs the image from scripts/build-sample-image.
#include <gtest/gtest.h>

#include <filesystem>

#include "integration/daemon_harness.h"

namespace ty::testing {
namespace {

constexpr char kSampleImage[] = "localhost/trainyard/sklearn-digits:latest";

bool ImageExists(const std::string& image) {
  return Http("GET", "http://d/v1.41/images/" + image + "/json", "", true, EngineSocket(), 10)
             .status == 200;
}

class SampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bool required = std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr;
    if (!EngineAnswers() || !ImageExists(kSampleImage)) {
      if (required) FAIL() << kSampleImage << " is missing: run scripts/build-sample-image";
      GTEST_SKIP() << "engine or " << kSampleImage << " unavailable";
    }
    daemon_ = std::make_unique<Daemon>();
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
  }
  std::string Messages(const std::string& logs_path) {
    std::string all;
    for (const auto& e : daemon_->Get(logs_path).Json().value("entries", nlohmann::json::array())) {
      all += e.value("message", "") + "\n";
    }
    return all;
  }
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(SampleTest, VertexCustomJobTrainsAndWritesItsModel) {
  nlohmann::json body = {
      {"displayName", "sklearn-digits"},
      {"jobSpec",
       {{"workerPoolSpecs",
         {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
           {"replicaCount", "1"},
           {"containerSpec",
            {{"imageUri", kSampleImage}, {"args", {"--epochs", "2", "--max-iter", "5"}}}}}}},
        {"baseOutputDirectory", {{"outputUriPrefix", "gs://samples/digits"}}}}}};
  HttpReply created = daemon_->Post("/v1/projects/it/locations/local/customJobs", body.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  std::string name = created.Json()["name"];
  nlohmann::json done = daemon_->WaitForField(
      "/v1/" + name, "state", {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"},
      300);
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump() << "\n"
                                                  << Messages("/v1/" + name + "/logs");
  EXPECT_TRUE(
      std::filesystem::exists(daemon_->data_dir() + "/buckets/samples/digits/model/model.pkl"));
  std::string logs = Messages("/v1/" + name + "/logs?task=workerpool0-0");
  EXPECT_NE(logs.find("accuracy="), std::string::npos) << logs;
}

TEST_F(SampleTest, MlJobReceivesJobDirAndWritesThere) {
  nlohmann::json body = {{"jobId", "digits_ml"},
                         {"trainingInput",
                          {{"scaleTier", "BASIC"},
                           {"region", "local"},
                           {"jobDir", "gs://samples/digits-ml"},
                           {"masterConfig", {{"imageUri", kSampleImage}}},
                           {"args", {"--epochs", "1", "--max-iter", "5"}}}}};
  HttpReply created = daemon_->Post("/v1/projects/it/jobs", body.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  nlohmann::json done = daemon_->WaitForField("/v1/projects/it/jobs/digits_ml", "state",
                                              {"SUCCEEDED", "FAILED", "CANCELLED"}, 300);
  ASSERT_EQ(done["state"], "SUCCEEDED") << done.dump() << "\n"
                                        << Messages("/v1/projects/it/jobs/digits_ml/logs");
  EXPECT_TRUE(
      std::filesystem::exists(daemon_->data_dir() + "/buckets/samples/digits-ml/model.pkl"));
}

}  // namespace
}  // namespace ty::testing
