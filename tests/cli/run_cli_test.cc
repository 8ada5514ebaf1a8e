// Whole commands through RunCli with a scripted HttpClient (no server): the requests
// each command sends, what it prints on stdout/stderr, exit codes, and log following
// with reconnects (docs/contracts/gcloud-cli.md §1, §2, §4, §5, §8).
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <deque>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "auth/tokens.h"
#include "cli/cli.h"
#include "cli/http_client.h"

namespace ty::cli {
namespace {

using nlohmann::json;

struct Request {
  std::string method, url, body;
};

// Answers from per-call scripts, in order; records every request.
class FakeHttpClient : public HttpClient {
 public:
  struct Stream {
    std::vector<std::string> lines;
    long status = 200;
    std::string body;
    bool drop = false;  // Deliver the lines, then fail as a dropped connection.
  };

  std::vector<Request> requests;
  std::deque<Result<HttpResponse>> responses;
  std::deque<Stream> streams;

  Result<HttpResponse> Send(const std::string& method, const std::string& url,
                            const std::string& body) override {
    requests.push_back({method, url, body});
    if (responses.empty()) return Status(Unavailable("no scripted response for " + url));
    Result<HttpResponse> r = responses.front();
    responses.pop_front();
    return r;
  }

  Result<HttpResponse> StreamLines(const std::string& url,
                                   const std::function<bool(std::string_view)>& on_line) override {
    requests.push_back({"STREAM", url, ""});
    if (streams.empty()) return Status(Unavailable("could not connect"));
    Stream s = streams.front();
    streams.pop_front();
    if (s.status != 200) return HttpResponse{s.status, s.body};
    for (const auto& l : s.lines) on_line(l);
    if (s.drop) return Status(Unavailable("connection dropped"));
    return HttpResponse{200, ""};
  }

  void Reply(long status, const json& body) {
    responses.push_back(HttpResponse{status, body.dump()});
  }
};

class RunCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
    env_.http = &http_;
    env_.getenv = [this](const std::string& name) -> std::optional<std::string> {
      auto it = vars_.find(name);
      return it == vars_.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    env_.sleep_ms = [this](int ms) { slept_ms_ += ms; };
  }

  int Run(std::vector<std::string> argv) {
    out_.str("");
    err_.str("");
    return RunCli(argv, out_, err_, env_);
  }

  static std::string LogLine(const std::string& task, const std::string& msg,
                             const std::string& cursor) {
    return json{{"timestamp", "2024-03-01T12:00:00Z"},
                {"taskName", task},
                {"stream", "stdout"},
                {"severity", "INFO"},
                {"message", msg},
                {"cursor", cursor}}
        .dump();
  }

  FakeHttpClient http_;
  CliEnvironment env_;
  std::map<std::string, std::string> vars_;
  std::ostringstream out_, err_;
  int slept_ms_ = 0;
};

constexpr char kName[] = "projects/local/locations/us-central1/customJobs/123";

TEST_F(RunCliTest, CustomJobCreatePostsTheJobAndPrintsGcloudText) {
  http_.Reply(200, {{"name", kName}, {"state", "JOB_STATE_QUEUED"}});
  int rc = Run({"ai", "custom-jobs", "create", "--region=us-central1", "--display-name=demo",
                "--worker-pool-spec=machine-type=n1-standard-4,container-image-uri=img",
                "--worker-pool-spec=", "--args=--epochs,2", "--labels=team=ml"});
  ASSERT_EQ(rc, 0) << err_.str();
  ASSERT_EQ(http_.requests.size(), 1u);
  EXPECT_EQ(http_.requests[0].method, "POST");
  EXPECT_EQ(http_.requests[0].url,
            "http://127.0.0.1:8080/v1/projects/local/locations/us-central1/customJobs");
  json body = json::parse(http_.requests[0].body);
  EXPECT_EQ(body["displayName"], "demo");
  EXPECT_EQ(body["jobSpec"]["workerPoolSpecs"].size(), 2u);
  EXPECT_EQ(body["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"],
            json({"--epochs", "2"}));
  EXPECT_EQ(out_.str(), "");
  EXPECT_EQ(err_.str(),
            "Using endpoint [http://127.0.0.1:8080/]\n"
            "CustomJob [projects/local/locations/us-central1/customJobs/123] is submitted "
            "successfully.\n\n"
            "Your job is still active. You may view the status of your job with the command\n\n"
            "  $ trainyard ai custom-jobs describe "
            "projects/local/locations/us-central1/customJobs/123\n\n"
            "or continue streaming the logs with the command\n\n"
            "  $ trainyard ai custom-jobs stream-logs "
            "projects/local/locations/us-central1/customJobs/123\n");
}

TEST_F(RunCliTest, EndpointAndProjectFromEnvironmentAndFlags) {
  vars_["TRAINYARD_API"] = "http://10.0.0.1:9000/";
  vars_["TRAINYARD_PROJECT"] = "envproj";
  http_.Reply(200, {{"name", "n"}});
  // JSON: one request per run (YAML also fetches /details).
  ASSERT_EQ(Run({"ai", "custom-jobs", "describe", "7", "--region=r", "--format=json"}), 0)
      << err_.str();
  EXPECT_EQ(http_.requests.back().url,
            "http://10.0.0.1:9000/v1/projects/envproj/locations/r/customJobs/7");
  http_.Reply(200, {{"name", "n"}});
  ASSERT_EQ(Run({"--api-endpoint=http://h:1", "ai", "custom-jobs", "describe", "7", "--region=r",
                 "--project=p", "--format=json"}),
            0);
  EXPECT_EQ(http_.requests.back().url, "http://h:1/v1/projects/p/locations/r/customJobs/7");
}

TEST_F(RunCliTest, DescribeTakesAFullNameAndPrintsYamlOrJson) {
  json job = {{"name", kName}, {"state", "JOB_STATE_SUCCEEDED"}};
  json details = {
      {"attempt", 2},
      {"replicas",
       {{{"taskName", "workerpool1-0"}, {"state", "FAILED"}, {"exitCode", 137}, {"restarts", 3}}}}};
  http_.Reply(200, job);
  http_.Reply(200, details);
  ASSERT_EQ(Run({"ai", "custom-jobs", "describe", kName}), 0) << err_.str();
  ASSERT_EQ(http_.requests.size(), 2u);
  EXPECT_EQ(http_.requests[0].url, std::string("http://127.0.0.1:8080/v1/") + kName);
  EXPECT_EQ(http_.requests[1].url, std::string("http://127.0.0.1:8080/v1/") + kName + "/details");
  std::string out = out_.str();
  EXPECT_NE(out.find("state: JOB_STATE_SUCCEEDED"), std::string::npos) << out;
  // The second YAML document lists each replica with state, exit code and restarts.
  size_t doc = out.find("---\n");
  ASSERT_NE(doc, std::string::npos) << out;
  EXPECT_NE(out.find("taskName: workerpool1-0", doc), std::string::npos) << out;
  EXPECT_NE(out.find("exitCode: 137", doc), std::string::npos) << out;
  EXPECT_NE(out.find("restarts: 3", doc), std::string::npos) << out;
  http_.Reply(200, job);
  ASSERT_EQ(Run({"ai", "custom-jobs", "describe", kName, "--format=json"}), 0);
  EXPECT_EQ(json::parse(out_.str()), job);  // JSON stays the bare resource.
}

TEST_F(RunCliTest, ServerErrorsPrintTheMessageAndExitOne) {
  http_.Reply(
      404,
      {{"error", {{"code", 404}, {"message", "CustomJob 9 not found."}, {"status", "NOT_FOUND"}}}});
  EXPECT_EQ(Run({"ai", "custom-jobs", "describe", "9", "--region=r"}), 1);
  EXPECT_NE(err_.str().find("ERROR: (trainyard.ai.custom-jobs.describe) CustomJob 9 not found.\n"),
            std::string::npos)
      << err_.str();
}

TEST_F(RunCliTest, ConnectionRefusedNamesTheEndpoint) {
  EXPECT_EQ(Run({"ai-platform", "jobs", "describe", "j"}), 1);
  EXPECT_NE(err_.str().find("ERROR: (trainyard.ai-platform.jobs.describe)"), std::string::npos);
}

TEST_F(RunCliTest, ListFollowsPagesSendsTheFilterAndHonoursLimit) {
  http_.Reply(200, {{"customJobs", {{{"name", "a"}}, {{"name", "b"}}}}, {"nextPageToken", "t 2"}});
  http_.Reply(200, {{"customJobs", {{{"name", "c"}}}}});
  ASSERT_EQ(Run({"ai", "custom-jobs", "list", "--region=r", "--filter=state=JOB_STATE_RUNNING",
                 "--limit=3"}),
            0)
      << err_.str();
  ASSERT_EQ(http_.requests.size(), 2u);
  EXPECT_EQ(http_.requests[0].url,
            "http://127.0.0.1:8080/v1/projects/local/locations/r/"
            "customJobs?filter=state%3DJOB_STATE_RUNNING");
  EXPECT_EQ(http_.requests[1].url,
            "http://127.0.0.1:8080/v1/projects/local/locations/r/"
            "customJobs?filter=state%3DJOB_STATE_RUNNING"
            "&pageToken=t%202");
  EXPECT_EQ(out_.str(), "name: a\n---\nname: b\n---\nname: c\n");
}

TEST_F(RunCliTest, MlListPrintsATable) {
  http_.Reply(
      200, {{"jobs",
             {{{"jobId", "j1"}, {"state", "RUNNING"}, {"createTime", "2024-03-01T10:00:00Z"}}}}});
  ASSERT_EQ(Run({"ai-platform", "jobs", "list", "--limit=5"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "JOB_ID  STATUS   CREATED\nj1      RUNNING  2024-03-01T10:00:00\n");
}

TEST_F(RunCliTest, CancelPrintsGcloudText) {
  http_.Reply(200, json::object());
  ASSERT_EQ(Run({"ai", "custom-jobs", "cancel", "123", "--region=us-central1"}), 0);
  EXPECT_EQ(http_.requests.back().method, "POST");
  EXPECT_EQ(http_.requests.back().url,
            std::string("http://127.0.0.1:8080/v1/") + kName + ":cancel");
  EXPECT_NE(
      err_.str().find("Request to cancel CustomJob [" + std::string(kName) +
                      "] has been sent.\n\nYou may view the status of your job with the command\n\n"
                      "  $ trainyard ai custom-jobs describe " +
                      kName + "\n"),
      std::string::npos)
      << err_.str();
  http_.Reply(200, json::object());
  ASSERT_EQ(Run({"ai-platform", "jobs", "cancel", "j1"}), 0);
  EXPECT_EQ(http_.requests.back().url, "http://127.0.0.1:8080/v1/projects/local/jobs/j1:cancel");
  EXPECT_EQ(err_.str(), "");
}

TEST_F(RunCliTest, StreamLogsReconnectsFromTheLastCursorUntilTheJobEnds) {
  http_.streams.push_back({{LogLine("workerpool0-0", "hello", "c1")}, 200, "", /*drop=*/true});
  http_.Reply(200, {{"name", kName}, {"state", "JOB_STATE_RUNNING"}});
  http_.streams.push_back({{LogLine("workerpool0-0", "bye", "c2")}, 200, "", false});
  http_.Reply(
      200,
      {{"name", kName}, {"state", "JOB_STATE_SUCCEEDED"}, {"endTime", "2024-03-01T12:00:01Z"}});
  ASSERT_EQ(Run({"ai", "custom-jobs", "stream-logs", "123", "--region=us-central1",
                 "--task-name=workerpool0-0"}),
            0)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "INFO\t2024-03-01 12:00:00 +0000\tworkerpool0-0\thello\n"
            "INFO\t2024-03-01 12:00:00 +0000\tworkerpool0-0\tbye\n");
  std::string logs =
      std::string("http://127.0.0.1:8080/v1/") + kName + "/logs?follow=true&task=workerpool0-0";
  EXPECT_EQ(http_.requests[0].url, logs);
  EXPECT_EQ(http_.requests[2].url, logs + "&cursor=c1");
  EXPECT_GT(slept_ms_, 0);
}

TEST_F(RunCliTest, StreamLogsEndsOnAnErrorRecordInsteadOfPrintingIt) {
  http_.streams.push_back(
      {{LogLine("workerpool0-0", "hello", "c1"),
        json{{"error", {{"code", 500}, {"message", "log file unreadable"}}}}.dump()},
       200,
       "",
       false});
  EXPECT_EQ(Run({"ai", "custom-jobs", "stream-logs", "123", "--region=us-central1"}), 1);
  EXPECT_EQ(out_.str(), "INFO\t2024-03-01 12:00:00 +0000\tworkerpool0-0\thello\n");
  EXPECT_NE(err_.str().find("log file unreadable"), std::string::npos) << err_.str();
}

TEST_F(RunCliTest, StreamLogsOfAMissingJob) {
  http_.streams.push_back(
      {{}, 404, R"({"error": {"code": 404, "message": "Job j not found."}})", false});
  EXPECT_EQ(Run({"ai-platform", "jobs", "stream-logs", "j"}), 1);
  EXPECT_EQ(err_.str(), "ERROR: (trainyard.ai-platform.jobs.stream-logs) Job j not found.\n");
}

TEST_F(RunCliTest, MlSubmitPostsJobWithUserArgsAndPrintsSummary) {
  http_.Reply(200, {{"jobId", "j1"}, {"state", "QUEUED"}, {"trainingInput", json::object()}});
  int rc = Run({"ai-platform", "jobs", "submit", "training", "j1", "--region=local",
                "--master-image-uri=img", "--job-dir=gs://b/d", "--", "--epochs", "3", "--flag"});
  ASSERT_EQ(rc, 0) << err_.str();
  EXPECT_EQ(http_.requests[0].url, "http://127.0.0.1:8080/v1/projects/local/jobs");
  json body = json::parse(http_.requests[0].body);
  EXPECT_EQ(body["jobId"], "j1");
  EXPECT_EQ(body["trainingInput"]["args"], json({"--epochs", "3", "--flag"}));
  EXPECT_EQ(out_.str(), "jobId: j1\nstate: QUEUED\n");
  EXPECT_EQ(err_.str(),
            "Job [j1] submitted successfully.\n"
            "Your job is still active. You may view the status of your job with the command\n\n"
            "  $ trainyard ai-platform jobs describe j1\n\n"
            "or continue streaming the logs with the command\n\n"
            "  $ trainyard ai-platform jobs stream-logs j1\n");
}

TEST_F(RunCliTest, MlSubmitConflict) {
  http_.Reply(409, {{"error", {{"code", 409}, {"message", "Job j1 already exists."}}}});
  EXPECT_EQ(Run({"ai-platform", "jobs", "submit", "training", "j1", "--region=local",
                 "--master-image-uri=i"}),
            1);
  EXPECT_EQ(
      err_.str(),
      "ERROR: (trainyard.ai-platform.jobs.submit.training) Resource in projects [local] is the "
      "subject of a conflict: Job j1 already exists.\n");
}

TEST_F(RunCliTest, MlSubmitStreamLogsExitsOneUnlessSucceeded) {
  http_.Reply(200, {{"jobId", "j1"}, {"state", "QUEUED"}});
  http_.streams.push_back({{LogLine("master-replica-0", "boom", "1")}, 200, "", false});
  http_.Reply(200, {{"jobId", "j1"}, {"state", "FAILED"}, {"endTime", "2024-03-01T12:00:01Z"}});
  EXPECT_EQ(Run({"ai-platform", "jobs", "submit", "training", "j1", "--region=l",
                 "--master-image-uri=i", "--stream-logs"}),
            1);
  EXPECT_NE(err_.str().find("INFO\t2024-03-01 12:00:00 +0000\tmaster-replica-0\t\tboom\n"),
            std::string::npos)
      << err_.str();
  EXPECT_EQ(out_.str(), "jobId: j1\nstate: FAILED\nendTime: '2024-03-01T12:00:01Z'\n");
  EXPECT_EQ(http_.requests[1].url,
            "http://127.0.0.1:8080/v1/projects/local/jobs/j1/logs?follow=true");
}

TEST_F(RunCliTest, MlSubmitReadsAConfigFile) {
  std::string path = ::testing::TempDir() + "/ml_config.yaml";
  std::ofstream(path)
      << "trainingInput:\n  region: cfg\n  masterConfig:\n    imageUri: cfg-img\n  args: [a]\n";
  http_.Reply(200, {{"jobId", "j"}, {"state", "QUEUED"}});
  ASSERT_EQ(Run({"ai-platform", "jobs", "submit", "training", "j", "--config=" + path, "--", "b"}),
            0)
      << err_.str();
  json body = json::parse(http_.requests[0].body);
  EXPECT_EQ(body["trainingInput"]["masterConfig"]["imageUri"], "cfg-img");
  EXPECT_EQ(body["trainingInput"]["args"], json({"b"}));
}

// ai hp-tuning-jobs: the config is the body; the flags override it, counts default to 1.
TEST_F(RunCliTest, HpTuningJobCreateMergesConfigAndFlagsAndPrintsGcloudText) {
  std::string path = ::testing::TempDir() + "/hp_config.yaml";
  std::ofstream(path) << "studySpec:\n  metrics: [{metricId: acc, goal: MAXIMIZE}]\n"
                         "  parameters: [{parameterId: x, doubleValueSpec: {minValue: 0, "
                         "maxValue: 1}}]\n"
                         "parallelTrialCount: 3\n"
                         "trialJobSpec: {workerPoolSpecs: []}\n";
  const std::string name = "projects/local/locations/us-central1/hyperparameterTuningJobs/77";
  http_.Reply(200, {{"name", name}, {"state", "JOB_STATE_QUEUED"}});
  ASSERT_EQ(Run({"ai", "hp-tuning-jobs", "create", "--region=us-central1", "--display-name=hp",
                 "--config=" + path, "--max-trial-count=8", "--algorithm=random-search"}),
            0)
      << err_.str();
  EXPECT_EQ(http_.requests[0].url,
            "http://127.0.0.1:8080/v1/projects/local/locations/"
            "us-central1/hyperparameterTuningJobs");
  json body = json::parse(http_.requests[0].body);
  EXPECT_EQ(body["displayName"], "hp");
  EXPECT_EQ(body["maxTrialCount"], 8);
  EXPECT_EQ(body["parallelTrialCount"], 3);
  EXPECT_EQ(body["studySpec"]["algorithm"], "RANDOM_SEARCH");
  EXPECT_EQ(err_.str(),
            "Using endpoint [http://127.0.0.1:8080/]\n"
            "Hyperparameter tuning job [77] submitted successfully.\n\n"
            "Your job is still active. You may view the status of your job with the command\n\n"
            "  $ trainyard ai hp-tuning-jobs describe 77 --region=us-central1\n\n"
            "Job State: JOB_STATE_QUEUED\n");

  std::ofstream(path) << "studySpec: {}\n";
  http_.Reply(200, {{"name", name}, {"state", "JOB_STATE_QUEUED"}});
  ASSERT_EQ(Run({"ai", "hp-tuning-jobs", "create", "--region=r", "--display-name=hp",
                 "--config=" + path}),
            0);
  body = json::parse(http_.requests[1].body);
  EXPECT_EQ(body["maxTrialCount"], 1);
  EXPECT_EQ(body["parallelTrialCount"], 1);
  // Bad input never reaches the server.
  EXPECT_EQ(Run({"ai", "hp-tuning-jobs", "create", "--region=r", "--display-name=hp",
                 "--config=" + path, "--algorithm=simulated-annealing"}),
            1);
  EXPECT_NE(err_.str().find("--algorithm"), std::string::npos) << err_.str();
  EXPECT_EQ(Run({"ai", "hp-tuning-jobs", "create", "--region=r", "--config=" + path}), 1);
  EXPECT_NE(err_.str().find("--display-name"), std::string::npos) << err_.str();
  EXPECT_EQ(http_.requests.size(), 2u);

  http_.Reply(200, json::object());
  ASSERT_EQ(Run({"ai", "hp-tuning-jobs", "cancel", name}), 0);
  EXPECT_EQ(http_.requests.back().url, "http://127.0.0.1:8080/v1/" + name + ":cancel");
  EXPECT_NE(err_.str().find("Request to cancel hyperparameter tuning job [77] has been sent.\n\n"
                            "You may view the status of your job with the command\n\n"
                            "  $ trainyard ai hp-tuning-jobs describe 77 --region=us-central1\n"),
            std::string::npos)
      << err_.str();
}

TEST_F(RunCliTest, ValidationErrorsNeverReachTheServer) {
  EXPECT_EQ(Run({"ai", "custom-jobs", "create", "--region=r", "--display-name=d",
                 "--worker-pool-spec=machine-type=m"}),
            1);
  EXPECT_NE(err_.str().find(
                "ERROR: (trainyard.ai.custom-jobs.create) Invalid value for [--worker-pool-spec]: "
                "Exactly one of keys [executor-image-uri, container-image-uri] is required.\n"),
            std::string::npos)
      << err_.str();
  EXPECT_TRUE(http_.requests.empty());
}

TEST_F(RunCliTest, UsageErrors) {
  EXPECT_EQ(Run({"ai", "custom-jobs", "describe"}), 2);
  EXPECT_EQ(Run({"ai-platform", "jobs", "describe", "j", "--", "x"}), 2);
  EXPECT_NE(err_.str().find("unrecognized arguments: x"), std::string::npos);
  EXPECT_EQ(Run({"--format=table", "ai-platform", "jobs", "describe", "j"}), 1);
  EXPECT_EQ(Run({"--help"}), 0);
  EXPECT_TRUE(http_.requests.empty());
}

TEST_F(RunCliTest, EveryCommandsHelpNamesTheGlobalFlags) {
  // docs/api.md shows `trainyard config gcloud --api-endpoint=... --project=...`.
  for (std::vector<std::string> command : {std::vector<std::string>{"config", "gcloud"},
                                           {"ai", "custom-jobs", "create"},
                                           {"ai-platform", "jobs", "submit", "training"},
                                           {"ai", "hp-tuning-jobs", "list"}}) {
    command.push_back("--help");
    EXPECT_EQ(Run(command), 0) << command[1];
    EXPECT_NE(out_.str().find("--api-endpoint"), std::string::npos) << out_.str();
    EXPECT_NE(out_.str().find("--project"), std::string::npos) << out_.str();
    EXPECT_NE(out_.str().find("--format"), std::string::npos) << out_.str();
  }
  EXPECT_TRUE(http_.requests.empty());
}

TEST_F(RunCliTest, TokenCreatePrintsTheTokenOnceAndOnlyItsHashForTheConfig) {
  ASSERT_EQ(Run({"token", "create", "--name", "ci-bot", "--role", "viewer", "--project-access",
                 "team-a", "--project-access", "team-b"}),
            0)
      << err_.str();
  const std::string out = out_.str();
  const size_t at = out.find("ty_");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string token = out.substr(at, 46);
  EXPECT_NE(out.find("sha256: " + auth::Sha256Hex(token)), std::string::npos) << out;
  EXPECT_EQ(out.find(token, at + 1), std::string::npos) << "the token is printed once";
  EXPECT_NE(out.find("role: viewer\n    projects: [\"team-a\", \"team-b\"]"), std::string::npos)
      << out;
  // The printed entry is one the daemon accepts.
  EXPECT_EQ(Run({"token", "create", "--name", "x", "--role", "owner", "--project-access", "p"}), 1);
  EXPECT_NE(err_.str().find("--role: must be viewer, editor or admin"), std::string::npos);
  EXPECT_EQ(Run({"token", "create", "--name", "x"}), 2);  // --project-access is required.
  EXPECT_TRUE(http_.requests.empty());
}

TEST_F(RunCliTest, AnUnreadableTokenFileIsAnErrorBeforeAnyRequest) {
  EXPECT_EQ(Run({"--access-token-file", "/nonexistent/token", "ai", "custom-jobs", "list",
                 "--region", "us-central1"}),
            1);
  EXPECT_NE(err_.str().find("/nonexistent/token"), std::string::npos) << err_.str();
  EXPECT_TRUE(http_.requests.empty());
}

}  // namespace
}  // namespace ty::cli
