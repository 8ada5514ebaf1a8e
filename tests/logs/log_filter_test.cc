// LogFilter: the Cloud Logging query language subset, on entries shaped as
// entries:list returns them (docs/contracts/cloud-logging-v2.md §3), including the exact
// filters gcloud's streamers send (§1.1, §5) and garbage.
#include "logs/log_filter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ty::logs {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

json Entry(const std::string& task, const std::string& time, const std::string& insert_id,
           const std::string& severity = "INFO", const std::string& text = "step 1") {
  return {{"logName", "projects/p/logs/" + task},
          {"resource",
           {{"type", "ml_job"},
            {"labels", {{"job_id", "my_job"}, {"task_name", task}, {"project_id", "p"}}}}},
          {"labels", {{"ml.googleapis.com/task_name", task}}},
          {"timestamp", time},
          {"receiveTimestamp", time},
          {"severity", severity},
          {"insertId", insert_id},
          {"textPayload", text}};
}

bool Match(const std::string& filter, const json& entry) {
  Result<LogFilter> f = LogFilter::Parse(filter);
  EXPECT_TRUE(f.ok()) << filter << ": " << f.status().ToString();
  return f.ok() && f->Matches(entry);
}

Status ParseError(const std::string& filter) { return LogFilter::Parse(filter).status(); }

const json kMaster = Entry("master-replica-0", "2024-05-01T09:59:53.250000000Z", "00000002");
const json kWorker =
    Entry("worker-replica-0", "2024-05-01T09:59:53.250000000Z", "00000003", "ERROR", "warn: slow");

TEST(LogFilterTest, EmptyMatchesEverything) {
  EXPECT_TRUE(Match("", kMaster));
  EXPECT_TRUE(Match("  -- only a comment\n", kMaster));
}

TEST(LogFilterTest, TheFiltersGcloudSends) {
  const std::string ml =
      "(resource.type=\"ml_job\" OR resource.type=\"cloudml_job\") AND "
      "resource.labels.job_id=\"my_job\" AND timestamp>=\"1970-01-01T01:00:00.000000000Z\" AND "
      "timestamp<\"2026-11-23T18:24:27.169698Z\"";
  EXPECT_TRUE(Match(ml, kMaster));
  EXPECT_FALSE(Match(ml + " AND resource.labels.task_name=\"chief\"", kMaster));
  // Poll 2 after a timestamp tie: only entries after (T, insertId).
  const std::string tie =
      "resource.type=\"ml_job\" AND ((timestamp=\"2024-05-01T09:59:53.250000000Z\" AND "
      "insertId>\"00000002\") OR timestamp>\"2024-05-01T09:59:53.250000000Z\")";
  EXPECT_FALSE(Match(tie, kMaster));
  EXPECT_TRUE(Match(tie, kWorker));
  const std::string task =
      "(resource.labels.task_name=\"worker-replica-0\" OR "
      "labels.task_name=\"worker-replica-0\")";
  EXPECT_TRUE(Match(task, kWorker));
  EXPECT_FALSE(Match(task, kMaster));
}

TEST(LogFilterTest, OrBindsTighterThanAnd) {
  // gcloud logging read joins without parentheses: `T AND a OR b` is `T AND (a OR b)`.
  const std::string f = "timestamp>=\"2030-01-01T00:00:00Z\" AND severity=ERROR OR severity=INFO";
  EXPECT_FALSE(Match(f, kMaster));
  EXPECT_FALSE(Match(f, kWorker));
  EXPECT_TRUE(Match("severity=WARNING OR severity=ERROR severity>=INFO", kWorker));
}

TEST(LogFilterTest, NotMinusAndImplicitAnd) {
  EXPECT_TRUE(Match("NOT severity=ERROR", kMaster));
  EXPECT_FALSE(Match("-severity=ERROR", kWorker));
  EXPECT_TRUE(
      Match("resource.type=ml_job -resource.labels.task_name=\"master-replica-0\"", kWorker));
  EXPECT_FALSE(Match("resource.type=ml_job\nresource.labels.task_name=\"chief\"", kWorker));
  // A missing field fails comparisons; its negation holds.
  EXPECT_FALSE(Match("labels.trial_id=\"1\"", kMaster));
  EXPECT_FALSE(Match("labels.trial_id!=\"1\"", kMaster));
  EXPECT_TRUE(Match("NOT labels.trial_id=\"1\"", kMaster));
}

TEST(LogFilterTest, SeverityByLevelNamesAnyCase) {
  EXPECT_TRUE(Match("severity>=WARNING", kWorker));
  EXPECT_FALSE(Match("severity>=warning", kMaster));
  EXPECT_TRUE(Match("severity<\"error\"", kMaster));
  EXPECT_TRUE(Match("severity=200", kMaster));
  EXPECT_EQ(ParseError("severity>=LOUD").code(), StatusCode::kInvalidArgument);
  // A level an int cannot hold is no level (casting it was undefined; the fuzzer's input).
  EXPECT_EQ(ParseError("severity>=55555555555555555555555555").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseError("severity<-1e300").code(), StatusCode::kInvalidArgument);
}

TEST(LogFilterTest, TimestampsAsInstants) {
  EXPECT_TRUE(Match("timestamp>\"2024-05-01T11:59:53+02:00\"", kMaster));
  EXPECT_TRUE(Match("timestamp=\"2024-05-01T09:59:53.25Z\"", kMaster));
  EXPECT_TRUE(Match("timestamp>=2024-05-01 timestamp<2024-05-02", kMaster));
  EXPECT_EQ(ParseError("timestamp>=\"yesterday\"").code(), StatusCode::kInvalidArgument);
}

TEST(LogFilterTest, StringsHasGroupsAndQuotedPaths) {
  EXPECT_TRUE(Match("textPayload:\"SLOW\"", kWorker));
  EXPECT_TRUE(Match("resource.labels.task_name=\"MASTER-replica-0\"", kMaster));
  EXPECT_TRUE(Match("resource.type=(\"cloudml_job\" OR \"ml_job\")", kMaster));
  EXPECT_FALSE(Match("textPayload:(\"warn\" AND \"fast\")", kWorker));
  EXPECT_TRUE(Match("labels.\"ml.googleapis.com/task_name\"=\"worker-replica-0\"", kWorker));
  EXPECT_TRUE(Match("labels.\"ml.googleapis.com/task_name\":*", kWorker));
  EXPECT_FALSE(Match("jsonPayload:*", kWorker));
  EXPECT_TRUE(Match("slow", kWorker));  // Global search.
  EXPECT_FALSE(Match("\"no such words\"", kWorker));
}

TEST(LogFilterTest, JsonPayloadFieldsAndNumbers) {
  json e = kMaster;
  e.erase("textPayload");
  e["jsonPayload"] = {{"message", "epoch done"}, {"metrics", {{"loss", 0.25}, {"epoch", 3}}}};
  EXPECT_TRUE(Match("jsonPayload.metrics.loss<0.5", e));
  EXPECT_TRUE(Match("jsonPayload.metrics.epoch>=3 AND jsonPayload.message:epoch", e));
  EXPECT_FALSE(Match("jsonPayload.metrics.epoch>10", e));
}

TEST(LogFilterTest, SyntaxErrorsNameLineColumnAndToken) {
  Status s = ParseError("resource.type=\"ml_job\" AND (severity=ERROR");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("Unparseable filter: syntax error at line 1, column 43, token '<EOF>'"));
  s = ParseError("severity=ERROR\nAND = 3");
  EXPECT_THAT(s.message(), HasSubstr("line 2, column 5, token '='"));
  EXPECT_THAT(ParseError("textPayload:\"unterminated").message(), HasSubstr("token '\"'"));
  EXPECT_THAT(ParseError("nosuchfield=1").message(), HasSubstr("unknown field 'nosuchfield'"));
  EXPECT_THAT(ParseError("textPayload=~\"a.*\"").message(), HasSubstr("not supported"));
}

TEST(LogFilterTest, GarbageIsAlwaysAnErrorOrAFilterNeverACrash) {
  const char* garbage[] = {"(((",
                           ")))",
                           "AND",
                           "OR OR",
                           "NOT",
                           "=",
                           "\"",
                           "a=",
                           "=b",
                           "a==b",
                           "severity>=",
                           "labels.",
                           "labels..x=1",
                           "()",
                           "-",
                           "--",
                           "!",
                           "~",
                           "a:(",
                           "a:(\"x\" OR)",
                           "timestamp<(\"2024-01-01\" AND)",
                           "\x01\x02\xff",
                           "textPayload:\"\\"};
  for (const char* g : garbage) {
    Result<LogFilter> f = LogFilter::Parse(g);
    if (f.ok()) f->Matches(kMaster);
    SUCCEED();
  }
  EXPECT_FALSE(LogFilter::Parse("(((").ok());
  EXPECT_FALSE(LogFilter::Parse(std::string(20001, 'a')).ok());
  EXPECT_FALSE(LogFilter::Parse(std::string(5000, '(')).ok());  // Too deep, not a stack overflow.
}

TEST(LogFilterTest, BoundsAndRequiredValuesForSkippingWork) {
  Result<LogFilter> f = LogFilter::Parse(
      "resource.labels.job_id=\"my_job\" AND ((timestamp=\"2024-05-01T09:59:53.25Z\" AND "
      "insertId>\"1\") OR timestamp>\"2024-05-01T09:59:53.25Z\") AND "
      "timestamp<\"2024-05-01T10:00:00Z\"");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->TimestampFloor(), ParseRfc3339("2024-05-01T09:59:53.25Z").value());
  EXPECT_EQ(f->TimestampCeiling(), ParseRfc3339("2024-05-01T10:00:00Z").value());
  EXPECT_EQ(f->RequiredValues("resource.labels.job_id"), std::set<std::string>{"my_job"});
  Result<LogFilter> any = LogFilter::Parse("resource.labels.job_id=\"a\" OR severity=ERROR");
  ASSERT_TRUE(any.ok());
  EXPECT_FALSE(any->RequiredValues("resource.labels.job_id").has_value());
  EXPECT_FALSE(any->TimestampFloor().has_value());
  Result<LogFilter> two = LogFilter::Parse("resource.labels.job_id=(\"a\" OR \"b\")");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->RequiredValues("resource.labels.job_id"), (std::set<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace ty::logs
