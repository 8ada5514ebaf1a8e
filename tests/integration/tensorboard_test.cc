// Vertex AI TensorBoard for real: a job naming a tensorboard writes event files with
// Debian's python3-protobuf (tests/tensorboard/event_writer.py) in the scikit-learn
// runtime, and the daemon indexes them into an experiment named after the job; a
// tuning job's trials become runs of one experiment. Real daemon, real podman.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "integration/daemon_harness.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kRuntimeImage[] = "localhost/trainyard/sklearn-cpu:latest";
constexpr char kLocation[] = "/v1/projects/tb/locations/us-central1";

// The writer with its messages: protoc's descriptor set of proto/tensorboard, base64.
std::string TrainerScript() {
  const fs::path desc = fs::temp_directory_path() / "ty-tensorboard-event.desc";
  ProcessRun protoc = RunProcess({"protoc", "--descriptor_set_out=" + desc.string(), "-I",
                                  std::string(TY_SOURCE_DIR) + "/proto",
                                  std::string(TY_SOURCE_DIR) + "/proto/tensorboard/event.proto"});
  EXPECT_EQ(protoc.rc, 0) << protoc.err;
  ProcessRun b64 = RunProcess({"base64", "-w0", desc.string()});
  return "DESCRIPTOR_SET = \"" + b64.out + "\"\n" +
         ReadWholeFile(std::string(TY_SOURCE_DIR) + "/tests/tensorboard/event_writer.py");
}

class TensorboardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EngineAnswers() || !EngineHasImage(kRuntimeImage)) {
      if (std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr) {
        FAIL() << kRuntimeImage << " is missing: run scripts/build-sample-image";
      }
      GTEST_SKIP() << "engine or " << kRuntimeImage << " unavailable";
    }
    daemon_ = std::make_unique<Daemon>();
    ASSERT_EQ(daemon_->Post("/storage/v1/b?project=tb", R"({"name":"tb-bkt"})").status, 200);
    HttpReply made =
        daemon_->Post(std::string(kLocation) + "/tensorboards", R"({"displayName":"board"})");
    ASSERT_EQ(made.status, 200) << made.body;
    board_ = made.Json()["response"]["name"];
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
  }

  json Pool(const std::string& steps) {
    return {{"machineSpec", {{"machineType", "n1-standard-4"}}},
            {"replicaCount", "1"},
            {"containerSpec",
             {{"imageUri", kRuntimeImage},
              {"command", {"python3", "-c", TrainerScript()}},
              {"env", {{{"name", "STEPS"}, {"value", steps}}}}}}};
  }
  json JobSpec(const std::string& steps) {
    return {{"workerPoolSpecs", {Pool(steps)}},
            {"tensorboard", board_},
            {"baseOutputDirectory", {{"outputUriPrefix", "gs://tb-bkt/out"}}}};
  }
  // The points of `tag` in `run` of `experiment`, once there are `want` (or the wait ends).
  json Points(const std::string& experiment, const std::string& run, const std::string& tag,
              size_t want) {
    const std::string series =
        "/v1/" + board_ + "/experiments/" + experiment + "/runs/" + run + "/timeSeries";
    json values;
    for (int i = 0; i < 100; ++i) {
      for (const json& s :
           daemon_->Get(series).Json().value("tensorboardTimeSeries", json::array())) {
        if (s["displayName"] != tag) continue;
        values = daemon_->Get("/v1/" + s["name"].get<std::string>() + ":read")
                     .Json()["timeSeriesData"]["values"];
      }
      if (values.size() >= want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return values;
  }

  std::unique_ptr<Daemon> daemon_;
  std::string board_;
};

TEST_F(TensorboardTest, AJobsEventFilesBecomeTheTimeSeriesOfItsExperiment) {
  const std::string jobs = std::string(kLocation) + "/customJobs";
  HttpReply created =
      daemon_->Post(jobs, json({{"displayName", "curves"}, {"jobSpec", JobSpec("20")}}).dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string name = created.Json()["name"];
  const std::string id = name.substr(name.rfind('/') + 1);
  json done = daemon_->WaitForField("/v1/" + name, "state",
                                    {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"}, 180);
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump(1);

  json loss = Points(id, "default", "loss", 20);
  ASSERT_EQ(loss.size(), 20u) << loss.dump();
  EXPECT_EQ(loss[0]["step"], "0");
  EXPECT_DOUBLE_EQ(loss[3]["scalar"]["value"].get<double>(), 0.25);
  json accuracy = Points(id, "validation", "accuracy", 20);
  ASSERT_EQ(accuracy.size(), 20u) << accuracy.dump();
  EXPECT_NEAR(accuracy[19]["scalar"]["value"].get<double>(), 0.19, 1e-6);
  json experiment = daemon_->Get("/v1/" + board_ + "/experiments/" + id).Json();
  EXPECT_EQ(experiment["displayName"], "curves") << experiment.dump();
  EXPECT_EQ(daemon_->Get("/v1/" + board_).Json()["runCount"], 2);
}

// A daemon killed while the trainer writes: the trainer goes on and ends with no daemon;
// the next daemon reads what it wrote after the last pass, so no point is lost.
TEST_F(TensorboardTest, PointsWrittenWhileNoDaemonRanAreReadByTheNext) {
  json spec = JobSpec("30");
  spec["workerPoolSpecs"][0]["containerSpec"]["env"].push_back(
      {{"name", "SLEEP"}, {"value", "0.2"}});
  HttpReply created = daemon_->Post(std::string(kLocation) + "/customJobs",
                                    json({{"displayName", "away"}, {"jobSpec", spec}}).dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string name = created.Json()["name"];
  const std::string id = name.substr(name.rfind('/') + 1);
  ASSERT_GE(Points(id, "default", "loss", 2).size(), 2u);
  daemon_->Kill();
  ProcessRun waited = RunProcess({"podman", "wait", "ty-" + id + "-1-0-0"}, {}, 120);
  ASSERT_EQ(waited.rc, 0) << waited.err;
  daemon_->Start();
  json done = daemon_->WaitForField("/v1/" + name, "state",
                                    {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"}, 120);
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump(1);
  EXPECT_EQ(Points(id, "default", "loss", 30).size(), 30u);
  EXPECT_EQ(Points(id, "validation", "accuracy", 30).size(), 30u);
}

TEST_F(TensorboardTest, ATuningJobsTrialsAreRunsOfOneExperiment) {
  json body = {
      {"displayName", "tuned"},
      {"studySpec",
       {{"metrics", {{{"metricId", "accuracy"}, {"goal", "MAXIMIZE"}}}},
        {"parameters",
         {{{"parameterId", "x"}, {"doubleValueSpec", {{"minValue", 0}, {"maxValue", 1}}}}}},
        {"algorithm", "RANDOM_SEARCH"}}},
      {"maxTrialCount", 2},
      {"parallelTrialCount", 2},
      {"trialJobSpec", JobSpec("5")}};
  const std::string studies = std::string(kLocation) + "/hyperparameterTuningJobs";
  HttpReply created = daemon_->Post(studies, body.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string name = created.Json()["name"];
  const std::string id = name.substr(name.rfind('/') + 1);
  json done = daemon_->WaitForField("/v1/" + name, "state",
                                    {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"}, 240);
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump(1);
  for (const char* run : {"1", "2", "1-validation", "2-validation"}) {
    const std::string tag =
        std::string(run).find("validation") != std::string::npos ? "accuracy" : "loss";
    EXPECT_EQ(Points(id, run, tag, 5).size(), 5u) << run;
  }
}

TEST_F(TensorboardTest, ATensorboardThatIsNotTheProjectsIsRefusedNamingTheField) {
  const std::string jobs = std::string(kLocation) + "/customJobs";
  json spec = JobSpec("1");
  spec["tensorboard"] = "projects/other/locations/us-central1/tensorboards/1";
  HttpReply other = daemon_->Post(jobs, json({{"displayName", "x"}, {"jobSpec", spec}}).dump());
  EXPECT_EQ(other.status, 400) << other.body;
  EXPECT_NE(other.body.find("jobSpec.tensorboard"), std::string::npos) << other.body;
  spec["tensorboard"] = "projects/tb/locations/us-central1/tensorboards/999";
  HttpReply missing = daemon_->Post(jobs, json({{"displayName", "x"}, {"jobSpec", spec}}).dump());
  EXPECT_EQ(missing.status, 400) << missing.body;
  EXPECT_NE(missing.body.find("does not exist"), std::string::npos) << missing.body;
}

}  // namespace
}  // namespace ty::testing
