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
    std::string out;
    for (const auth::Need& n : NeedsOf(r, owner)) {
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
  EXPECT_EQ(needs("POST", "/v2/entries:list", R"({"resourceNames":["projects/p"]})"), "p:viewer");
  EXPECT_EQ(needs("POST", "/v2/entries:list", R"({"resourceNames":"projects/p"})"), ":admin");
  EXPECT_EQ(needs("POST", "/v2/entries:list", "not json"), "");  // The route answers 400.
}

}  // namespace
}  // namespace ty::api
