// Vertex trainingPipelines (issue 20 item 4): a custom-task pipeline is one record that
// runs as its backing CustomJob, read under both names; what this server cannot do
// (models, datasets, AutoML) is a 400 naming the field.
#include "api_fixture.h"

namespace ty::api {
namespace {

using nlohmann::json;

constexpr char kPipelines[] = "/v1/projects/p/locations/us-central1/trainingPipelines";
constexpr char kCustomTask[] =
    "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml";

// What the SDK's CustomContainerTrainingJob sends: a Struct with snake_case keys.
json Pipeline() {
  return {{"displayName", "train-pipe"},
          {"labels", {{"team", "ml"}}},
          {"trainingTaskDefinition", kCustomTask},
          {"trainingTaskInputs",
           {{"worker_pool_specs",
             {{{"machine_spec", {{"machine_type", "n1-standard-4"}}},
               {"replica_count", 1},
               {"container_spec", {{"image_uri", "localhost/img:1"}, {"args", {"--x"}}}},
               {"disk_spec", {{"boot_disk_type", "pd-ssd"}, {"boot_disk_size_gb", 100}}}}}},
            {"base_output_directory", {{"output_uri_prefix", "gs://bkt/out"}}},
            {"scheduling", {{"timeout", nullptr}, {"restart_job_on_worker_restart", false}}}}}};
}

class ApiPipelinesTest : public ApiFixture {};

TEST_F(ApiPipelinesTest, APipelineRunsAsItsBackingCustomJob) {
  Reply made = Post(kPipelines, Pipeline().dump());
  ASSERT_EQ(made.status, 200) << made.body;
  json p = made.json();
  const std::string name = p["name"];
  const std::string id = name.substr(name.rfind('/') + 1);
  EXPECT_EQ(name, std::string(kPipelines).substr(4) + "/" + id);
  EXPECT_EQ(p["trainingTaskInputs"], Pipeline()["trainingTaskInputs"]);  // As sent.
  EXPECT_EQ(p["trainingTaskMetadata"]["backingCustomJob"],
            "projects/p/locations/us-central1/customJobs/" + id);
  EXPECT_EQ(p["labels"]["team"], "ml");

  // The backing CustomJob: the same record, as a CustomJob.
  Reply custom = Get(std::string(kVertex) + "/" + id);
  ASSERT_EQ(custom.status, 200) << custom.body;
  json c = custom.json();
  EXPECT_EQ(c["name"], "projects/p/locations/us-central1/customJobs/" + id);
  EXPECT_EQ(c["displayName"], "train-pipe");
  EXPECT_EQ(c["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["imageUri"], "localhost/img:1");
  EXPECT_EQ(c["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"], "gs://bkt/out");
  EXPECT_FALSE(c.contains("trainingTaskDefinition"));

  FinishJob({model::Dialect::kVertex, "p", "us-central1", id}, 0);
  json done = Get(std::string(kPipelines) + "/" + id).json();
  EXPECT_EQ(done["state"], "PIPELINE_STATE_SUCCEEDED") << done.dump();
  EXPECT_TRUE(done.contains("startTime") && done.contains("endTime"));
  EXPECT_EQ(Get(std::string(kVertex) + "/" + id).json()["state"], "JOB_STATE_SUCCEEDED");
  // Numbers when asked for (PipelineState numbers match JobState's).
  EXPECT_EQ(Get(std::string(kPipelines) + "/" + id + "?%24alt=json%3Benum-encoding%3Dint")
                .json()["state"],
            4);

  // Listed under both collections, filtered by either state vocabulary.
  json pipes = Get(std::string(kPipelines) + "?filter=state%3DPIPELINE_STATE_SUCCEEDED").json();
  ASSERT_EQ(pipes["trainingPipelines"].size(), 1u) << pipes.dump();
  EXPECT_EQ(pipes["trainingPipelines"][0]["name"], name);
  json customs = Get(kVertex).json();
  ASSERT_EQ(customs["customJobs"].size(), 1u) << customs.dump();
  EXPECT_EQ(customs["customJobs"][0]["name"], "projects/p/locations/us-central1/customJobs/" + id);
  // Not a tuning job.
  EXPECT_EQ(Get("/v1/projects/p/locations/us-central1/hyperparameterTuningJobs/" + id).status, 404);

  Reply deleted = Delete(std::string(kPipelines) + "/" + id);
  EXPECT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(Get(std::string(kPipelines) + "/" + id).status, 404);
}

TEST_F(ApiPipelinesTest, CancelEndsThePipelineCancelled) {
  Reply made = Post(kPipelines, Pipeline().dump());
  ASSERT_EQ(made.status, 200) << made.body;
  const std::string name = made.json()["name"];
  const std::string id = name.substr(name.rfind('/') + 1);
  for (int i = 0; i < 500 && !executor_.IsRunning(id, 1, 0, 0); ++i) usleep(10000);
  ASSERT_EQ(Post(std::string(kPipelines) + "/" + id + ":cancel", "").status, 200);
  std::string state;
  for (int i = 0; i < 500 && state != "PIPELINE_STATE_CANCELLED"; ++i) {
    state = Get(std::string(kPipelines) + "/" + id).json().value("state", "");
    usleep(10000);
  }
  EXPECT_EQ(state, "PIPELINE_STATE_CANCELLED");
}

TEST_F(ApiPipelinesTest, WhatThisServerCannotDoIsA400NamingTheField) {
  struct Case {
    const char* field;
    std::function<void(json&)> mutate;
  };
  const std::vector<Case> cases = {
      {"modelToUpload",
       [](json& b) {
         b["modelToUpload"] = {{"displayName", "m"}};
       }},
      {"inputDataConfig",
       [](json& b) {
         b["inputDataConfig"] = {{"datasetId", "1"}};
       }},
      {"trainingTaskDefinition",
       [](json& b) {
         b["trainingTaskDefinition"] =
             "gs://google-cloud-aiplatform/schema/trainingjob/definition/"
             "automl_tabular_1.0.0.yaml";
       }},
      {"trainingTaskInputs", [](json& b) { b.erase("trainingTaskInputs"); }},
      {"trainingTaskInputs.workerPoolSpecs[0].containerSpec.imageUri",
       [](json& b) {
         b["trainingTaskInputs"]["worker_pool_specs"][0]["container_spec"].erase("image_uri");
       }},
      {"trainingTaskInputs.workerPoolSpecs",
       [](json& b) { b["trainingTaskInputs"] = json::object(); }},
      {"displayName", [](json& b) { b.erase("displayName"); }},
  };
  for (const Case& c : cases) {
    json body = Pipeline();
    c.mutate(body);
    Reply r = Post(kPipelines, body.dump());
    EXPECT_EQ(r.status, 400) << c.field << ": " << r.body;
    EXPECT_EQ(r.json()["error"]["details"][0]["fieldViolations"][0]["field"], c.field) << r.body;
  }
}

// A refusal after parsing (the spec's limits, admission) names the field as the
// pipeline's caller wrote it: under trainingTaskInputs, never jobSpec (issue 33).
TEST_F(ApiPipelinesTest, ARefusalNamesTheFieldUnderTrainingTaskInputs) {
  json body = Pipeline();
  body["trainingTaskInputs"]["worker_pool_specs"][0]["replica_count"] = 5000;
  Reply r = Post(kPipelines, body.dump());
  ASSERT_EQ(r.status, 400) << r.body;
  const json error = r.json()["error"];
  EXPECT_EQ(error["details"][0]["fieldViolations"][0]["field"],
            "trainingTaskInputs.workerPoolSpecs[0].replicaCount")
      << r.body;
  EXPECT_EQ(error["message"].get<std::string>().find("jobSpec"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace ty::api
