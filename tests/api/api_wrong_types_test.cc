// Every field of a full spec of each kind, sent with every wrong JSON type: the answer
// is a 200 (the value happened to be acceptable) or a 400 INVALID_ARGUMENT, never a
// 500 and never a dropped connection. The Vertex SDK's REST transport sends enums as
// numbers and once met a 500 from a JSON type error deep in a parser (issue 20), and
// fuzzing found others (issue 19); this sweep walks each field on purpose instead of by
// chance.
#include <string>
#include <vector>

#include "api_fixture.h"

namespace ty::api {
namespace {

using nlohmann::json;

json FullCustomJob() {
  return json::parse(R"({"displayName": "sweep", "labels": {"team": "ml"},
    "jobSpec": {
      "workerPoolSpecs": [
        {"machineSpec": {"machineType": "n1-standard-4", "acceleratorType": "NVIDIA_TESLA_T4",
                         "acceleratorCount": 1,
                         "reservationAffinity": {"reservationAffinityType": "NO_RESERVATION"}},
         "replicaCount": "1",
         "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100},
         "containerSpec": {"imageUri": "localhost/img:1", "command": ["python"],
                           "args": ["--epochs=1"], "env": [{"name": "A", "value": "1"}]}},
        {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": 2,
         "pythonPackageSpec": {"executorImageUri": "localhost/exec:1",
                               "packageUris": ["gs://bkt/p.tar.gz"], "pythonModule": "trainer.task",
                               "args": ["--x"], "env": [{"name": "B", "value": "2"}]}}],
      "scheduling": {"timeout": "3600s", "restartJobOnWorkerRestart": false,
                     "strategy": "STANDARD", "disableRetries": true},
      "serviceAccount": "sa@p.iam.gserviceaccount.com",
      "baseOutputDirectory": {"outputUriPrefix": "gs://bkt/out"},
      "enableWebAccess": false}})");
}

json FullTuningJob() {
  json trial = FullCustomJob()["jobSpec"];
  return {{"displayName", "sweep-hpt"},
          {"labels", {{"team", "ml"}}},
          {"maxTrialCount", 4},
          {"parallelTrialCount", 2},
          {"maxFailedTrialCount", 1},
          {"trialJobSpec", trial},
          {"studySpec", json::parse(R"({
             "metrics": [{"metricId": "acc", "goal": "MAXIMIZE"}],
             "parameters": [
               {"parameterId": "lr", "doubleValueSpec": {"minValue": 0.001, "maxValue": 0.1},
                "scaleType": "UNIT_LOG_SCALE"},
               {"parameterId": "n", "integerValueSpec": {"minValue": "1", "maxValue": "8"}},
               {"parameterId": "opt", "categoricalValueSpec": {"values": ["sgd", "adam"]},
                "conditionalParameterSpecs": [
                  {"parentCategoricalValues": {"values": ["sgd"]},
                   "parameterSpec": {"parameterId": "m",
                                     "discreteValueSpec": {"values": [0.5, 0.9]}}}]}],
             "algorithm": "RANDOM_SEARCH",
             "measurementSelectionType": "BEST_MEASUREMENT",
             "decayCurveStoppingSpec": {"useElapsedDuration": true}})")}};
}

json FullMlJob() {
  return json::parse(R"({"jobId": "sweep", "labels": {"owner": "a"},
    "trainingInput": {"scaleTier": "CUSTOM", "region": "us-central1",
      "masterType": "n1-standard-4",
      "masterConfig": {"imageUri": "localhost/img:1",
                       "acceleratorConfig": {"count": "1", "type": "NVIDIA_TESLA_T4"}},
      "workerType": "n1-standard-4", "workerCount": "1",
      "workerConfig": {"imageUri": "localhost/img:1"},
      "parameterServerType": "n1-standard-4", "parameterServerCount": "1",
      "args": ["--a"], "jobDir": "gs://bkt/dir",
      "scheduling": {"maxRunningTime": "3600s"},
      "hyperparameters": {"goal": "MAXIMIZE", "hyperparameterMetricTag": "acc",
        "maxTrials": 2, "maxParallelTrials": 1, "algorithm": "RANDOM_SEARCH",
        "params": [{"parameterName": "lr", "type": "DOUBLE", "minValue": 0.01,
                    "maxValue": 0.1, "scaleType": "UNIT_LOG_SCALE"},
                   {"parameterName": "k", "type": "CATEGORICAL",
                    "categoricalValues": ["a", "b"]}]}}})");
}

// Every JSON pointer below the root, parents before children.
void CollectPointers(const json& node, const json::json_pointer& at,
                     std::vector<json::json_pointer>* out) {
  if (node.is_object()) {
    for (const auto& [key, child] : node.items()) {
      out->push_back(at / key);
      CollectPointers(child, at / key, out);
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      out->push_back(at / i);
      CollectPointers(node[i], at / i, out);
    }
  }
}

class ApiWrongTypesTest : public ApiFixture {
 protected:
  // Sends `body` with each field replaced by each wrong type; returns how many were
  // refused, and fails the test on any answer other than 200 or 400.
  int Sweep(const std::string& path, const json& body, const std::string& id_field) {
    const std::vector<json> kWrong = {
        json(7),          json(-1),      json(1.5),        json("text"),
        json(true),       json::array(), json::array({1}), json::object(),
        json({{"k", 1}}), json(nullptr), json(1e300),      json("99999999999999999999")};
    std::vector<json::json_pointer> pointers;
    CollectPointers(body, json::json_pointer(), &pointers);
    int refused = 0, n = 0;
    for (const json::json_pointer& p : pointers) {
      for (const json& wrong : kWrong) {
        json sent = body;
        sent[p] = wrong;
        // ml v1 ids must be unique per project; a fresh valid one unless jobId is swept.
        if (!id_field.empty() && p.to_string() != "/" + id_field) {
          sent[id_field] = "sweep_" + std::to_string(n++);
        }
        Reply r = Post(path, sent.dump());
        EXPECT_TRUE(r.status == 200 || r.status == 400)
            << p.to_string() << " = " << wrong.dump() << " -> " << r.status << " " << r.body
            << r.curl_error;
        if (r.status == 400) {
          ++refused;
          EXPECT_EQ(r.json()["error"].value("status", ""), "INVALID_ARGUMENT")
              << p.to_string() << " = " << wrong.dump();
        }
      }
    }
    return refused;
  }
};

TEST_F(ApiWrongTypesTest, EveryFieldOfACustomJobWithEveryWrongTypeIsA200OrA400) {
  ASSERT_EQ(Post(kVertex, FullCustomJob().dump()).status, 200);  // The spec itself is valid.
  EXPECT_GT(Sweep(kVertex, FullCustomJob(), ""), 300);
}

TEST_F(ApiWrongTypesTest, EveryFieldOfATuningJobWithEveryWrongTypeIsA200OrA400) {
  const std::string path = "/v1/projects/p/locations/us-central1/hyperparameterTuningJobs";
  Reply ok = Post(path, FullTuningJob().dump());
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_GT(Sweep(path, FullTuningJob(), ""), 300);
}

TEST_F(ApiWrongTypesTest, EveryFieldOfAnMlJobWithEveryWrongTypeIsA200OrA400) {
  json body = FullMlJob();
  Reply ok = Post(kMl, body.dump());
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_GT(Sweep(kMl, body, "jobId"), 300);
}

TEST_F(ApiWrongTypesTest, EveryFieldOfATrainingPipelineWithEveryWrongTypeIsA200OrA400) {
  const std::string path = "/v1/projects/p/locations/us-central1/trainingPipelines";
  json body = {
      {"displayName", "sweep-pipe"},
      {"labels", {{"team", "ml"}}},
      {"trainingTaskDefinition",
       "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"},
      {"trainingTaskInputs", FullCustomJob()["jobSpec"]}};
  Reply ok = Post(path, body.dump());
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_GT(Sweep(path, body, ""), 300);
}

// The SDK's way: every enum a number, answers asked for as numbers.
TEST_F(ApiWrongTypesTest, EnumNumbersAreAcceptedAndAnsweredAsNumbersWhenAsked) {
  json body = FullTuningJob();
  body["studySpec"]["metrics"][0]["goal"] = 2;
  body["studySpec"]["parameters"][0]["scaleType"] = 2;
  body["studySpec"]["algorithm"] = 3;
  body["studySpec"]["measurementSelectionType"] = 1;
  body["trialJobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"] = 5;
  body["trialJobSpec"]["scheduling"]["strategy"] = 4;
  const std::string path = "/v1/projects/p/locations/us-central1/hyperparameterTuningJobs";
  Reply as_ints = Post(path + "?%24alt=json%3Benum-encoding%3Dint", body.dump());
  ASSERT_EQ(as_ints.status, 200) << as_ints.body;
  json j = as_ints.json();
  EXPECT_EQ(j["studySpec"]["metrics"][0]["goal"], 2);
  EXPECT_EQ(j["studySpec"]["parameters"][0]["scaleType"], 2);
  EXPECT_EQ(j["studySpec"]["algorithm"], 3);
  EXPECT_EQ(j["trialJobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"], 5);
  EXPECT_EQ(j["trialJobSpec"]["scheduling"]["strategy"], 4);
  EXPECT_TRUE(j["state"].is_number());
  // The same job read by a client that asks for names.
  Reply named = Get("/v1/" + j["name"].get<std::string>());
  ASSERT_EQ(named.status, 200) << named.body;
  json n = named.json();
  EXPECT_EQ(n["studySpec"]["metrics"][0]["goal"], "MINIMIZE");
  EXPECT_EQ(n["studySpec"]["parameters"][0]["scaleType"], "UNIT_LOG_SCALE");
  EXPECT_EQ(n["studySpec"]["algorithm"], "RANDOM_SEARCH");
  EXPECT_EQ(n["trialJobSpec"]["workerPoolSpecs"][0]["machineSpec"]["acceleratorType"],
            "NVIDIA_TESLA_T4");
  EXPECT_EQ(n["trialJobSpec"]["scheduling"]["strategy"], "SPOT");

  json ml = FullMlJob();
  ml["trainingInput"]["scaleTier"] = 5;  // CUSTOM
  ml["trainingInput"]["hyperparameters"]["goal"] = 2;
  ml["trainingInput"]["hyperparameters"]["algorithm"] = 2;  // ml v1 numbers it 2.
  ml["trainingInput"]["hyperparameters"]["params"][0]["type"] = 1;
  ml["trainingInput"]["hyperparameters"]["params"][0]["scaleType"] = 2;
  Reply ml_reply = Post(kMl, ml.dump());
  ASSERT_EQ(ml_reply.status, 200) << ml_reply.body;
  json ti = ml_reply.json()["trainingInput"];
  EXPECT_EQ(ti["scaleTier"], "CUSTOM");
  EXPECT_EQ(ti["hyperparameters"]["goal"], "MINIMIZE");
  EXPECT_EQ(ti["hyperparameters"]["algorithm"], "RANDOM_SEARCH");
  EXPECT_EQ(ti["hyperparameters"]["params"][0]["type"], "DOUBLE");
  EXPECT_EQ(ti["hyperparameters"]["params"][0]["scaleType"], "UNIT_LOG_SCALE");
}

}  // namespace
}  // namespace ty::api
