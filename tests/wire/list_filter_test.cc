#include "wire/list_filter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ty::wire {

using namespace model;
namespace {

Job VertexJob(std::string name, JobState state, const std::string& created,
              std::map<std::string, std::string> labels = {}) {
  Job job;
  job.dialect = Dialect::kVertex;
  job.spec.dialect = Dialect::kVertex;
  job.spec.display_name = std::move(name);
  job.spec.labels = std::move(labels);
  job.state = state;
  job.create_time = *ParseRfc3339(created);
  return job;
}

Job MlJob(std::string id, JobState state, const std::string& created,
          std::map<std::string, std::string> labels = {}) {
  Job job = VertexJob("", state, created, std::move(labels));
  job.dialect = Dialect::kMlV1;
  job.spec.dialect = Dialect::kMlV1;
  job.spec.job_id = std::move(id);
  return job;
}

bool Matches(Dialect dialect, const std::string& filter, const Job& job) {
  auto parsed = ListFilter::Parse(dialect, filter);
  EXPECT_TRUE(parsed.ok()) << filter << ": " << parsed.status().ToString();
  return parsed.ok() && parsed->Matches(job);
}

bool V(const std::string& filter, const Job& job) { return Matches(Dialect::kVertex, filter, job); }
bool M(const std::string& filter, const Job& job) { return Matches(Dialect::kMlV1, filter, job); }

TEST(ListFilterTest, EmptyMatchesEverything) {
  Job job = VertexJob("x", JobState::kRunning, "2021-01-01T00:00:00Z");
  EXPECT_TRUE(V("", job));
  EXPECT_TRUE(V("   ", job));
}

TEST(ListFilterTest, VertexDocExampleStateAndDisplayNameWildcard) {
  const std::string f = R"(state="JOB_STATE_SUCCEEDED" AND display_name:"my_job_*")";
  EXPECT_TRUE(V(f, VertexJob("my_job_1", JobState::kSucceeded, "2021-01-01T00:00:00Z")));
  EXPECT_TRUE(V(f, VertexJob("MY_JOB_2", JobState::kSucceeded, "2021-01-01T00:00:00Z")));
  EXPECT_FALSE(V(f, VertexJob("my_job_1", JobState::kFailed, "2021-01-01T00:00:00Z")));
  EXPECT_FALSE(V(f, VertexJob("other", JobState::kSucceeded, "2021-01-01T00:00:00Z")));
}

TEST(ListFilterTest, VertexDocExampleNotEquals) {
  EXPECT_FALSE(V(R"(NOT display_name="my_job")",
                 VertexJob("my_job", JobState::kRunning, "2021-01-01T00:00:00Z")));
  EXPECT_TRUE(V(R"(NOT display_name="my_job")",
                VertexJob("my_job_2", JobState::kRunning, "2021-01-01T00:00:00Z")));
  // `=` is exact and case-sensitive; `*` is not a wildcard there.
  EXPECT_FALSE(V(R"(display_name="MY_JOB")",
                 VertexJob("my_job", JobState::kRunning, "2021-01-01T00:00:00Z")));
  EXPECT_FALSE(
      V(R"(display_name="my_*")", VertexJob("my_job", JobState::kRunning, "2021-01-01T00:00:00Z")));
  EXPECT_TRUE(V(R"(display_name!="other")",
                VertexJob("my_job", JobState::kRunning, "2021-01-01T00:00:00Z")));
}

TEST(ListFilterTest, VertexDocExampleCreateTime) {
  const std::string f = R"(create_time>"2021-05-18T00:00:00Z")";
  EXPECT_TRUE(V(f, VertexJob("a", JobState::kRunning, "2021-05-18T00:00:01Z")));
  EXPECT_FALSE(V(f, VertexJob("a", JobState::kRunning, "2021-05-18T00:00:00Z")));
  EXPECT_TRUE(V(R"(create_time>="2021-05-18T00:00:00Z")",
                VertexJob("a", JobState::kRunning, "2021-05-18T00:00:00Z")));
  EXPECT_TRUE(V(R"(create_time<"2021-05-18T02:00:00+02:00")",
                VertexJob("a", JobState::kRunning, "2021-05-17T23:59:59Z")));
  EXPECT_TRUE(V(R"(create_time="2021-05-18T00:00:00Z")",
                VertexJob("a", JobState::kRunning, "2021-05-18T00:00:00Z")));
}

TEST(ListFilterTest, VertexDocExampleLabelExists) {
  EXPECT_TRUE(V("labels.keyB:*",
                VertexJob("a", JobState::kRunning, "2021-01-01T00:00:00Z", {{"keyB", ""}})));
  EXPECT_FALSE(V("labels.keyB:*",
                 VertexJob("a", JobState::kRunning, "2021-01-01T00:00:00Z", {{"keyA", "x"}})));
  EXPECT_TRUE(V("labels:keyB",
                VertexJob("a", JobState::kRunning, "2021-01-01T00:00:00Z", {{"keyB", "v"}})));
}

TEST(ListFilterTest, LabelValues) {
  Job job = VertexJob("a", JobState::kRunning, "2021-01-01T00:00:00Z", {{"team", "trainyard"}});
  EXPECT_TRUE(V("labels.team=trainyard", job));
  EXPECT_FALSE(V("labels.team=other", job));
  EXPECT_TRUE(V("labels.team:train*", job));
  EXPECT_TRUE(V("labels.team!=other", job));
  EXPECT_FALSE(V("labels.missing=x", job));
  EXPECT_TRUE(V("labels.missing!=x", job));
}

TEST(ListFilterTest, MinusPrefixNegates) {
  Job with = VertexJob("a", JobState::kRunning, "2021-01-01T00:00:00Z", {{"a", "1"}});
  Job without = VertexJob("a", JobState::kRunning, "2021-01-01T00:00:00Z");
  EXPECT_FALSE(V("-labels.a:*", with));
  EXPECT_TRUE(V("-labels.a:*", without));
}

TEST(ListFilterTest, VertexStateAliasesAndNumbers) {
  Job preparing = VertexJob("a", JobState::kPreparing, "2021-01-01T00:00:00Z");
  EXPECT_TRUE(V("state=JOB_STATE_PENDING", preparing));
  EXPECT_TRUE(V("state=2", preparing));
  EXPECT_TRUE(V("state!=JOB_STATE_RUNNING", preparing));
  EXPECT_FALSE(V("state=3", preparing));
  // A Vertex state Trainyard never enters is valid and matches nothing.
  EXPECT_FALSE(V("state=JOB_STATE_PAUSED", preparing));
  EXPECT_TRUE(V("displayName:a", preparing));
  EXPECT_TRUE(V("createTime<2022-01-01T00:00:00Z", preparing));
}

TEST(ListFilterTest, MlDocExamples) {
  Job census = MlJob("census_train_1", JobState::kFailed, "2017-01-16T00:00:00Z");
  Job rnn = MlJob("rnn_big", JobState::kFailed, "2017-01-14T00:00:00Z");
  Job rnn_ok = MlJob("rnn_small", JobState::kSucceeded, "2017-01-14T00:00:00Z");
  EXPECT_TRUE(M("jobId:census*", census));
  EXPECT_FALSE(M("jobId:census*", rnn));
  EXPECT_TRUE(M("jobId:rnn* AND state:FAILED", rnn));
  EXPECT_FALSE(M("jobId:rnn* AND state:FAILED", rnn_ok));
  EXPECT_TRUE(M("createTime>2017-01-15T19:00:00Z", census));
  EXPECT_FALSE(M("createTime>2017-01-15T19:00:00Z", rnn));
  // The monitoring docs' shortened form, without seconds or zone.
  EXPECT_TRUE(M("createTime>2017-01-15T19:00", census));
  EXPECT_TRUE(M("create_time>2017-01-15", census));
  EXPECT_TRUE(M("job_id=census_train_1", census));
  EXPECT_TRUE(M("state=PREPARING", MlJob("x", JobState::kPreparing, "2017-01-14T00:00:00Z")));
  EXPECT_TRUE(M("state:failed", rnn));
}

TEST(ListFilterTest, OrAndParentheses) {
  Job a = MlJob("alpha", JobState::kRunning, "2020-01-01T00:00:00Z", {{"team", "x"}});
  Job b = MlJob("beta", JobState::kFailed, "2020-01-01T00:00:00Z");
  EXPECT_TRUE(M("jobId=alpha OR jobId=beta", a));
  EXPECT_TRUE(M("jobId=alpha OR jobId=beta", b));
  EXPECT_FALSE(
      M("jobId=alpha OR jobId=beta", MlJob("gamma", JobState::kRunning, "2020-01-01T00:00:00Z")));
  EXPECT_TRUE(M("(jobId=alpha OR jobId=beta) AND state=FAILED", b));
  EXPECT_FALSE(M("(jobId=alpha OR jobId=beta) AND state=FAILED", a));
  // AIP-160: OR binds tighter than AND.
  EXPECT_FALSE(M("state=FAILED AND jobId=alpha OR jobId=gamma", a));
  EXPECT_TRUE(M("NOT (state=FAILED OR labels.team:*)",
                MlJob("gamma", JobState::kRunning, "2020-01-01T00:00:00Z")));
  EXPECT_FALSE(M("NOT (state=FAILED OR labels.team:*)", a));
  // Adjacent terms are ANDed.
  EXPECT_TRUE(M("jobId:al* state=RUNNING", a));
  EXPECT_FALSE(M("jobId:al* state=FAILED", a));
  EXPECT_TRUE(M("jobId='alpha'", a));
}

TEST(ListFilterTest, WildcardAnywhere) {
  Job job = MlJob("my_census_job", JobState::kRunning, "2020-01-01T00:00:00Z");
  EXPECT_TRUE(M("jobId:*census*", job));
  EXPECT_TRUE(M("jobId:my*job", job));
  EXPECT_TRUE(M("jobId:MY_CENSUS_JOB", job));
  EXPECT_FALSE(M("jobId:census", job));
  EXPECT_FALSE(M("jobId:*x*", job));
}

TEST(ListFilterTest, UnknownFieldsAreRejectedPerDialect) {
  auto r = ListFilter::Parse(Dialect::kVertex, "foo=1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("unsupported filter field \"foo\""), std::string::npos);
  EXPECT_FALSE(ListFilter::Parse(Dialect::kVertex, "jobId=x").ok());
  EXPECT_FALSE(ListFilter::Parse(Dialect::kMlV1, "display_name=x").ok());
}

TEST(ListFilterTest, SyntaxErrors) {
  for (const char* bad :
       {"state=", "(jobId=a", "jobId=a)", "jobId", "jobId=\"abc", "AND jobId=a", "jobId=a AND",
        "jobId=a OR", "state=BOGUS", "state>RUNNING", "createTime>yesterday", "NOT", "()"}) {
    auto r = ListFilter::Parse(Dialect::kMlV1, bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(ListFilterTest, ErrorNamesTheOffendingToken) {
  auto r = ListFilter::Parse(Dialect::kMlV1, "jobId=a ) state=FAILED");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("\")\""), std::string::npos) << r.status().message();
}

TEST(ListFilterTest, DeepNestingIsRejectedNotCrashing) {
  std::string deep(10000, '(');
  EXPECT_FALSE(ListFilter::Parse(Dialect::kMlV1, deep + "jobId=a").ok());
}

}  // namespace
}  // namespace ty::wire
