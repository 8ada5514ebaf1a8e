// Job routes of both dialects over real HTTP.
#include <gmock/gmock.h>

#include <set>
#include <string>

#include "api/api_fixture.h"

namespace ty::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class ApiJobsTest : public ApiFixture {};

TEST_F(ApiJobsTest, Healthz) {
  Reply r = Get("/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.json(), json({{"status", "ok"}}));
  EXPECT_EQ(r.content_type, "application/json; charset=UTF-8");
}

TEST_F(ApiJobsTest, MlCreateGetAndList) {
  Reply created = Post(kMl, MlBody("census_001"));
  ASSERT_EQ(created.status, 200) << created.body;
  EXPECT_EQ(created.content_type, "application/json; charset=UTF-8");
  json job = created.json();
  EXPECT_EQ(job["jobId"], "census_001");
  EXPECT_TRUE(job.contains("createTime"));
  EXPECT_TRUE(job["state"] == "QUEUED" || job["state"] == "PREPARING" || job["state"] == "RUNNING")
      << job.dump();

  Reply got = Get(std::string(kMl) + "/census_001");
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.json()["jobId"], "census_001");

  CreateMl("other_002");
  Reply listed = Get(kMl);
  ASSERT_EQ(listed.status, 200) << listed.body;
  ASSERT_EQ(listed.json()["jobs"].size(), 2u) << listed.body;
  EXPECT_FALSE(listed.json().contains("nextPageToken"));

  Reply filtered = Get(std::string(kMl) + "?filter=jobId%3Acensus*");
  ASSERT_EQ(filtered.status, 200) << filtered.body;
  ASSERT_EQ(filtered.json()["jobs"].size(), 1u) << filtered.body;
  EXPECT_EQ(filtered.json()["jobs"][0]["jobId"], "census_001");
}

// The ml v1 discovery document sends its client back to the daemon it came from, with
// the methods the daemon serves (the Python client's test runs it: discovery_client_test).
TEST_F(ApiJobsTest, MlDiscoveryDocumentPointsAtThisDaemon) {
  Reply r = Send("GET", "/discovery/v1/apis/ml/v1/rest", std::nullopt, {"Host: trainyard:8080"});
  ASSERT_EQ(r.status, 200) << r.body;
  json doc = r.json();
  EXPECT_EQ(doc["rootUrl"], "http://trainyard:8080/");
  EXPECT_EQ(doc["name"], "ml");
  const json& jobs = doc["resources"]["projects"]["resources"]["jobs"]["methods"];
  EXPECT_EQ(jobs["create"]["path"], "v1/{+parent}/jobs");
  EXPECT_EQ(jobs["create"]["request"]["$ref"], "GoogleCloudMlV1__Job");
  EXPECT_EQ(jobs["cancel"]["path"], "v1/{+name}:cancel");
  for (const auto& [name, method] : jobs.items()) {
    const std::string response = method["response"]["$ref"];
    ASSERT_TRUE(doc["schemas"].contains(response)) << name << " answers " << response;
    EXPECT_TRUE(doc["schemas"][response]["properties"].is_object()) << response;
  }
  EXPECT_FALSE(doc.contains("auth")) << "a client would then demand credentials of its own";
  EXPECT_EQ(Get("/$discovery/rest?version=v1").json(), Get("/discovery/v1/apis/ml/v1/rest").json());
  EXPECT_EQ(Get("/$discovery/rest?version=v2").status, 404);
}

TEST_F(ApiJobsTest, MlEmptyListIsEmptyObject) {
  Reply r = Get(kMl);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json(), json::object());
}

TEST_F(ApiJobsTest, MlDuplicateIs409WithFieldViolation) {
  CreateMl("dup");
  Reply r = Post(kMl, MlBody("dup"));
  EXPECT_EQ(r.status, 409) << r.body;
  json error = r.json()["error"];
  EXPECT_EQ(error["code"], 409);
  EXPECT_EQ(error["status"], "ALREADY_EXISTS");
  EXPECT_EQ(error["details"][0]["@type"], "type.googleapis.com/google.rpc.BadRequest");
  EXPECT_EQ(error["details"][0]["fieldViolations"][0]["field"], "job.job_id");
}

TEST_F(ApiJobsTest, MissingJobIs404) {
  Reply ml = Get(std::string(kMl) + "/nope");
  EXPECT_EQ(ml.status, 404);
  EXPECT_EQ(ml.json()["error"]["status"], "NOT_FOUND");
  EXPECT_EQ(ml.content_type, "application/json; charset=UTF-8");
  Reply vertex = Get(std::string(kVertex) + "/12345");
  EXPECT_EQ(vertex.status, 404) << vertex.body;
}

TEST_F(ApiJobsTest, NonNumericVertexIdIs400) {
  Reply r = Get(std::string(kVertex) + "/abc");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json()["error"]["status"], "INVALID_ARGUMENT");
}

TEST_F(ApiJobsTest, MlCancelWithEmptyObjectAndWithNoBody) {
  CreateMl("c1");
  CreateMl("c2");
  Reply with_body = Post(std::string(kMl) + "/c1:cancel", "{}");
  EXPECT_EQ(with_body.status, 200) << with_body.body;
  EXPECT_EQ(with_body.body, "{}");
  Reply no_body = Send("POST", std::string(kMl) + "/c2:cancel");
  EXPECT_EQ(no_body.status, 200) << no_body.body;
  EXPECT_EQ(no_body.body, "{}");
  // Percent-encoded colon too.
  Reply encoded = Send("POST", std::string(kMl) + "/c2%3Acancel");
  EXPECT_EQ(encoded.status, 200) << encoded.body;
  Reply missing = Post(std::string(kMl) + "/none:cancel", "{}");
  EXPECT_EQ(missing.status, 404);
}

TEST_F(ApiJobsTest, VertexCreateAssignsNumericIdAndQueuedState) {
  Reply r = Post(kVertex, VertexBody("train-1"));
  ASSERT_EQ(r.status, 200) << r.body;
  json job = r.json();
  std::string name = job["name"];
  const std::string prefix = "projects/p/locations/us-central1/customJobs/";
  ASSERT_EQ(name.rfind(prefix, 0), 0u) << name;
  std::string id = name.substr(prefix.size());
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(id.find_first_not_of("0123456789"), std::string::npos) << id;
  std::set<std::string> early = {"JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING"};
  EXPECT_TRUE(early.count(job["state"].get<std::string>())) << job.dump();
  EXPECT_TRUE(job.contains("createTime"));
  EXPECT_TRUE(job.contains("updateTime"));
  EXPECT_EQ(job["displayName"], "train-1");

  Reply got = Get(std::string(kVertex) + "/" + id);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.json()["name"], name);
}

TEST_F(ApiJobsTest, EnumEncodingIntGivesNumericState) {
  std::string id = CreateVertex("ints");
  for (const std::string query :
       {"?$alt=json;enum-encoding=int", "?%24alt=json%3Benum-encoding%3Dint",
        "?$alt=json%3Benum-encoding=int&key=abc&prettyPrint=false"}) {
    Reply r = Get(std::string(kVertex) + "/" + id + query);
    ASSERT_EQ(r.status, 200) << query << ": " << r.body;
    EXPECT_TRUE(r.json()["state"].is_number_integer()) << query << ": " << r.body;
  }
  Reply plain = Get(std::string(kVertex) + "/" + id + "?alt=json&$.xgafv=2&fields=name");
  ASSERT_EQ(plain.status, 200) << plain.body;
  EXPECT_TRUE(plain.json()["state"].is_string());
}

TEST_F(ApiJobsTest, VertexListFilterAndPaging) {
  for (int i = 0; i < 5; ++i) CreateVertex("page_" + std::to_string(i));
  CreateVertex("other");
  std::set<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    std::string path = std::string(kVertex) + "?filter=display_name%3A%22page_*%22&pageSize=2";
    if (!token.empty()) path += "&pageToken=" + token;
    Reply r = Get(path);
    ASSERT_EQ(r.status, 200) << r.body;
    json page = r.json();
    ASSERT_TRUE(page.contains("customJobs")) << r.body;
    EXPECT_LE(page["customJobs"].size(), 2u);
    for (const json& job : page["customJobs"]) {
      EXPECT_EQ(job["displayName"].get<std::string>().rfind("page_", 0), 0u);
      EXPECT_TRUE(seen.insert(job["name"]).second) << "duplicate " << job["name"];
    }
    token = page.value("nextPageToken", "");
    ++pages;
    ASSERT_LT(pages, 10);
  } while (!token.empty());
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen.size(), 5u);
}

TEST_F(ApiJobsTest, VertexListReadMaskKeepsNamedFields) {
  CreateVertex("masked");
  Reply r = Get(std::string(kVertex) + "?readMask=name,display_name");
  ASSERT_EQ(r.status, 200) << r.body;
  json job = r.json()["customJobs"][0];
  EXPECT_TRUE(job.contains("name"));
  EXPECT_TRUE(job.contains("displayName"));
  EXPECT_FALSE(job.contains("jobSpec"));
}

TEST_F(ApiJobsTest, BadFilterAndPageSizeAre400) {
  EXPECT_EQ(Get(std::string(kVertex) + "?filter=bogus%3D1").status, 400);
  EXPECT_EQ(Get(std::string(kVertex) + "?pageSize=abc").status, 400);
  EXPECT_EQ(Get(std::string(kVertex) + "?pageSize=-1").status, 400);
}

TEST_F(ApiJobsTest, VertexCancelWithAndWithoutBody) {
  std::string a = CreateVertex("a");
  std::string b = CreateVertex("b");
  Reply with_body = Post(std::string(kVertex) + "/" + a + ":cancel", "{}");
  EXPECT_EQ(with_body.status, 200) << with_body.body;
  EXPECT_EQ(with_body.body, "{}");
  Reply no_body = Send("POST", std::string(kVertex) + "/" + b + ":cancel");
  EXPECT_EQ(no_body.status, 200) << no_body.body;
  EXPECT_EQ(no_body.body, "{}");
}

TEST_F(ApiJobsTest, DeleteRunningJobIsFailedPrecondition) {
  std::string id = CreateVertex("running");
  Reply r = Delete(std::string(kVertex) + "/" + id);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json()["error"]["status"], "FAILED_PRECONDITION");
}

// A finished job is served from the service's cache after its first read: the same
// text every time, each encoding its own, still only in its own scope, and gone with
// its delete.
TEST_F(ApiJobsTest, AFinishedJobReadsTheSameUntilItIsDeleted) {
  std::string id = CreateVertex("cached");
  FinishJob(VertexRef(id), 0);
  const std::string path = std::string(kVertex) + "/" + id;
  Reply first = Get(path);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.json()["state"], "JOB_STATE_SUCCEEDED");
  EXPECT_EQ(Get(path).body, first.body);
  Reply ints = Get(path + "?$alt=json;enum-encoding=int");
  ASSERT_EQ(ints.status, 200) << ints.body;
  EXPECT_TRUE(ints.json()["state"].is_number_integer()) << ints.body;
  EXPECT_EQ(Get(path).body, first.body);
  EXPECT_EQ(Get("/v1/projects/other/locations/us-central1/customJobs/" + id).status, 404);
  EXPECT_EQ(Get("/v1/projects/p/locations/europe-west4/customJobs/" + id).status, 404);
  EXPECT_EQ(Get("/v1/projects/p/locations/us-central1/hyperparameterTuningJobs/" + id).status, 404);
  ASSERT_EQ(Delete(path).status, 200);
  EXPECT_EQ(Get(path).status, 404);
}

TEST_F(ApiJobsTest, DeleteFinishedJobAnswersOperationAndPollsWork) {
  std::string id = CreateVertex("done");
  FinishJob(VertexRef(id), 0);
  // GAPIC sends a content type even on DELETE.
  Reply r = Send("DELETE", std::string(kVertex) + "/" + id, std::nullopt,
                 {"Content-Type: application/json", "x-goog-request-params: name=x",
                  "Authorization: Bearer token"});
  ASSERT_EQ(r.status, 200) << r.body;
  json op = r.json();
  std::string name = op["name"];
  EXPECT_EQ(name.rfind("projects/p/locations/us-central1/operations/", 0), 0u) << name;
  EXPECT_EQ(op["done"], true);
  EXPECT_EQ(op["metadata"]["@type"],
            "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata");
  EXPECT_TRUE(op["metadata"]["genericMetadata"].contains("createTime"));
  EXPECT_TRUE(op["metadata"]["genericMetadata"].contains("updateTime"));
  EXPECT_EQ(op["response"], json({{"@type", "type.googleapis.com/google.protobuf.Empty"}}));

  for (const std::string prefix : {"/v1/", "/ui/"}) {
    Reply poll = Get(prefix + name);
    ASSERT_EQ(poll.status, 200) << prefix << ": " << poll.body;
    EXPECT_EQ(poll.json(), op);
  }
  EXPECT_EQ(Get(std::string(kVertex) + "/" + id).status, 404);
  EXPECT_EQ(Get("/v1/projects/p/locations/us-central1/operations/999999").status, 404);
}

TEST_F(ApiJobsTest, UnknownFieldIs400WithFieldViolationPath) {
  Reply r = Post(kVertex, R"({"displayName": "x", "jobSpec": {"workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri": "img", "bogusField": 1}}]}})");
  ASSERT_EQ(r.status, 400) << r.body;
  json error = r.json()["error"];
  EXPECT_EQ(error["status"], "INVALID_ARGUMENT");
  std::string field = error["details"][0]["fieldViolations"][0]["field"];
  EXPECT_NE(field.find("workerPoolSpecs[0].containerSpec"), std::string::npos) << field;
  EXPECT_FALSE(error["details"][0]["fieldViolations"][0]["description"].get<std::string>().empty());
}

// Issue 33: a bucket the job names that may not be claimed (a name Cloud Storage
// refuses) was a 400 naming no field.
TEST_F(ApiJobsTest, ABucketThatCannotBeClaimedNamesItsField) {
  Reply r = Post(kVertex, R"({"displayName": "x", "jobSpec": {"workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri": "img"}}],
      "baseOutputDirectory": {"outputUriPrefix": "gs://my-google-data/out"}}})");
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.json()["error"]["details"][0]["fieldViolations"][0]["field"],
            "jobSpec.baseOutputDirectory.outputUriPrefix")
      << r.body;
}

// Issue 33: a job on a prebuilt runtime this server has not built is refused at submit,
// naming the field and the command that builds it (it used to fail at launch), in both
// dialects; nothing is stored.
TEST_F(ApiJobsTest, AJobOnAnUnbuiltRuntimeIsRefusedWithHowToBuildIt) {
  executor_.SetRuntimeMissing("localhost/trainyard/torch-cpu:latest");
  executor_.SetRuntimeMissing("localhost/trainyard/sklearn-cpu:latest");
  Reply vertex = Post(kVertex, R"({"displayName": "x", "jobSpec": {"workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri": "img"}},
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri":
           "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.1-13.py310:latest"}}]}})");
  ASSERT_EQ(vertex.status, 400) << vertex.body;
  json error = vertex.json()["error"];
  EXPECT_EQ(error["status"], "FAILED_PRECONDITION");
  EXPECT_EQ(error["details"][0]["fieldViolations"][0]["field"],
            "jobSpec.workerPoolSpecs[1].containerSpec.imageUri");
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("`trainyard images build pytorch`"));

  Reply ml = Post(kMl, R"({"jobId": "on_sklearn", "trainingInput": {
      "region": "us-central1", "runtimeVersion": "2.11",
      "packageUris": ["gs://b/trainer-0.1.tar.gz"], "pythonModule": "trainer.task"}})");
  ASSERT_EQ(ml.status, 400) << ml.body;
  EXPECT_EQ(ml.json()["error"]["details"][0]["fieldViolations"][0]["field"],
            "trainingInput.runtimeVersion");
  EXPECT_THAT(ml.json()["error"]["message"].get<std::string>(),
              HasSubstr("`trainyard images build scikit-learn`"));
  EXPECT_EQ(Get(kMl + std::string("/on_sklearn")).status, 404) << "nothing stored";
  // Built (the fake holds every other image): the same user image runs.
  EXPECT_EQ(Post(kVertex, R"({"displayName": "x", "jobSpec": {"workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri": "img"}}]}})")
                .status,
            200);
}

TEST_F(ApiJobsTest, UnknownRoutesAndMethodsAre404) {
  for (auto [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/"},
           {"GET", "/v2/projects/p/jobs"},
           {"GET", "/v1/projects/p/models"},
           {"PUT", "/v1/projects/p/jobs"},
           {"DELETE", "/v1/projects/p/jobs/x"},
           {"POST", "/v1/projects/p/jobs/x:frobnicate"},
           {"GET", "/ui/projects/p/jobs"},
           {"GET", "/v1/projects/p/locations/l/customJobs/1/2/3"}}) {
    Reply r = Send(method, path);
    EXPECT_EQ(r.status, 404) << method << " " << path << ": " << r.body;
    EXPECT_EQ(r.json()["error"]["status"], "NOT_FOUND") << method << " " << path;
    EXPECT_EQ(r.content_type, "application/json; charset=UTF-8");
  }
}

}  // namespace
}  // namespace ty::api

namespace ty::api {
namespace {

TEST_F(ApiJobsTest, DetailsShowReplicasRestartsAndEvents) {
  std::string uid = CreateVertex("details");
  std::string name = std::string(kVertex).substr(4) + "/" + uid;
  for (int i = 0; i < 500 && !executor_.IsRunning(uid, 1, 0, 0); ++i) usleep(10000);
  executor_.Exit(uid, 1, 0, 0, 137, 9);  // Killed from outside: restarted in place.
  json details;
  for (int i = 0; i < 200; ++i) {
    details = Get("/v1/" + name + "/details").json();
    // RESTARTING while the restart in place is under way, then RUNNING again.
    const json& r = details["replicas"][0];
    if (r.value("restarts", 0) == 1 && r.value("state", "") == "RUNNING") break;
    usleep(10000);
  }
  EXPECT_EQ(details["attempt"], 1);
  ASSERT_EQ(details["replicas"].size(), 1u) << details.dump();
  const json& r = details["replicas"][0];
  EXPECT_EQ(r["taskName"], "workerpool0-0");
  EXPECT_EQ(r["restarts"], 1);
  EXPECT_EQ(r["state"], "RUNNING");
  EXPECT_EQ(r["hostname"], "ty-" + uid + "-workerpool0-0");
  EXPECT_TRUE(details["phases"].contains("allRunningTime"));
  bool restart_event = false;
  for (const auto& e : details["events"]) restart_event |= e["kind"] == "restart";
  EXPECT_TRUE(restart_event) << details.dump();
  EXPECT_EQ(Get(std::string(kMl) + "/nope/details").status, 404);
}

}  // namespace
}  // namespace ty::api

namespace ty::api {
namespace {

constexpr char kHp[] = "/v1/projects/p/locations/us-central1/hyperparameterTuningJobs";

// The Vertex tuning collection pages and filters like customJobs, holds only tuning
// jobs, and its ids do not resolve as custom jobs (nor the other way round).
TEST_F(ApiJobsTest, HyperparameterTuningJobsListFilterPagingAndKinds) {
  std::vector<std::string> ids;
  for (const char* name : {"hp_a", "hp_b", "hp_c"}) {
    Reply r = Post(kHp, HpBody(name));
    ASSERT_EQ(r.status, 200) << r.body;
    std::string n = r.json()["name"];
    ids.push_back(n.substr(n.rfind('/') + 1));
  }
  CreateVertex("custom");
  std::set<std::string> seen;
  std::string token;
  for (int pages = 0; pages < 5; ++pages) {
    std::string path = std::string(kHp) + "?pageSize=2";
    if (!token.empty()) path += "&pageToken=" + token;
    Reply r = Get(path);
    ASSERT_EQ(r.status, 200) << r.body;
    const json page = r.json();
    for (const json& job : page["hyperparameterTuningJobs"]) {
      EXPECT_TRUE(seen.insert(job["displayName"].get<std::string>()).second);
      EXPECT_FALSE(job.contains("trials")) << "lists leave the trials out";
    }
    token = page.value("nextPageToken", "");
    if (token.empty()) break;
  }
  EXPECT_EQ(seen, (std::set<std::string>{"hp_a", "hp_b", "hp_c"}));
  Reply filtered = Get(std::string(kHp) + "?filter=display_name%3D%22hp_b%22");
  ASSERT_EQ(filtered.status, 200) << filtered.body;
  ASSERT_EQ(filtered.json()["hyperparameterTuningJobs"].size(), 1u) << filtered.body;
  EXPECT_EQ(filtered.json()["hyperparameterTuningJobs"][0]["displayName"], "hp_b");
  const json customs = Get(kVertex).json();
  for (const json& job : customs["customJobs"]) {
    EXPECT_EQ(job["displayName"], "custom") << "a tuning job or trial listed as a custom job";
  }
  EXPECT_EQ(Get(std::string(kVertex) + "/" + ids[0]).status, 404);
  Reply one = Get(std::string(kHp) + "/" + ids[0]);
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_TRUE(one.json().contains("trials")) << one.body;
  Reply bad = Post(kHp, R"({"displayName": "x", "maxTrialCount": 2})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("studySpec"), std::string::npos) << bad.body;
}

}  // namespace
}  // namespace ty::api
