// Output formats of the CLI (docs/contracts/gcloud-cli.md §2, §8): log lines of both dialects,
// the ml list table, error lines and resource printing. TZ is pinned per test.
#include "cli/output.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <optional>

namespace ty::cli {
namespace {

using nlohmann::json;

class OutputTest : public ::testing::Test {
 protected:
  void SetUp() override { SetTz("UTC"); }
  void TearDown() override { SetTz("UTC"); }
  static void SetTz(const char* tz) {
    setenv("TZ", tz, 1);
    tzset();
  }
};

TEST_F(OutputTest, VertexLogLine) {
  json rec = {{"timestamp", "2024-03-01T12:34:56.789Z"},
              {"taskName", "workerpool0-0"},
              {"stream", "stdout"},
              {"severity", "INFO"},
              {"message", "hello"},
              {"cursor", "42"}};
  EXPECT_EQ(FormatLogRecord(rec, LogDialect::kVertex, false),
            "INFO\t2024-03-01 12:34:56 +0000\tworkerpool0-0\thello\n");
}

TEST_F(OutputTest, MlLogLineHasAnEmptyTrialColumn) {
  json rec = {{"timestamp", "2024-03-01T12:34:56Z"},
              {"taskName", "master-replica-0"},
              {"severity", "ERROR"},
              {"message", "boom"}};
  EXPECT_EQ(FormatLogRecord(rec, LogDialect::kMl, false),
            "ERROR\t2024-03-01 12:34:56 +0000\tmaster-replica-0\t\tboom\n");
}

TEST_F(OutputTest, LocalTimeZoneIsUsed) {
  SetTz("EST5");  // Fixed -0500, no DST rules needed.
  json rec = {{"timestamp", "2018-11-12T06:01:25Z"},
              {"taskName", "service"},
              {"severity", "INFO"},
              {"message", "Job is queued."}};
  EXPECT_EQ(FormatLogRecord(rec, LogDialect::kMl, false),
            "INFO\t2018-11-12 01:01:25 -0500\tservice\t\tJob is queued.\n");
}

TEST_F(OutputTest, MissingSeverityAndTaskUseGcloudDefaults) {
  json rec = {{"timestamp", "2024-03-01T00:00:00Z"}, {"message", "x"}};
  EXPECT_EQ(FormatLogRecord(rec, LogDialect::kVertex, false),
            "DEFAULT\t2024-03-01 00:00:00 +0000\tunknown_task\tx\n");
}

TEST_F(OutputTest, MultilineMessagesAreSplitUnlessAllowed) {
  json rec = {{"timestamp", "2024-03-01T00:00:00Z"},
              {"taskName", "t"},
              {"severity", "ERROR"},
              {"message", "Traceback:\n  line 1\n"}};
  EXPECT_EQ(FormatLogRecord(rec, LogDialect::kVertex, false),
            "ERROR\t2024-03-01 00:00:00 +0000\tt\tTraceback:\n"
            "ERROR\t2024-03-01 00:00:00 +0000\tt\t  line 1\n");
  EXPECT_EQ(FormatLogRecord(rec, LogDialect::kVertex, true),
            "ERROR\t2024-03-01 00:00:00 +0000\tt\tTraceback:\n  line 1\n");
}

TEST_F(OutputTest, MlJobTable) {
  std::vector<json> jobs = {
      {{"jobId", "census_1"}, {"state", "SUCCEEDED"}, {"createTime", "2024-03-01T10:00:00Z"}},
      {{"jobId", "a"}, {"state", "RUNNING"}, {"createTime", "2024-03-02T11:30:05.5Z"}},
  };
  EXPECT_EQ(FormatMlJobTable(jobs),
            "JOB_ID    STATUS     CREATED\n"
            "census_1  SUCCEEDED  2024-03-01T10:00:00\n"
            "a         RUNNING    2024-03-02T11:30:05\n");
  EXPECT_EQ(FormatMlJobTable({}), "");
}

TEST_F(OutputTest, CommandErrorLine) {
  EXPECT_EQ(FormatCommandError("trainyard.ai.custom-jobs.describe", "Job not found."),
            "ERROR: (trainyard.ai.custom-jobs.describe) Job not found.\n");
}

TEST_F(OutputTest, ServerErrorMessage) {
  EXPECT_EQ(ServerErrorMessage(404, R"({"error": {"code": 404, "message": "CustomJob 7 not found.",
                                                  "status": "NOT_FOUND"}})"),
            "CustomJob 7 not found.");
  EXPECT_EQ(ServerErrorMessage(502, "Bad Gateway"), "HTTP 502: Bad Gateway");
  EXPECT_EQ(ServerErrorMessage(500, ""), "HTTP 500");
}

TEST_F(OutputTest, YamlProjectionKeepsOrderAndQuotesTimes) {
  json job = {{"state", "SUCCEEDED"},
              {"jobId", "j1"},
              {"startTime", "2024-03-01T10:00:00Z"},
              {"trainingInput", {{"region", "x"}}}};
  EXPECT_EQ(FormatYamlProjection(job, {"jobId", "state", "startTime", "endTime"}),
            "jobId: j1\nstate: SUCCEEDED\nstartTime: '2024-03-01T10:00:00Z'\n");
}

TEST_F(OutputTest, ResourcesAsJsonAndYaml) {
  json job = {{"name", "projects/p/locations/l/customJobs/1"}, {"state", "JOB_STATE_SUCCEEDED"}};
  EXPECT_EQ(json::parse(FormatResource(job, OutputFormat::kJson)), job);
  std::string yaml = FormatResource(job, OutputFormat::kYaml);
  EXPECT_NE(yaml.find("state: JOB_STATE_SUCCEEDED\n"), std::string::npos) << yaml;
  std::string list = FormatResourceList({job, job}, OutputFormat::kYaml);
  EXPECT_NE(list.find("\n---\n"), std::string::npos) << list;
  EXPECT_EQ(json::parse(FormatResourceList({job}, OutputFormat::kJson)), json::array({job}));
  EXPECT_FALSE(ParseOutputFormat("table").ok());
}

// A tuning job's trials, best first, as YAML comments: ml v1 rows keep the server's
// order; Vertex rows sort by the goal, trials without a measurement last.
TEST(FormatTrialsTableTest, BothDialectsBestFirst) {
  nlohmann::json ml = {
      {"trainingOutput",
       {{"trials",
         {{{"trialId", "2"},
           {"state", "SUCCEEDED"},
           {"finalMetric", {{"trainingStep", "4"}, {"objectiveValue", 0.9}}},
           {"hyperparameters", {{"lr", "0.01"}, {"opt", "adam"}}}},
          {{"trialId", "1"}, {"state", "FAILED"}, {"hyperparameters", {{"lr", "0.1"}}}}}}}}};
  EXPECT_EQ(FormatTrialsTable(ml),
            "# Trials, best first:\n"
            "# TRIAL  STATE      OBJECTIVE  STEP  PARAMETERS\n"
            "# 2      SUCCEEDED  0.9        4     lr=0.01 opt=adam\n"
            "# 1      FAILED     -          -     lr=0.1\n");
  auto trial = [](const char* id, std::optional<double> value) {
    nlohmann::json t = {{"id", id},
                        {"state", value ? "SUCCEEDED" : "INFEASIBLE"},
                        {"parameters", {{{"parameterId", "x"}, {"value", 0.5}}}}};
    if (value) {
      t["finalMeasurement"] = {{"stepCount", "1"},
                               {"metrics", {{{"metricId", "loss"}, {"value", *value}}}}};
    }
    return t;
  };
  nlohmann::json vertex = {
      {"studySpec", {{"metrics", {{{"metricId", "loss"}, {"goal", "MINIMIZE"}}}}}},
      {"trials", {trial("1", 0.5), trial("2", std::nullopt), trial("3", 0.25)}}};
  EXPECT_EQ(FormatTrialsTable(vertex),
            "# Trials, best first:\n"
            "# TRIAL  STATE       OBJECTIVE  STEP  PARAMETERS\n"
            "# 3      SUCCEEDED   0.25       1     x=0.5\n"
            "# 1      SUCCEEDED   0.5        1     x=0.5\n"
            "# 2      INFEASIBLE  -          -     x=0.5\n");
  EXPECT_EQ(FormatTrialsTable(nlohmann::json{{"state", "SUCCEEDED"}}), "");
}

}  // namespace
}  // namespace ty::cli
