// The distributed samples as real multi-replica jobs through the real daemon and
// engine: samples/pytorch-ddp (torch.distributed, gloo, DDP) must end with identical
// weights on every rank, and samples/cpp-allreduce must give every replica the exact
// average. Needs the images from scripts/build-sample-image; with
// TRAINYARD_REQUIRE_ENGINE set (scripts/test) a missing image fails the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "integration/daemon_harness.h"

namespace ty::testing {
namespace {

constexpr char kDdpImage[] = "localhost/trainyard/pytorch-ddp:latest";
constexpr char kAllreduceImage[] = "localhost/trainyard/cpp-allreduce:latest";
constexpr char kVertexBase[] = "/v1/projects/it/locations/local/customJobs";

bool ImageExists(const std::string& image) {
  return Http("GET", "http://d/v1.41/images/" + image + "/json", "", true, EngineSocket(), 10)
             .status == 200;
}

nlohmann::json Pool(int replicas, const std::string& image, const nlohmann::json& args) {
  return {{"machineSpec", {{"machineType", "n1-standard-4"}}},
          {"replicaCount", std::to_string(replicas)},
          {"containerSpec", {{"imageUri", image}, {"args", args}}}};
}

// The rest of the first line of `text` that contains `marker`, after the marker;
// empty when none does.
std::string AfterMarker(const std::string& text, const std::string& marker) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find(marker);
    if (at != std::string::npos) return line.substr(at + marker.size());
  }
  return "";
}

class DistributedSamplesTest : public ::testing::Test {
 protected:
  void RequireImage(const std::string& image) {
    bool required = std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr;
    if (!EngineAnswers()) {
      if (required) FAIL() << "TRAINYARD_REQUIRE_ENGINE is set but the engine does not answer";
      GTEST_SKIP() << "no container engine answers on " << EngineSocket();
    }
    if (!ImageExists(image)) {
      if (required) FAIL() << image << " is missing: run scripts/build-sample-image";
      GTEST_SKIP() << image << " unavailable (scripts/build-sample-image)";
    }
    daemon_ = std::make_unique<Daemon>();
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
    daemon_.reset();
  }
  std::string Logs(const std::string& id, const std::string& task = "") {
    std::string path = std::string(kVertexBase) + "/" + id + "/logs?pageSize=10000";
    if (!task.empty()) path += "&task=" + task;
    std::string all;
    for (const auto& e : daemon_->Get(path).Json().value("entries", nlohmann::json::array())) {
      all += (task.empty() ? e.value("taskName", "") + ": " : "") + e.value("message", "") + "\n";
    }
    return all;
  }
  // Submits a Vertex job and waits for its end; returns the job id and the final body.
  std::pair<std::string, nlohmann::json> RunVertex(const nlohmann::json& job_spec, int timeout_s) {
    nlohmann::json body = {{"displayName", "dist-sample"}, {"jobSpec", job_spec}};
    HttpReply r = daemon_->Post(kVertexBase, body.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    std::string name = r.Json().value("name", "");
    std::string id = name.substr(name.rfind('/') + 1);
    auto t0 = std::chrono::steady_clock::now();
    nlohmann::json done = daemon_->WaitForField(
        std::string(kVertexBase) + "/" + id, "state",
        {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}, timeout_s);
    std::cerr << "job " << id << " ended " << done.value("state", "?") << " after "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
              << " s\n";
    return {id, done};
  }

  std::unique_ptr<Daemon> daemon_;
};

TEST_F(DistributedSamplesTest, PytorchDdpRanksEndWithTheSameWeights) {
  RequireImage(kDdpImage);
  nlohmann::json args = {"--epochs", "3"};
  auto [id, done] =
      RunVertex({{"workerPoolSpecs", {Pool(1, kDdpImage, args), Pool(2, kDdpImage, args)}},
                 {"baseOutputDirectory", {{"outputUriPrefix", "gs://samples/ddp"}}}},
                400);
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump() << "\n" << Logs(id);
  std::vector<std::string> weights;
  for (const char* task : {"workerpool0-0", "workerpool1-0", "workerpool1-1"}) {
    std::string logs = Logs(id, task);
    weights.push_back(AfterMarker(logs, "final weights:"));
    EXPECT_FALSE(weights.back().empty()) << task << " printed no final weights:\n" << logs;
    EXPECT_NE(logs.find("global loss"), std::string::npos) << logs;
  }
  EXPECT_EQ(weights[0], weights[1]);
  EXPECT_EQ(weights[0], weights[2]);
  std::cerr << "final weights:" << weights[0] << "\n";
  EXPECT_TRUE(std::filesystem::exists(daemon_->data_dir() + "/buckets/samples/ddp/model/model.pt"));
}

TEST_F(DistributedSamplesTest, CppAllreduceGivesEveryReplicaTheAverage) {
  RequireImage(kAllreduceImage);
  // Rank r contributes (r+1)*(k+1) for k = 0..3; over 4 ranks the mean is 2.5*(k+1).
  auto [id, done] = RunVertex(
      {{"workerPoolSpecs",
        {Pool(1, kAllreduceImage, {"--dim", "4"}), Pool(3, kAllreduceImage, {"--dim", "4"})}}},
      120);
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump() << "\n" << Logs(id);
  for (const char* task : {"workerpool0-0", "workerpool1-0", "workerpool1-1", "workerpool1-2"}) {
    std::string logs = Logs(id, task);
    EXPECT_EQ(AfterMarker(logs, "averaged gradient:"), " 2.500000 5.000000 7.500000 10.000000")
        << task << ":\n"
        << logs;
  }
}

}  // namespace
}  // namespace ty::testing
