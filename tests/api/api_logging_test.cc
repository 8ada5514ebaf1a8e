// Cloud Logging `entries:list` (docs/contracts/cloud-logging-v2.md): entries of jobs of both
// dialects, ordered and paged as gcloud's de-duplication needs, filters, and
// errors in Google's envelope. The real gcloud runs against it in
// tests/integration/gcloud_test.cc.
#include <gmock/gmock.h>

#include <fstream>
#include <set>

#include "api/api_fixture.h"
#include "logs/log_codec.h"

namespace ty::api {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// Lines are written in the year 2100, after whatever the service logs itself, so
// that a timestamp floor selects exactly the test's lines.
constexpr TimeMicros kBase = 4102444800LL * 1000000;  // 2100-01-01T00:00:00Z
constexpr char kFloor[] = "timestamp>=\"2100-01-01T00:00:00Z\"";

class ApiLoggingTest : public ApiFixture {
 protected:
  void Append(const std::string& uid, TimeMicros offset_us, const std::string& task,
              const std::string& message, logs::LogStream stream = logs::LogStream::kStdout) {
    logs::LogEntry entry;
    entry.time = kBase + offset_us;
    entry.task = task;
    entry.stream = stream;
    entry.message = message;
    // Straight into the file, as a daemon wrote logs before LogStore::Append kept each
    // job's log in time order: entries:list still orders such logs, and entries of
    // several jobs (a study's trials), by (timestamp, insertId).
    std::ofstream(dir_ / "logs" / (uid + ".ndjson"), std::ios::app)
        << logs::internal::EncodeLine(logs::internal::Normalize(entry));
  }

  Reply List(const json& body) { return Post("/v2/entries:list?alt=json", body.dump()); }

  // Every entry of the query, following nextPageToken with `page_size`.
  std::vector<json> ListAll(json body, int page_size) {
    std::vector<json> out;
    body["pageSize"] = page_size;
    for (int pages = 0; pages < 100; ++pages) {
      Reply r = List(body);
      EXPECT_EQ(r.status, 200) << r.body;
      json page = r.json();
      for (const json& e : page.value("entries", json::array())) out.push_back(e);
      if (!page.contains("nextPageToken")) break;
      body["pageToken"] = page["nextPageToken"];
    }
    return out;
  }

  static std::vector<std::string> Texts(const std::vector<json>& entries) {
    std::vector<std::string> out;
    for (const json& e : entries) out.push_back(e.value("textPayload", "<json>"));
    return out;
  }

  // A Vertex job whose two replicas wrote interleaved lines, two at one instant.
  std::string JobWithLines() {
    std::string id = CreateVertex("logged");
    std::string uid = UidOf(VertexRef(id));
    Append(uid, 30, "workerpool1-0", "w1");  // Arrives first, sorts later.
    Append(uid, 10, "workerpool0-0", "c1");
    Append(uid, 20, "workerpool0-0", "c2");
    Append(uid, 20, "workerpool1-0", "w-tie");
    Append(uid, 40, "workerpool0-0", "c3 failed", logs::LogStream::kStderr);
    Append(uid, 50, "workerpool1-0", R"({"message":"epoch 1","severity":"warning","loss":0.5})");
    Append(uid, 60, "workerpool0-0", R"({"message":7})");
    return id;
  }
};

TEST_F(ApiLoggingTest, EntriesInTimestampThenInsertIdOrderWithEveryField) {
  std::string id = JobWithLines();
  Reply r = List({{"resourceNames", {"projects/p"}},
                  {"filter", std::string("resource.type=\"ml_job\" AND resource.labels.job_id=\"") +
                                 id + "\" AND " + kFloor},
                  {"orderBy", "timestamp asc"},
                  {"pageSize", 1000}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json; charset=UTF-8");
  std::vector<json> entries = r.json()["entries"];
  ASSERT_EQ(entries.size(), 7u);
  EXPECT_EQ(Texts(entries), (std::vector<std::string>{"c1", "c2", "w-tie", "w1", "c3 failed",
                                                      "<json>", "{\"message\":7}"}));
  const json& first = entries[0];
  EXPECT_EQ(first["timestamp"], "2100-01-01T00:00:00.000010000Z");
  EXPECT_EQ(first["receiveTimestamp"], first["timestamp"]);
  EXPECT_EQ(first["severity"], "INFO");
  EXPECT_EQ(first["logName"], "projects/p/logs/workerpool0-0");
  EXPECT_EQ(first["resource"]["type"], "ml_job");
  EXPECT_EQ(first["resource"]["labels"]["job_id"], id);
  EXPECT_EQ(first["resource"]["labels"]["task_name"], "workerpool0-0");
  EXPECT_EQ(first["resource"]["labels"]["project_id"], "p");
  // Ties on timestamp are ordered by insertId, as strings.
  EXPECT_EQ(entries[1]["timestamp"], entries[2]["timestamp"]);
  EXPECT_LT(entries[1]["insertId"].get<std::string>(), entries[2]["insertId"].get<std::string>());
  std::set<std::string> ids;
  for (const json& e : entries) ids.insert(e["insertId"].get<std::string>());
  EXPECT_EQ(ids.size(), entries.size());
  EXPECT_EQ(entries[4]["severity"], "ERROR");  // stderr.
  EXPECT_EQ(entries[5]["jsonPayload"]["loss"], 0.5);
  EXPECT_EQ(entries[5]["severity"], "WARNING");
  EXPECT_FALSE(entries[6].contains("jsonPayload"));  // gcloud needs a string message.
}

TEST_F(ApiLoggingTest, GcloudsTieBoundResumesRightAfterTheLastEntry) {
  std::string id = JobWithLines();
  json all = List({{"resourceNames", {"projects/p"}},
                   {"filter", std::string("resource.labels.job_id=\"") + id + "\" AND " + kFloor}})
                 .json()["entries"];
  const json& last = all[1];  // c2, tied with w-tie.
  std::string t = last["timestamp"], insert = last["insertId"];
  std::string filter = "resource.labels.job_id=\"" + id + "\" AND ((timestamp=\"" + t +
                       "\" AND insertId>\"" + insert + "\") OR timestamp>\"" + t + "\")";
  json rest = List({{"resourceNames", {"projects/p"}}, {"filter", filter}}).json()["entries"];
  ASSERT_EQ(rest.size(), 5u);
  EXPECT_EQ(rest[0]["textPayload"], "w-tie");
}

TEST_F(ApiLoggingTest, PagesChainWithoutLossOrRepeatBothWays) {
  std::string id = JobWithLines();
  json query = {{"resourceNames", {"projects/p"}},
                {"filter", std::string("resource.labels.job_id=\"") + id + "\" AND " + kFloor}};
  std::vector<json> whole = ListAll(query, 1000);
  for (int size : {1, 2, 3}) EXPECT_EQ(Texts(ListAll(query, size)), Texts(whole)) << size;
  query["orderBy"] = "timestamp desc";
  std::vector<std::string> reversed = Texts(whole);
  std::reverse(reversed.begin(), reversed.end());
  EXPECT_EQ(Texts(ListAll(query, 2)), reversed);
}

TEST_F(ApiLoggingTest, FiltersOnTaskSeverityPayloadAndProject) {
  std::string id = JobWithLines();
  auto texts = [&](const std::string& f, const std::string& project = "p") {
    return Texts(ListAll(
        {{"resourceNames", {"projects/" + project}}, {"filter", std::string(kFloor) + " AND " + f}},
        1000));
  };
  EXPECT_EQ(texts("resource.labels.task_name=\"workerpool1-0\" severity>=WARNING"),
            (std::vector<std::string>{"<json>"}));
  EXPECT_EQ(texts("severity=ERROR"), (std::vector<std::string>{"c3 failed"}));
  EXPECT_EQ(texts("jsonPayload.loss<1"), (std::vector<std::string>{"<json>"}));
  EXPECT_EQ(texts("textPayload:\"FAILED\""), (std::vector<std::string>{"c3 failed"}));
  EXPECT_TRUE(texts("resource.labels.job_id=\"" + id + "\"", "other").empty());
  // Without a job id every job of the project is searched.
  EXPECT_EQ(texts("labels.\"ml.googleapis.com/task_name\"=\"workerpool0-0\"").size(), 4u);
}

TEST_F(ApiLoggingTest, MlJobsByJobIdAndTheServicesOwnLines) {
  CreateMl("trainer_7");
  Append(UidOf(MlRef("trainer_7")), 5, "master-replica-0", "ml says hi");
  Reply r = List({{"resourceNames", {"projects/p"}},
                  {"filter",
                   "(resource.type=\"ml_job\" OR resource.type=\"cloudml_job\") AND "
                   "resource.labels.job_id=\"trainer_7\" AND timestamp>=\"1970-01-01T01:00:00."
                   "000000000Z\""}});
  ASSERT_EQ(r.status, 200) << r.body;
  json entries = r.json()["entries"];
  ASSERT_GE(entries.size(), 2u);
  EXPECT_EQ(entries[0]["resource"]["labels"]["task_name"], "service");
  EXPECT_EQ(entries[0]["logName"], "projects/p/logs/ml.googleapis.com%2Ftrainer_7");
  EXPECT_EQ(entries.back()["textPayload"], "ml says hi");
}

// A tuning job's log holds its trials' replica lines under its own id, each labelled
// with its trial (gcloud ai-platform prints the trial column), besides its own lines.
TEST_F(ApiLoggingTest, ATuningJobServesItsTrialsLinesLabelledWithTheTrial) {
  json body = json::parse(MlBody("tuned"));
  body["trainingInput"]["hyperparameters"] = {
      {"goal", "MAXIMIZE"},
      {"hyperparameterMetricTag", "accuracy"},
      {"maxTrials", 2},
      {"maxParallelTrials", 2},
      {"params", {{{"parameterName", "x"}, {"type", "DOUBLE"}, {"minValue", 0}, {"maxValue", 1}}}}};
  ASSERT_EQ(Post(kMl, body.dump()).status, 200);
  const std::string uid = UidOf(MlRef("tuned"));
  std::vector<model::Trial> trials;
  for (int i = 0; i < 500 && trials.size() < 2; ++i) {
    usleep(10000);
    auto stored = store_.GetJob(uid);
    if (stored.ok()) trials = stored->trials;
  }
  ASSERT_EQ(trials.size(), 2u);
  Append(trials[1].job_uid, 10, "master-replica-0", "from trial 2");
  Append(trials[0].job_uid, 20, "master-replica-0", "from trial 1");
  std::vector<json> entries =
      ListAll({{"resourceNames", {"projects/p"}},
               {"filter", "resource.labels.job_id=\"tuned\" AND " + std::string(kFloor)}},
              1);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]["textPayload"], "from trial 2");
  EXPECT_EQ(entries[0]["labels"]["ml.googleapis.com/trial_id"], std::to_string(trials[1].id));
  EXPECT_EQ(entries[1]["labels"]["ml.googleapis.com/trial_id"], std::to_string(trials[0].id));
  EXPECT_EQ(entries[1]["resource"]["labels"]["job_id"], "tuned");
  EXPECT_NE(entries[0]["insertId"], entries[1]["insertId"]);
  // The study's own service lines carry no trial; its trials' service lines carry theirs.
  Reply all = List(
      {{"resourceNames", {"projects/p"}},
       {"filter", "resource.labels.job_id=\"tuned\" AND resource.labels.task_name=\"service\""}});
  ASSERT_EQ(all.status, 200) << all.body;
  int study_lines = 0;
  for (const json& e : all.json().value("entries", json::array())) {
    const bool of_study = e.value("textPayload", "").rfind("Trial ", 0) == 0;
    study_lines += of_study;
    EXPECT_EQ(e["labels"].contains("ml.googleapis.com/trial_id"), !of_study) << e.dump();
  }
  EXPECT_EQ(study_lines, 2);  // "Trial 1 started ...", "Trial 2 started ...".
}

TEST_F(ApiLoggingTest, GetFormAndEmptyAnswers) {
  std::string id = JobWithLines();
  Reply r = Get("/v2/entries:list?resourceNames=projects/p&pageSize=2&filter=" +
                std::string("resource.labels.job_id%3D%22") + id + "%22");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["entries"].size(), 2u);
  EXPECT_TRUE(r.json().contains("nextPageToken"));
  Reply none = List({{"resourceNames", {"organizations/1"}}});
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(none.body, "{}");
}

TEST_F(ApiLoggingTest, BadRequestsAre400sNamingTheProblem) {
  auto error = [&](const json& body) {
    Reply r = List(body);
    EXPECT_EQ(r.status, 400) << body.dump() << " -> " << r.body;
    EXPECT_EQ(r.json()["error"]["status"], "INVALID_ARGUMENT");
    return r.json()["error"].value("message", "");
  };
  EXPECT_THAT(error({{"resourceNames", {"projects/p"}}, {"filter", "severity>=ERROR AND ("}}),
              HasSubstr("Unparseable filter: syntax error at line 1, column 22"));
  EXPECT_THAT(error(json::object()), HasSubstr("resourceNames"));
  EXPECT_THAT(error({{"resourceNames", {"buckets/x"}}}), HasSubstr("resourceNames[0]"));
  EXPECT_THAT(error({{"resourceNames", {"projects/p"}}, {"orderBy", "severity"}}),
              HasSubstr("orderBy"));
  EXPECT_THAT(error({{"resourceNames", {"projects/p"}}, {"pageToken", "garbage"}}),
              HasSubstr("pageToken"));
  EXPECT_THAT(error({{"resourceNames", {"projects/p"}}, {"pageSize", "many"}}),
              HasSubstr("page_size"));
  EXPECT_THAT(error({{"resourceNames", "projects/p"}}), HasSubstr("resourceNames"));
  Reply broken = Post("/v2/entries:list", "{not json");
  EXPECT_EQ(broken.status, 400);
}

}  // namespace
}  // namespace ty::api
