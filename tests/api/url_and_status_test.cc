// Pure helpers: URL decoding and the Status -> HTTP table.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/http_status.h"
#include "api/query.h"

namespace ty::api {
namespace {

TEST(QueryTest, PercentDecodingKeepsPlusAndBadEscapes) {
  EXPECT_EQ(PercentDecode("jobId%3Arec_train_*%20AND%20labels.team%3Dtrainyard"),
            "jobId:rec_train_* AND labels.team=trainyard");
  EXPECT_EQ(PercentDecode("a+b"), "a+b");
  EXPECT_EQ(PercentDecode("100%"), "100%");
  EXPECT_EQ(PercentDecode("%zz%4"), "%zz%4");
}

TEST(QueryTest, ParsesGapicAltParameter) {
  auto q = ParseQuery("$alt=json%3Benum-encoding=int&pageSize=2&flag");
  EXPECT_EQ(q["$alt"], "json;enum-encoding=int");
  EXPECT_EQ(q["pageSize"], "2");
  EXPECT_EQ(q["flag"], "");
  EXPECT_EQ(ParseQuery("%24alt=json%3Benum-encoding%3Dint")["$alt"], "json;enum-encoding=int");
}

TEST(QueryTest, SplitsAndDecodesSegments) {
  EXPECT_EQ(SplitPath("/v1/projects/p/jobs/x%3Acancel"),
            (std::vector<std::string>{"v1", "projects", "p", "jobs", "x:cancel"}));
  EXPECT_EQ(SplitPath("/"), std::vector<std::string>{});
}

TEST(HttpStatusTest, GoogleMapping) {
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kFailedPrecondition), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kOutOfRange), 400);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnauthenticated), 401);
  EXPECT_EQ(HttpStatusFor(StatusCode::kPermissionDenied), 403);
  EXPECT_EQ(HttpStatusFor(StatusCode::kNotFound), 404);
  EXPECT_EQ(HttpStatusFor(StatusCode::kAlreadyExists), 409);
  EXPECT_EQ(HttpStatusFor(StatusCode::kAborted), 409);
  EXPECT_EQ(HttpStatusFor(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(HttpStatusFor(StatusCode::kCancelled), 499);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnknown), 500);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInternal), 500);
  EXPECT_EQ(HttpStatusFor(StatusCode::kDataLoss), 500);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnimplemented), 501);
  EXPECT_EQ(HttpStatusFor(StatusCode::kUnavailable), 503);
  EXPECT_EQ(HttpStatusFor(StatusCode::kDeadlineExceeded), 504);
}

TEST(HttpStatusTest, ErrorEnvelopeWithFieldViolation) {
  HttpResponse r = ErrorResponse(FieldError("trainingInput.workerCount", "must be > 0"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.content_type, "application/json; charset=UTF-8");
  auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["error"]["code"], 400);
  EXPECT_EQ(body["error"]["status"], "INVALID_ARGUMENT");
  EXPECT_EQ(body["error"]["message"], "Field: trainingInput.workerCount Error: must be > 0");
  auto& v = body["error"]["details"][0];
  EXPECT_EQ(v["@type"], "type.googleapis.com/google.rpc.BadRequest");
  EXPECT_EQ(v["fieldViolations"][0]["field"], "trainingInput.workerCount");
  EXPECT_EQ(v["fieldViolations"][0]["description"], "must be > 0");
}

TEST(HttpStatusTest, PlainErrorHasNoDetails) {
  auto body = nlohmann::json::parse(ErrorResponse(NotFound("gone")).body);
  EXPECT_FALSE(body["error"].contains("details"));
  EXPECT_EQ(body["error"]["code"], 404);
}

TEST(HttpStatusTest, InvalidUtf8IsReplacedNotThrown) {
  HttpResponse r = JsonResponse({{"message", std::string("bad \xff byte")}});
  EXPECT_NE(r.body.find("bad"), std::string::npos);
}

}  // namespace
}  // namespace ty::api
