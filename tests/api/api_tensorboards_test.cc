// Vertex AI TensorBoard over real HTTP, as the Vertex SDK's REST transport sends it
// (the SDK itself runs in tests/clients/vertex_sdk_test.py).
#include "api/api_fixture.h"
#include "auth/tokens.h"

namespace ty::api {
namespace {

using nlohmann::json;

constexpr char kBoards[] = "/v1/projects/p/locations/us-central1/tensorboards";

class ApiTensorboardsTest : public ApiFixture {
 protected:
  // A tensorboard with experiment e, run r and time series "loss"; returns its path.
  std::string Board() {
    Reply made = Post(kBoards, R"({"displayName":"board","labels":{"team":"a"}})");
    EXPECT_EQ(made.status, 200) << made.body;
    const std::string tb = "/v1/" + made.json()["response"]["name"].get<std::string>();
    EXPECT_EQ(Post(tb + "/experiments?tensorboardExperimentId=e", "{}").status, 200);
    EXPECT_EQ(Post(tb + "/experiments/e/runs?tensorboardRunId=r", "{}").status, 200);
    Reply series = Post(tb + "/experiments/e/runs/r/timeSeries",
                        R"({"displayName":"loss","valueType":"SCALAR"})");
    EXPECT_EQ(series.status, 200) << series.body;
    return tb;
  }
};

TEST_F(ApiTensorboardsTest, CreateAnswersADoneOperationWithTheTensorboard) {
  Reply made = Post(kBoards, R"({"displayName":"board","description":"mine"})");
  ASSERT_EQ(made.status, 200) << made.body;
  json op = made.json();
  EXPECT_TRUE(op["done"].get<bool>());
  EXPECT_EQ(op["response"]["@type"], "type.googleapis.com/google.cloud.aiplatform.v1.Tensorboard");
  EXPECT_EQ(op["metadata"]["@type"],
            "type.googleapis.com/google.cloud.aiplatform.v1.CreateTensorboardOperationMetadata");
  const std::string name = op["response"]["name"];
  Reply got = Get("/v1/" + name);
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.json()["description"], "mine");
  EXPECT_EQ(Get(kBoards).json()["tensorboards"].size(), 1u);
  Reply patched =
      Send("PATCH", "/v1/" + name + "?updateMask=displayName", R"({"displayName":"b2"})");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(patched.json()["response"]["displayName"], "b2");
  EXPECT_EQ(Get("/v1/" + name).json()["description"], "mine");
  EXPECT_EQ(Send("DELETE", "/v1/" + name).status, 200);
  EXPECT_EQ(Get("/v1/" + name).status, 404);
}

TEST_F(ApiTensorboardsTest, PointsWrittenAreReadByStepAndInBatches) {
  const std::string tb = Board();
  const std::string run = tb + "/experiments/e/runs/r";
  Reply wrote = Post(run + ":write", R"({"timeSeriesData":[{"tensorboardTimeSeriesId":"1",
      "valueType":"SCALAR","values":[{"step":"1","wallTime":"2026-01-01T00:00:00Z",
      "scalar":{"value":0.5}},{"step":"2","scalar":{"value":0.25}},{"step":"3","scalar":{"value":0.125}}]}]})");
  ASSERT_EQ(wrote.status, 200) << wrote.body;
  Reply read = Get(run + "/timeSeries/1:read?filter=step%20%3E%3D%202%20AND%20step%20%3C%203");
  ASSERT_EQ(read.status, 200) << read.body;
  json values = read.json()["timeSeriesData"]["values"];
  ASSERT_EQ(values.size(), 1u) << read.body;
  EXPECT_EQ(values[0]["step"], "2");
  EXPECT_EQ(values[0]["scalar"]["value"], 0.25);
  // As gcloud passes its --filter: no spaces.
  Reply tight = Get(run + "/timeSeries/1:read?filter=step%3E1");
  EXPECT_EQ(tight.json()["timeSeriesData"]["values"].size(), 2u) << tight.body;
  const std::string series_name = tb.substr(4) + "/experiments/e/runs/r/timeSeries/1";
  Reply batch = Get(tb + ":batchRead?timeSeries=" + series_name);
  ASSERT_EQ(batch.status, 200) << batch.body;
  EXPECT_EQ(batch.json()["timeSeriesData"][0]["values"].size(), 3u);
  EXPECT_EQ(batch.json()["timeSeriesData"][0]["values"][0]["wallTime"], "2026-01-01T00:00:00Z");
  Reply listed = Get(run + "/timeSeries?$alt=json%3Benum-encoding%3Dint");
  EXPECT_EQ(listed.json()["tensorboardTimeSeries"][0]["valueType"], 1) << listed.body;
  EXPECT_EQ(listed.json()["tensorboardTimeSeries"][0]["metadata"]["maxStep"], "3");
}

TEST_F(ApiTensorboardsTest, RefusalsNameTheFieldAndChangeNothing) {
  const std::string tb = Board();
  EXPECT_EQ(Post(tb + "/experiments?tensorboardExperimentId=Bad_Id", "{}").status, 400);
  EXPECT_EQ(Post(tb + "/experiments?tensorboardExperimentId=e", "{}").status, 409);
  Reply bad_filter = Get(tb + "/experiments/e/runs/r/timeSeries/1:read?filter=value%3E1");
  EXPECT_EQ(bad_filter.status, 400);
  EXPECT_NE(bad_filter.body.find("\"filter\""), std::string::npos) << bad_filter.body;
  Reply not_points =
      Post(tb + "/experiments/e/runs/r:write",
           R"({"timeSeriesData":[{"tensorboardTimeSeriesId":"1","values":[{"step":"x"}]}]})");
  EXPECT_EQ(not_points.status, 400) << not_points.body;
  EXPECT_EQ(
      Post(tb + "/experiments/e/runs/r:write", R"({"timeSeriesData":[{"values":[]}]})").status,
      400);
  EXPECT_EQ(Post(tb + "/experiments/e/runs/r:write", R"({"timeSeriesData":7})").status, 400);
  EXPECT_EQ(Post(kBoards, R"({"displayName":["x"]})").status, 400);
  EXPECT_EQ(Post(kBoards, R"({})").status, 400);  // displayName is required.
  EXPECT_EQ(Get(tb + ":batchRead?timeSeries=projects/q/locations/l/tensorboards/1/experiments/e/"
                     "runs/r/timeSeries/1")
                .status,
            400);
  EXPECT_EQ(Get(tb + "/experiments/e/runs/r/timeSeries/1:read").json()["timeSeriesData"]["values"],
            json::array());
}

TEST_F(ApiTensorboardsTest, AnotherProjectsPathReachesNothing) {
  const std::string tb = Board();
  std::string other = tb;
  other.replace(other.find("/p/"), 3, "/q/");
  EXPECT_EQ(Get(other).status, 404);
  EXPECT_EQ(Get(other + "/experiments").status, 404);
  EXPECT_EQ(Get(other + "/experiments/e/runs/r/timeSeries/1:read").status, 404);
  EXPECT_EQ(Send("DELETE", other).status, 404);
  EXPECT_EQ(Get(tb).status, 200);
}

class ApiTensorboardsTokensTest : public ApiTensorboardsTest {
 protected:
  void ConfigureServer(ApiServer::Options* o) override {
    json tokens = json::array();
    for (auto [name, role, project] :
         {std::tuple{"alice", "editor", "p"}, std::tuple{"val", "viewer", "p"},
          std::tuple{"bob", "editor", "q"}}) {
      tokens.push_back({{"name", name},
                        {"sha256", auth::Sha256Hex(std::string("ty_") + name)},
                        {"role", role},
                        {"projects", {project}}});
    }
    tokens_ = std::move(auth::TokenTable::FromConfig(tokens).value());
    o->tokens = &tokens_;
  }
  Reply As(const std::string& who, const std::string& method, const std::string& path,
           std::optional<std::string> body = std::nullopt) {
    return Send(method, path, std::move(body), {"Authorization: Bearer ty_" + who});
  }
  auth::TokenTable tokens_;
};

TEST_F(ApiTensorboardsTokensTest, ViewersReadEditorsWriteOtherProjectsNeither) {
  Reply made = As("alice", "POST", kBoards, R"({"displayName":"board"})");
  ASSERT_EQ(made.status, 200) << made.body;
  const std::string tb = "/v1/" + made.json()["response"]["name"].get<std::string>();
  EXPECT_EQ(As("val", "GET", tb).status, 200);
  EXPECT_EQ(As("val", "POST", kBoards, R"({"displayName":"x"})").status, 403);
  EXPECT_EQ(As("val", "DELETE", tb).status, 403);
  EXPECT_EQ(As("bob", "GET", tb).status, 403);
  EXPECT_EQ(As("bob", "GET", kBoards).status, 403);
  EXPECT_EQ(Send("GET", tb).status, 401);
}

}  // namespace
}  // namespace ty::api
