// Artifact Registry's repositories over real HTTP, as gcloud sends them (the real
// gcloud runs them in tests/integration/gcloud_test.cc).
#include "api/api_fixture.h"

namespace ty::api {
namespace {

using nlohmann::json;

class ApiArtifactsTest : public ApiFixture {};

constexpr char kRepos[] = "/v1/projects/p/locations/us-central1/repositories";

TEST_F(ApiArtifactsTest, CreateAnswersADoneOperationThenGetAndListShowIt) {
  Reply made = Post(std::string(kRepos) + "?repositoryId=flower-app&alt=json",
                    R"({"format":"DOCKER","description":"Flowers",)"
                    R"("name":"projects/p/locations/us-central1/repositories/flower-app"})");
  ASSERT_EQ(made.status, 200) << made.body;
  json op = made.json();
  EXPECT_TRUE(op["done"].get<bool>());
  EXPECT_EQ(op["name"].get<std::string>().rfind("projects/p/locations/us-central1/operations/", 0),
            0u);
  EXPECT_EQ(op["response"]["name"], "projects/p/locations/us-central1/repositories/flower-app");
  Reply got = Get(std::string(kRepos) + "/flower-app");
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.json()["format"], "DOCKER");
  EXPECT_EQ(got.json()["description"], "Flowers");
  EXPECT_EQ(got.json()["registryUri"], "us-central1-docker.pkg.dev/p/flower-app");
  Reply listed = Get(kRepos);
  ASSERT_EQ(listed.json()["repositories"].size(), 1u) << listed.body;
  EXPECT_EQ(Get("/v1beta2/projects/p/locations").json()["locations"][0]["locationId"],
            "us-central1");
  EXPECT_EQ(Get("/v1/projects/p/locations/europe-west4/repositories").json(), json::object());
}

TEST_F(ApiArtifactsTest, RefusalsNameTheField) {
  Reply bad_id = Post(std::string(kRepos) + "?repositoryId=Flower_App", "{}");
  EXPECT_EQ(bad_id.status, 400);
  EXPECT_NE(bad_id.body.find("repositoryId"), std::string::npos) << bad_id.body;
  Reply kms = Post(std::string(kRepos) + "?repositoryId=secret", R"({"kmsKeyName":"k"})");
  EXPECT_EQ(kms.status, 400);
  EXPECT_NE(kms.body.find("repository.kmsKeyName"), std::string::npos) << kms.body;
  ASSERT_EQ(Post(std::string(kRepos) + "?repositoryId=once", "{}").status, 200);
  EXPECT_EQ(Post(std::string(kRepos) + "?repositoryId=once", "{}").status, 409);
  EXPECT_EQ(Get(std::string(kRepos) + "/never").status, 404);
  EXPECT_EQ(Post(std::string(kRepos) + "?repositoryId=typed", R"({"labels":[1]})").status, 400);
}

}  // namespace
}  // namespace ty::api
