// The sklearn-digits sample as a real training job through the real daemon and
// engine, in both dialects: it trains, logs its progress, and its model lands in
// the bucket directory. Needs the image from scripts/build-sample-image.
#include <gtest/gtest.h>

#include <filesystem>

#include "integration/daemon_harness.h"

namespace ty::testing {
namespace {

constexpr char kSampleImage[] = "localhost/trainyard/sklearn-digits:latest";

class SampleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bool required = std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr;
    if (!EngineAnswers() || !EngineHasImage(kSampleImage)) {
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

// Training code that uses the Cloud Storage JSON API (as the client libraries do,
// through STORAGE_EMULATOR_HOST) reaches the daemon from its container and writes
// into the same bucket directory /gcs shows.
TEST_F(SampleTest, ReplicaWritesThroughTheStorageApiIntoTheBucket) {
  ASSERT_EQ(daemon_->Post("/storage/v1/b?project=p", R"({"name":"replica-out"})").status, 200);
  const std::string code =
      "import json, os, urllib.error, urllib.request\n"
      "host = os.environ['STORAGE_EMULATOR_HOST']\n"
      "assert os.environ['CLOUD_STORAGE_EMULATOR_ENDPOINT'] == host\n"
      "req = urllib.request.Request(host + '/upload/storage/v1/b/replica-out/o"
      "?uploadType=media&name=run%2Fmetrics.json', data=b'{\"accuracy\": 0.9}', method='POST',"
      " headers={'Content-Type': 'application/json'})\n"
      "obj = json.load(urllib.request.urlopen(req, timeout=20))\n"
      "print('stored', obj['name'], obj['size'])\n"
      "print('listed', [o['name'] for o in json.load(urllib.request.urlopen("
      "host + '/storage/v1/b/replica-out/o', timeout=20))['items']])\n"
      // The replica listener serves Cloud Storage only (issue 19): a replica once read
      // every project's jobs, with their env, and created jobs through it.
      "for path in ('/v1/projects/p/locations/us-central1/customJobs', '/v1/projects/p/jobs',\n"
      "             '/metrics', '/v2/entries:list'):\n"
      "    try:\n"
      "        urllib.request.urlopen(host + path, timeout=20)\n"
      "        print('served', path)\n"
      "    except urllib.error.HTTPError as e:\n"
      "        print('refused', path, e.code)\n";
  nlohmann::json job = {
      {"displayName", "storage-writer"},
      {"jobSpec",
       {{"workerPoolSpecs",
         {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
           {"replicaCount", 1},
           {"containerSpec",
            {{"imageUri", kSampleImage}, {"command", {"python3", "-c", code}}}}}}}}}};
  HttpReply made = daemon_->Post("/v1/projects/p/locations/us-central1/customJobs", job.dump());
  ASSERT_EQ(made.status, 200) << made.body;
  const std::string path = "/v1/projects/p/locations/us-central1/customJobs/" + IdOf(made.Json());
  nlohmann::json done =
      daemon_->WaitForField(path, "state", {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"}, 120);
  const std::string logs = Messages(path + "/logs");
  ASSERT_EQ(done.value("state", ""), "JOB_STATE_SUCCEEDED") << done.dump() << "\n" << logs;
  EXPECT_NE(logs.find("stored run/metrics.json 17"), std::string::npos) << logs;
  EXPECT_NE(logs.find("listed ['run/metrics.json']"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("served"), std::string::npos) << logs;
  EXPECT_NE(logs.find("refused /v1/projects/p/locations/us-central1/customJobs 404"),
            std::string::npos)
      << logs;
  EXPECT_NE(logs.find("refused /metrics 404"), std::string::npos) << logs;
  std::ifstream written(daemon_->data_dir() + "/buckets/replica-out/run/metrics.json");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(written)), {}), "{\"accuracy\": 0.9}");
}

}  // namespace
}  // namespace ty::testing
