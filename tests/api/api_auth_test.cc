// Tokens and roles on the wire (api/access.h, auth/tokens.h): the matrix of no token,
// an unknown token, another project's token, a viewer, an editor and an admin over both
// job dialects, tuning jobs, Cloud Logging and Cloud Storage. The real gcloud with a
// token: tests/integration/gcloud_test.cc.
#include <gmock/gmock.h>

#include <filesystem>

#include "api/access.h"
#include "api/api_fixture.h"
#include "api/query.h"

namespace ty::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kA[] = "/v1/projects/tenant-a/locations/us-central1/customJobs";
constexpr char kHpA[] = "/v1/projects/tenant-a/locations/us-central1/hyperparameterTuningJobs";
constexpr char kMlA[] = "/v1/projects/tenant-a/jobs";

std::string SecretVertexBody() {
  return R"({"displayName": "secret", "jobSpec": {"workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri": "localhost/img:1",
                         "env": [{"name": "AWS_SECRET", "value": "hunter2"}]}}]}})";
}

class ApiAuthTest : public ApiFixture {
 protected:
  void ConfigureServer(ApiServer::Options* o) override {
    json tokens = json::array();
    for (auto [name, role, project] :
         {std::tuple{"root", "admin", "*"}, std::tuple{"alice", "editor", "tenant-a"},
          std::tuple{"val", "viewer", "tenant-a"}, std::tuple{"bob", "editor", "tenant-b"}}) {
      tokens.push_back({{"name", name},
                        {"sha256", auth::Sha256Hex(std::string("ty_") + name)},
                        {"role", role},
                        {"projects", {project}}});
    }
    auto table = auth::TokenTable::FromConfig(tokens);
    ASSERT_TRUE(table.ok()) << table.status().ToString();
    tokens_ = std::move(table).value();
    o->tokens = &tokens_;
  }

  // A request as `who` ("" = no Authorization header).
  Reply As(const std::string& who, const std::string& method, const std::string& path,
           std::optional<std::string> body = std::nullopt, std::vector<std::string> headers = {}) {
    if (!who.empty()) headers.push_back("Authorization: Bearer ty_" + who);
    return Send(method, path, std::move(body), headers);
  }

  // alice's job in tenant-a, with a secret in its env; returns its id.
  std::string AlicesJob() {
    Reply r = As("alice", "POST", kA, SecretVertexBody());
    EXPECT_EQ(r.status, 200) << r.body;
    std::string name = r.json().value("name", "");
    return name.substr(name.rfind('/') + 1);
  }

  auth::TokenTable tokens_;
};

TEST_F(ApiAuthTest, NoTokenOrAnUnknownOneIs401WithGooglesShape) {
  for (const std::string& who : {std::string(), std::string("mallory")}) {
    Reply r = As(who, "GET", kA);
    EXPECT_EQ(r.status, 401) << who;
    EXPECT_EQ(r.json()["error"]["status"], "UNAUTHENTICATED") << r.body;
    EXPECT_EQ(r.headers["www-authenticate"], "Bearer realm=\"trainyard\"");
    EXPECT_EQ(As(who, "POST", kA, SecretVertexBody()).status, 401);
    EXPECT_EQ(As(who, "GET", "/metrics").status, 401);
    EXPECT_EQ(
        As(who, "POST", "/v2/entries:list", R"({"resourceNames":["projects/tenant-a"]})").status,
        401);
    Reply storage = As(who, "GET", "/storage/v1/b?project=tenant-a");
    EXPECT_EQ(storage.status, 401);
    EXPECT_EQ(storage.json()["error"]["errors"][0]["reason"], "required") << storage.body;
    EXPECT_EQ(As(who, "GET", "/no/such/path").status, 401);
  }
  // A token in the query or a Basic header is not a bearer token.
  EXPECT_EQ(Send("GET", std::string(kA) + "?access_token=ty_root").status, 401);
  EXPECT_EQ(Send("GET", kA, std::nullopt, {"Authorization: Basic dHlfcm9vdDo="}).status, 401);
  // Health is for load balancers: "ok", nothing more, without a token.
  Reply health = As("", "GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.json(), json({{"status", "ok"}}));
  // The registry's HTTPS authority is public too: here there is none, which says so.
  Reply ca = As("", "GET", "/registry/ca.crt");
  EXPECT_EQ(ca.status, 404) << ca.body;
  EXPECT_NE(ca.body.find("serves no HTTPS registry"), std::string::npos) << ca.body;
  // Artifact Registry's repositories are a project's like its jobs.
  EXPECT_EQ(As("", "POST",
               "/v1/projects/tenant-a/locations/us-central1/repositories"
               "?repositoryId=r",
               "{}")
                .status,
            401);
  // The discovery document is public, as Google's is; what it describes is not.
  EXPECT_EQ(As("", "GET", "/discovery/v1/apis/ml/v1/rest").status, 200);
}

TEST_F(ApiAuthTest, AnotherProjectsTokenSeesNoJobAndNoContent) {
  const std::string id = AlicesJob();
  const std::string job = std::string(kA) + "/" + id;
  for (auto [method, path, body] :
       {std::tuple<std::string, std::string, std::optional<std::string>>{"GET", job, {}},
        {"GET", kA, {}},
        {"GET", job + "/logs", {}},
        {"GET", job + "/details", {}},
        {"POST", job + ":cancel", "{}"},
        {"DELETE", job, {}},
        {"POST", kA, SecretVertexBody()},
        {"GET", "/v1/projects/tenant-a/locations/us-central1/operations/1", {}},
        {"GET", "/ui/projects/tenant-a/locations/us-central1/operations/1", {}},
        {"GET", kMlA, {}},
        {"POST", kMlA, MlBody("bobs_job")},
        {"GET", kHpA, {}}}) {
    Reply r = As("bob", method, path, body);
    EXPECT_EQ(r.status, 403) << method << " " << path << ": " << r.body;
    EXPECT_EQ(r.json()["error"]["status"], "PERMISSION_DENIED") << r.body;
    EXPECT_THAT(r.body, Not(HasSubstr("hunter2")));
    EXPECT_THAT(r.body, HasSubstr("\\\"bob\\\" needs the"));
  }
  EXPECT_EQ(As("bob", "GET", "/v1/projects/tenant-b/locations/us-central1/customJobs").status, 200);
  Reply still = As("alice", "GET", job);
  EXPECT_EQ(still.status, 200);
  EXPECT_THAT(std::string(still.json()["state"]), Not(HasSubstr("CANCEL"))) << still.body;
}

TEST_F(ApiAuthTest, ViewersReadEditorsWriteInBothDialectsAndTuning) {
  const std::string job = std::string(kA) + "/" + AlicesJob();
  ASSERT_EQ(As("alice", "POST", kMlA, MlBody("ml_one")).status, 200);
  Reply hp = As("alice", "POST", kHpA, HpBody("hp"));
  ASSERT_EQ(hp.status, 200) << hp.body;
  const std::string study = hp.json()["name"];
  // A viewer reads everything of its project.
  for (const std::string& path : {job, std::string(kA), std::string(kMlA) + "/ml_one",
                                  std::string(kMlA), "/" + std::string("v1/") + study}) {
    EXPECT_EQ(As("val", "GET", path).status, 200) << path;
  }
  // And changes nothing.
  EXPECT_EQ(As("val", "POST", job + ":cancel", "{}").status, 403);
  EXPECT_EQ(As("val", "POST", std::string(kMlA) + "/ml_one:cancel", "{}").status, 403);
  EXPECT_EQ(As("val", "POST", "/v1/" + study + ":cancel", "{}").status, 403);
  EXPECT_EQ(As("val", "POST", kA, SecretVertexBody()).status, 403);
  EXPECT_EQ(As("val", "POST", kHpA, HpBody("hp")).status, 403);
  EXPECT_EQ(As("val", "DELETE", job).status, 403);
  // The editor cancels; an admin of every project reads it and /metrics.
  EXPECT_EQ(As("alice", "POST", job + ":cancel", "{}").status, 200);
  EXPECT_EQ(As("alice", "POST", std::string(kMlA) + "/ml_one:cancel", "{}").status, 200);
  EXPECT_EQ(As("alice", "GET", "/metrics").status, 403);
  EXPECT_EQ(As("root", "GET", "/metrics").status, 200);
  EXPECT_EQ(As("root", "GET", job).status, 200);
  // Artifact Registry's repositories: the editor creates, the viewer reads, bob (another
  // project's) neither.
  const std::string repos = "/v1/projects/tenant-a/locations/us-central1/repositories";
  EXPECT_EQ(As("val", "POST", repos + "?repositoryId=r", "{}").status, 403);
  EXPECT_EQ(As("alice", "POST", repos + "?repositoryId=r", "{}").status, 200);
  EXPECT_EQ(As("val", "GET", repos + "/r").status, 200);
  EXPECT_EQ(As("bob", "GET", repos + "/r").status, 403);
}

TEST_F(ApiAuthTest, LoggingNeedsAViewerOfEveryProjectNamed) {
  AlicesJob();
  auto list = [&](const std::string& who, const json& body) {
    return As(who, "POST", "/v2/entries:list", body.dump());
  };
  EXPECT_EQ(list("val", {{"resourceNames", {"projects/tenant-a"}}}).status, 200);
  EXPECT_EQ(list("bob", {{"resourceNames", {"projects/tenant-a"}}}).status, 403);
  EXPECT_EQ(list("bob", {{"projectIds", {"tenant-a"}}}).status, 403);
  EXPECT_EQ(list("bob", {{"resourceNames", {"projects/tenant-b", "projects/tenant-a"}}}).status,
            403);
  EXPECT_EQ(list("bob", {{"resourceNames", {"projects/tenant-b"}}}).status, 200);
  EXPECT_EQ(list("bob", {{"resourceNames", {"organizations/1"}}}).status, 403);
  EXPECT_EQ(list("bob", json::object()).status, 403);
  EXPECT_EQ(As("bob", "GET", "/v2/entries:list?resourceNames=projects/tenant-a").status, 403);
  EXPECT_EQ(As("val", "GET", "/v2/entries:list?resourceNames=projects/tenant-a").status, 200);
  EXPECT_EQ(list("root", {{"resourceNames", {"projects/tenant-a"}}}).status, 200);
}

TEST_F(ApiAuthTest, BucketsBelongToTheirProjectsRoles) {
  ASSERT_EQ(As("alice", "POST", "/storage/v1/b?project=tenant-a", R"({"name":"a-data"})").status,
            200);
  EXPECT_EQ(As("bob", "POST", "/storage/v1/b?project=tenant-a", R"({"name":"b-try"})").status, 403);
  const std::string upload = "/upload/storage/v1/b/a-data/o?uploadType=media&name=model.txt";
  ASSERT_EQ(As("alice", "POST", upload, "weights", {"Content-Type: text/plain"}).status, 200);
  const std::string object = "/storage/v1/b/a-data/o/model.txt";
  // The viewer reads, by every read path; bob by none.
  for (const std::string& path :
       {object, object + "?alt=media", std::string("/download/storage/v1/b/a-data/o/model.txt"),
        std::string("/a-data/model.txt"), std::string("/storage/v1/b/a-data/o"),
        std::string("/b/a-data/o/model.txt"), std::string("/storage/v1/b?project=tenant-a")}) {
    EXPECT_EQ(As("val", "GET", path).status, 200) << path;
    Reply r = As("bob", "GET", path);
    EXPECT_EQ(r.status, 403) << path << ": " << r.body;
    EXPECT_THAT(r.body, Not(HasSubstr("weights")));
  }
  // Writes need an editor of the owner: uploads (media, resumable), deletes, copies.
  EXPECT_EQ(As("val", "POST", upload, "x", {"Content-Type: text/plain"}).status, 403);
  EXPECT_EQ(As("bob", "POST", upload, "x", {"Content-Type: text/plain"}).status, 403);
  EXPECT_EQ(As("bob", "POST", "/upload/storage/v1/b/a-data/o?uploadType=resumable&name=r.txt", "{}")
                .status,
            403);
  EXPECT_EQ(As("bob", "DELETE", object).status, 403);
  EXPECT_EQ(As("val", "DELETE", object).status, 403);
  ASSERT_EQ(As("bob", "POST", "/storage/v1/b?project=tenant-b", R"({"name":"b-data"})").status,
            200);
  EXPECT_EQ(As("bob", "POST", object + "/rewriteTo/b/b-data/o/stolen.txt", "{}").status, 403);
  EXPECT_EQ(As("bob", "POST", object + "/copyTo/b/b-data/o/stolen.txt", "{}").status, 403);
  EXPECT_EQ(As("alice", "POST", object + "/copyTo/b/b-data/o/gift.txt", "{}").status, 403);
  // Listing buckets: a project's, never all of them but for an admin.
  Reply bobs = As("bob", "GET", "/storage/v1/b?project=tenant-b");
  EXPECT_EQ(bobs.status, 200);
  EXPECT_THAT(bobs.body, Not(HasSubstr("a-data")));
  EXPECT_EQ(As("bob", "GET", "/storage/v1/b").status, 403);
  EXPECT_EQ(As("root", "GET", "/storage/v1/b").status, 200);
  EXPECT_EQ(As("alice", "DELETE", object).status, 204);
}

TEST_F(ApiAuthTest, ABucketNoProjectOwnsIsForAdmins) {
  std::filesystem::create_directories(dir_ / "buckets" / "loose-bucket");
  EXPECT_EQ(As("alice", "GET", "/storage/v1/b/loose-bucket/o").status, 403);
  EXPECT_EQ(As("root", "GET", "/storage/v1/b/loose-bucket/o").status, 200);
  // A bucket that does not exist is a 404 for anyone with a token (as Google answers).
  EXPECT_EQ(As("alice", "GET", "/storage/v1/b/no-such-bucket/o").status, 404);
}

TEST_F(ApiAuthTest, ARefusedUploadNeverReachesTheDisk) {
  ASSERT_EQ(As("alice", "POST", "/storage/v1/b?project=tenant-a", R"({"name":"a-data"})").status,
            200);
  const std::string big(8 << 20, 'x');  // Above the 4 MiB in-memory body limit.
  Reply r = As("bob", "POST", "/upload/storage/v1/b/a-data/o?uploadType=media&name=big", big,
               {"Content-Type: application/octet-stream"});
  EXPECT_TRUE(r.status == 403 || r.status == 413) << r.status;
  size_t staged = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ / "storage")) {
    if (e.is_regular_file() && e.file_size() > 0 &&
        e.path().string().find("staging") != std::string::npos) {
      ++staged;
    }
  }
  EXPECT_EQ(staged, 0u);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "buckets" / "a-data" / "big"));
}

// A Vertex job of `project`'s whose output goes to gs://BUCKET/out; returns the status.
// (The job's buckets are claimed at submit: tests/api/api_fixture.h wires it.)
std::string JobWritingTo(const std::string& bucket) {
  return R"({"displayName": "out", "jobSpec": {"baseOutputDirectory": {"outputUriPrefix": "gs://)" +
         bucket + R"(/out"}, "workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri": "localhost/img:1"}}]}})";
}

// Issue 30 item 1: a bucket no project owns (an admin's, or older than the owners
// file) is taken by no job; only an admin gives it to a project. Failed on 3c2a683:
// bob's job claimed legacy-data (200) and bob then read the file.
TEST_F(ApiAuthTest, AJobNeverTakesABucketOfNoProject) {
  ASSERT_EQ(As("root", "POST", "/storage/v1/b", R"({"name":"legacy-data"})").status, 200);
  ASSERT_EQ(As("root", "POST", "/upload/storage/v1/b/legacy-data/o?uploadType=media&name=f.txt",
               "old secret", {"Content-Type: text/plain"})
                .status,
            200);
  const std::string object = "/storage/v1/b/legacy-data/o/f.txt?alt=media";
  EXPECT_EQ(As("bob", "GET", object).status, 403);
  // Every field of a job that names a bucket: Vertex output, ml jobDir, packages.
  Reply vertex = As("bob", "POST", "/v1/projects/tenant-b/locations/us-central1/customJobs",
                    JobWritingTo("legacy-data"));
  EXPECT_EQ(vertex.status, 403) << vertex.body;
  EXPECT_THAT(vertex.body, HasSubstr("trainyard buckets assign legacy-data"));
  const std::string ml_dir = R"({"jobId": "j1", "trainingInput": {"region": "us-central1",
      "jobDir": "gs://legacy-data/x", "masterConfig": {"imageUri": "localhost/img:1"}}})";
  EXPECT_EQ(As("bob", "POST", "/v1/projects/tenant-b/jobs", ml_dir).status, 403);
  const std::string ml_pkg = R"({"jobId": "j2", "trainingInput": {"region": "us-central1",
      "packageUris": ["gs://legacy-data/p-0.1.tar.gz"], "pythonModule": "p.task",
      "runtimeVersion": "2.11", "pythonVersion": "3.7"}})";
  EXPECT_EQ(As("bob", "POST", "/v1/projects/tenant-b/jobs", ml_pkg).status, 403);
  EXPECT_EQ(As("bob", "GET", object).status, 403) << "no submit took it";
  EXPECT_EQ(As("bob", "DELETE", "/storage/v1/b/legacy-data/o/f.txt").status, 403);
  // Only an admin gives it away (`trainyard buckets assign`).
  EXPECT_EQ(As("bob", "PATCH", "/storage/v1/b/legacy-data?project=tenant-b", "{}").status, 403);
  EXPECT_EQ(As("alice", "PATCH", "/storage/v1/b/legacy-data?project=tenant-a", "{}").status, 403);
  EXPECT_EQ(As("root", "PATCH", "/storage/v1/b/legacy-data?project=..", "{}").status, 400);
  ASSERT_EQ(As("root", "PATCH", "/storage/v1/b/legacy-data?project=tenant-b", "{}").status, 200);
  Reply read = As("bob", "GET", object);
  EXPECT_EQ(read.status, 200);
  EXPECT_EQ(read.body, "old secret");
  EXPECT_EQ(As("bob", "POST", "/v1/projects/tenant-b/locations/us-central1/customJobs",
               JobWritingTo("legacy-data"))
                .status,
            200);
  EXPECT_EQ(As("alice", "GET", object).status, 403);
}

// A name no one holds yet is made for the first project that names it, by a job or an
// insert; after that it is that project's, and another project's insert is Cloud
// Storage's 409 (names are one namespace) and its job a 403.
TEST_F(ApiAuthTest, ABucketExistsFromItsFirstClaimAndIsThatProjectsOnly) {
  ASSERT_EQ(As("bob", "POST", "/v1/projects/tenant-b/locations/us-central1/customJobs",
               JobWritingTo("proj-a-models"))
                .status,
            200);
  EXPECT_TRUE(std::filesystem::is_directory(dir_ / "buckets" / "proj-a-models"));
  EXPECT_EQ(As("bob", "GET", "/storage/v1/b/proj-a-models").status, 200);
  Reply insert =
      As("alice", "POST", "/storage/v1/b?project=tenant-a", R"({"name":"proj-a-models"})");
  EXPECT_EQ(insert.status, 409) << insert.body;
  EXPECT_EQ(As("alice", "POST", "/v1/projects/tenant-a/locations/us-central1/customJobs",
               JobWritingTo("proj-a-models"))
                .status,
            403);
  Reply again = As("bob", "POST", "/storage/v1/b?project=tenant-b", R"({"name":"proj-a-models"})");
  EXPECT_EQ(again.status, 409);
  EXPECT_THAT(again.body, HasSubstr("already own it"));
  // A directory found on disk is no project's, whatever its name says.
  std::filesystem::create_directories(dir_ / "buckets" / "found-on-disk");
  EXPECT_EQ(
      As("alice", "POST", "/storage/v1/b?project=tenant-a", R"({"name":"found-on-disk"})").status,
      409);
  EXPECT_EQ(As("alice", "POST", "/v1/projects/tenant-a/locations/us-central1/customJobs",
               JobWritingTo("found-on-disk"))
                .status,
            403);
  Reply listed = As("alice", "GET", "/storage/v1/b?project=tenant-a");
  EXPECT_THAT(listed.body, Not(HasSubstr("found-on-disk")));
  EXPECT_THAT(As("root", "GET", "/storage/v1/b").body, HasSubstr("found-on-disk"));
}

// Issue 30 item 4: a resumable session is written only through its own bucket's URL,
// so the gate's check of the URL's bucket is a check of the session's. Failed on
// 3c2a683: bob (through his own bucket) and a viewer (through a bucket that does not
// exist) both wrote alice's object.
TEST_F(ApiAuthTest, AnUploadSessionIsWrittenOnlyThroughItsOwnBucket) {
  ASSERT_EQ(As("alice", "POST", "/storage/v1/b?project=tenant-a", R"({"name":"a-data"})").status,
            200);
  ASSERT_EQ(As("bob", "POST", "/storage/v1/b?project=tenant-b", R"({"name":"b-data"})").status,
            200);
  Reply start =
      As("alice", "POST", "/upload/storage/v1/b/a-data/o?uploadType=resumable&name=m", "{}");
  ASSERT_EQ(start.status, 200) << start.body;
  const std::string location = start.headers["location"];
  const std::string id = location.substr(location.find("upload_id=") + 10);
  ASSERT_FALSE(id.empty());
  for (auto [who, bucket] : {std::pair{"bob", "b-data"}, std::pair{"val", "no-such-bucket"},
                             std::pair{"bob", "no-such-bucket"}}) {
    const std::string url =
        std::string("/upload/storage/v1/b/") + bucket + "/o?uploadType=resumable&upload_id=" + id;
    Reply put = As(who, "PUT", url, "planted", {"Content-Type: application/octet-stream"});
    EXPECT_EQ(put.status, 404) << who << " via " << bucket << ": " << put.body;
    EXPECT_EQ(As(who, "DELETE", url).status, 404) << who << " via " << bucket;
  }
  // Through its own bucket, the session is alice's to write, not the viewer's.
  const std::string own = "/upload/storage/v1/b/a-data/o?uploadType=resumable&upload_id=" + id;
  EXPECT_EQ(As("val", "PUT", own, "planted", {"Content-Type: application/octet-stream"}).status,
            403);
  ASSERT_EQ(As("alice", "PUT", own, "weights", {"Content-Type: application/octet-stream"}).status,
            200);
  EXPECT_EQ(As("alice", "GET", "/storage/v1/b/a-data/o/m?alt=media").body, "weights");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "buckets" / "b-data" / "m"));
}

// The needs of each route, without a server (api/access.h).
TEST(AccessNeedsTest, EachRouteNeedsItsProjectAndRole) {
  auto owner = [](const std::string& b) -> std::optional<std::string> {
    if (b == "a-data") return "tenant-a";
    if (b == "loose") return "";
    return std::nullopt;
  };
  auto needs = [&](const std::string& method, const std::string& path,
                   const std::string& body = "") {
    HttpRequest r;
    r.method = method;
    size_t q = path.find('?');
    r.path = path.substr(0, q);
    if (q != std::string::npos) r.query = ParseQuery(path.substr(q + 1));
    r.body = body;
    const RouteMatch match =
        ServiceRoutes().Match(r.method, r.path, [&](const std::string& b) { return !!owner(b); });
    std::string out;
    for (const auth::Need& n : NeedsOf(match, r, owner)) {
      out += (out.empty() ? "" : " ") + n.project + ":" + auth::RoleName(n.role);
    }
    return out;
  };
  EXPECT_EQ(needs("GET", "/v1/projects/p/jobs/x"), "p:viewer");
  EXPECT_EQ(needs("POST", "/v1/projects/p/jobs/x%3Acancel"), "p:editor");
  EXPECT_EQ(needs("GET", "/v1/projects/..%2fq/jobs"), "../q:viewer");
  EXPECT_EQ(needs("GET", "/metrics"), ":admin");
  EXPECT_EQ(needs("GET", "/"), ":admin");
  EXPECT_EQ(needs("GET", "/storage/v1/b/a-data/o/x"), "tenant-a:viewer");
  EXPECT_EQ(needs("PATCH", "/storage/v1/b/a-data/o/x"), "tenant-a:editor");
  EXPECT_EQ(needs("GET", "/storage/v1/b/loose/o"), ":admin");
  EXPECT_EQ(needs("GET", "/storage/v1/b/missing/o"), "");
  EXPECT_EQ(needs("POST", "/storage/v1/b/a-data/o/x/rewriteTo/b/loose/o/y"),
            "tenant-a:viewer :admin");
  EXPECT_EQ(needs("PUT", "/resumable/upload/storage/v1/b/a-data/o?upload_id=1"), "tenant-a:editor");
  EXPECT_EQ(needs("GET", "/download/storage/v1/b/a-data/o/x"), "tenant-a:viewer");
  EXPECT_EQ(needs("GET", "/a-data/x"), "tenant-a:viewer");
  EXPECT_EQ(needs("POST", "/storage/v1/b?project=p"), "p:editor");
  EXPECT_EQ(needs("PATCH", "/storage/v1/b/a-data?project=p"), ":admin");
  EXPECT_EQ(needs("PATCH", "/storage/v1/b/loose?project=p"), ":admin");
  EXPECT_EQ(needs("PATCH", "/storage/v1/b/a-data"), "tenant-a:editor");
  EXPECT_EQ(needs("POST", "/v2/entries:list", R"({"resourceNames":["projects/p"]})"), "p:viewer");
  EXPECT_EQ(needs("POST", "/v2/entries:list", R"({"resourceNames":"projects/p"})"), ":admin");
  EXPECT_EQ(needs("POST", "/v2/entries:list", "not json"), "");  // The route answers 400.
}

}  // namespace
}  // namespace ty::api
