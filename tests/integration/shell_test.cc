// enableWebAccess for real (issue 34 item 8): a job created with the flag gets a
// webAccessUris entry per running replica; its shell, over the daemon's WebSocket, runs
// commands in the replica's container (hostname, resize); it closes when the replica
// ends and its shell dies when the socket closes. Refused without the flag, to a
// viewer, and to another site's page. Real daemon, real podman.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "auth/tokens.h"
#include "integration/daemon_harness.h"
#include "integration/shell_client.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

using nlohmann::json;

constexpr char kBase[] = "/v1/projects/shells/locations/local/customJobs";
constexpr char kEditor[] = "ty_ed_edits_shells_project";
constexpr char kViewer[] = "ty_vi_only_views_shells";

std::string SleepingJob(bool web_access) {
  json body = {{"displayName", "shell"},
               {"jobSpec",
                {{"workerPoolSpecs",
                  {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                    {"replicaCount", "1"},
                    {"containerSpec",
                     {{"imageUri", kTestImage}, {"command", {"sh", "-c", "sleep 600"}}}}}}}}}};
  if (web_access) body["jobSpec"]["enableWebAccess"] = true;
  return body.dump();
}

int PortOf(const Daemon& d) { return std::stoi(d.base().substr(d.base().rfind(':') + 1)); }

// The API path a webAccessUris page opens: what follows '#'.
std::string ShellPath(const std::string& uri) { return uri.substr(uri.find('#') + 1); }

class ShellTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EngineAnswers() || !EngineHasImage(kTestImage)) {
      if (std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr) FAIL() << "engine or test image";
      GTEST_SKIP() << "engine or " << kTestImage << " unavailable";
    }
    config_ = std::filesystem::temp_directory_path() /
              ("ty-shell-" + std::to_string(::getpid()) + ".yaml");
    std::ofstream(config_) << "tokens:\n  - name: ed\n    sha256: " << auth::Sha256Hex(kEditor)
                           << "\n    role: editor\n    projects: [shells]\n"
                           << "  - name: vi\n    sha256: " << auth::Sha256Hex(kViewer)
                           << "\n    role: viewer\n    projects: [shells]\n";
    daemon_ = std::make_unique<Daemon>(std::vector<std::string>{"--config", config_.string()});
    daemon_->set_token(kEditor);
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
    daemon_.reset();
    std::filesystem::remove(config_);
  }

  // Submits, waits until it runs; the job's resource.
  json Running(bool web_access) {
    HttpReply made = daemon_->Post(kBase, SleepingJob(web_access));
    EXPECT_EQ(made.status, 200) << made.body;
    const std::string path = "/v1/" + made.Json().value("name", "");
    json job;
    for (int i = 0; i < 300; ++i) {
      job = daemon_->Get(path).Json();
      const bool uris = job.contains("webAccessUris") || !web_access;
      if (job.value("state", "") == "JOB_STATE_RUNNING" && uris) return job;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "not running with its shells: " << job.dump();
    return job;
  }
  std::string Container(const json& job) {
    const std::string name = job.value("name", "");
    return "ty-" + name.substr(name.rfind('/') + 1) + "-1-0-0";
  }

  std::filesystem::path config_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(ShellTest, AShellRunsInTheReplicaAndEndsWithIt) {
  const json job = Running(true);
  ASSERT_TRUE(job.contains("webAccessUris")) << job.dump();
  const std::string uri = job["webAccessUris"].value("workerpool0-0", "");
  EXPECT_EQ(uri.rfind(daemon_->base() + "/console/shell.html#/v1/" +
                          job["name"].get<std::string>() + ":shell?replica=workerpool0-0",
                      0),
            0u)
      << uri;
  ProcessRun inspect =
      RunProcess({"podman", "inspect", "-f", "{{.Config.Hostname}}", Container(job)});
  ASSERT_EQ(inspect.rc, 0) << inspect.err;
  const std::string hostname = inspect.out.substr(0, inspect.out.find('\n'));

  ShellClient shell;
  ASSERT_TRUE(shell.Open(PortOf(*daemon_), ShellPath(uri), daemon_->base()));
  shell.Hello(kEditor);
  shell.Say(R"({"resize":{"rows":33,"cols":101}})");
  shell.Type("echo \"at:$(hostname):$(stty size | tr ' ' x)\"\n");
  EXPECT_TRUE(shell.WaitFor("at:" + hostname + ":33x101")) << shell.shown() << shell.said();

  // A foreground command dies with the socket: the shell leads its terminal.
  shell.Type("sleep 7777\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto sleeping = [&] {
    return RunProcess({"podman", "top", Container(job), "args"}).out.find("sleep 7777") !=
           std::string::npos;
  };
  EXPECT_TRUE(sleeping());
  shell.Close();
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    gone = !sleeping();
  }
  EXPECT_TRUE(gone) << "the shell's command outlived its socket";

  // A second shell is closed, saying why, when the replica ends.
  ShellClient second;
  ASSERT_TRUE(second.Open(PortOf(*daemon_), ShellPath(uri), daemon_->base()));
  second.Hello(kEditor);
  second.Type("echo ready-$((6*7))\n");
  ASSERT_TRUE(second.WaitFor("ready-42")) << second.shown() << second.said();
  ASSERT_EQ(daemon_->Post("/v1/" + job["name"].get<std::string>() + ":cancel", "{}").status, 200);
  EXPECT_TRUE(second.WaitClosed(60));
  EXPECT_NE(second.said().find("shell ended"), std::string::npos) << second.said();
  const json ended = daemon_->WaitForField("/v1/" + job["name"].get<std::string>(), "state",
                                           {"JOB_STATE_CANCELLED"});
  EXPECT_FALSE(ended.contains("webAccessUris")) << ended.dump();
}

TEST_F(ShellTest, RefusedWithoutTheFlagToViewersAndToOtherSites) {
  const json plain = Running(false);
  EXPECT_FALSE(plain.contains("webAccessUris")) << plain.dump();
  ShellClient no_flag;
  ASSERT_TRUE(no_flag.Open(
      PortOf(*daemon_), "/v1/" + plain["name"].get<std::string>() + ":shell?replica=workerpool0-0",
      daemon_->base()));
  no_flag.Hello(kEditor);
  EXPECT_TRUE(no_flag.WaitClosed());
  EXPECT_NE(no_flag.said().find("enableWebAccess"), std::string::npos) << no_flag.said();
  EXPECT_NE(no_flag.said().find("FAILED_PRECONDITION"), std::string::npos) << no_flag.said();
  EXPECT_TRUE(no_flag.shown().empty());

  const json job = Running(true);
  const std::string path = ShellPath(job["webAccessUris"].value("workerpool0-0", ""));
  ShellClient viewer;
  ASSERT_TRUE(viewer.Open(PortOf(*daemon_), path, daemon_->base()));
  viewer.Hello(kViewer);
  EXPECT_TRUE(viewer.WaitClosed());
  EXPECT_NE(viewer.said().find("PERMISSION_DENIED"), std::string::npos) << viewer.said();
  EXPECT_TRUE(viewer.shown().empty());

  ShellClient nobody;
  ASSERT_TRUE(nobody.Open(PortOf(*daemon_), path, daemon_->base()));
  nobody.Hello();
  EXPECT_TRUE(nobody.WaitClosed());
  EXPECT_NE(nobody.said().find("UNAUTHENTICATED"), std::string::npos) << nobody.said();

  // Another site's page cannot even upgrade (a browser would send the user's cookies
  // and tokens are in no cookie, but Origin is checked all the same).
  ShellClient other_site;
  EXPECT_FALSE(other_site.Open(PortOf(*daemon_), path, "http://evil.example"));

  // A plain GET is no shell.
  HttpReply plain_get = daemon_->Get(path);
  EXPECT_EQ(plain_get.status, 400) << plain_get.body;
}

}  // namespace
}  // namespace ty::testing
