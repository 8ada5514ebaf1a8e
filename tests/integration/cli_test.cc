// The `trainyard` CLI against the real daemon and container engine: build/bin/trainyard
// runs as a subprocess (as a user would run it) against trainyardd on 127.0.0.1:0
// (daemon_harness.h), with the busybox test image (scripts/build-test-image).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>

#include "integration/daemon_harness.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

using CliRun = ProcessRun;

// Runs build/bin/trainyard with `args`, TRAINYARD_API pointing at `endpoint`.
CliRun RunTrainyard(const std::string& endpoint, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {std::string(TY_BINARY_DIR) + "/bin/trainyard"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, {{"TRAINYARD_API", endpoint}, {"TRAINYARD_PROJECT", ""}});
}

class CliIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EngineAnswers())
      GTEST_SKIP() << "no container engine at " << EngineSocket() << " (run scripts/setup)";
    if (Http("GET", std::string("http://d/v1.41/images/") + kTestImage + "/json", "", true,
             EngineSocket(), 5)
            .status != 200) {
      GTEST_SKIP() << kTestImage << " missing (run scripts/build-test-image)";
    }
    daemon_ = std::make_unique<Daemon>(std::vector<std::string>{"--executor", "container"});
  }

  CliRun Cli(const std::vector<std::string>& args) {
    CliRun r = RunTrainyard(daemon_->base(), args);
    if (r.rc != 0)
      std::cerr << "trainyard rc=" << r.rc << "\nstdout:\n"
                << r.out << "\nstderr:\n"
                << r.err << "\n";
    return r;
  }

  std::unique_ptr<Daemon> daemon_;
};

TEST_F(CliIntegrationTest, CustomJobCreateStreamLogsAndDescribe) {
  CliRun created =
      Cli({"ai", "custom-jobs", "create", "--region=local", "--display-name=hello",
           std::string("--worker-pool-spec=machine-type=n1-standard-4,container-image-uri=") +
               kTestImage,
           "--command=sh,-c", "--args=echo hello; echo bye"});
  ASSERT_EQ(created.rc, 0) << daemon_->Log();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      created.err, m,
      std::regex(
          R"(CustomJob \[(projects/[^\]]+/customJobs/(\d+))\] is submitted successfully\.)")))
      << created.err;
  const std::string name = m[1], id = m[2];
  EXPECT_NE(created.err.find("$ trainyard ai custom-jobs stream-logs " + name), std::string::npos);

  CliRun logs = Cli({"ai", "custom-jobs", "stream-logs", id, "--region=local"});
  ASSERT_EQ(logs.rc, 0) << daemon_->Log();
  EXPECT_TRUE(std::regex_search(
      logs.out,
      std::regex(R"(\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}\tworkerpool0-0\thello\n)")))
      << logs.out;
  EXPECT_NE(logs.out.find("\tworkerpool0-0\tbye\n"), std::string::npos) << logs.out;

  CliRun described = Cli({"ai", "custom-jobs", "describe", name, "--format=json"});
  ASSERT_EQ(described.rc, 0);
  nlohmann::json job = nlohmann::json::parse(described.out, nullptr, false);
  EXPECT_EQ(job.value("state", ""), "JOB_STATE_SUCCEEDED") << described.out;
  EXPECT_EQ(job.value("displayName", ""), "hello");

  CliRun listed = Cli({"ai", "custom-jobs", "list", "--region=local", "--format=json"});
  ASSERT_EQ(listed.rc, 0);
  EXPECT_NE(listed.out.find(name), std::string::npos) << listed.out;
}

TEST_F(CliIntegrationTest, MlSubmitWithStreamLogsSucceeds) {
  CliRun r = Cli({"ai-platform", "jobs", "submit", "training", "cli_ok_1", "--region=local",
                  std::string("--master-image-uri=") + kTestImage, "--stream-logs", "--", "sh",
                  "-c", "echo from-ml-job"});
  ASSERT_EQ(r.rc, 0) << daemon_->Log();
  EXPECT_NE(r.err.find("Job [cli_ok_1] submitted successfully."), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\tmaster-replica-0\t\tfrom-ml-job\n"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("jobId: cli_ok_1\nstate: SUCCEEDED\n"), std::string::npos) << r.out;

  CliRun table = Cli({"ai-platform", "jobs", "list"});
  ASSERT_EQ(table.rc, 0);
  EXPECT_EQ(table.out.rfind("JOB_ID", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("cli_ok_1  SUCCEEDED"), std::string::npos) << table.out;
}

TEST_F(CliIntegrationTest, MlSubmitWithStreamLogsOfAFailingJobExitsOne) {
  CliRun r = RunTrainyard(
      daemon_->base(), {"ai-platform", "jobs", "submit", "training", "cli_fail_1", "--region=local",
                        std::string("--master-image-uri=") + kTestImage, "--stream-logs", "--",
                        "sh", "-c", "echo about-to-fail; exit 3"});
  EXPECT_EQ(r.rc, 1) << r.err << daemon_->Log();
  EXPECT_NE(r.err.find("about-to-fail"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("state: FAILED"), std::string::npos) << r.out;
}

TEST_F(CliIntegrationTest, DescribeOfAMissingJobFails) {
  CliRun r = RunTrainyard(daemon_->base(),
                          {"ai", "custom-jobs", "describe", "987654321", "--region=local"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("ERROR: (trainyard.ai.custom-jobs.describe) "), std::string::npos) << r.err;
  CliRun ml = RunTrainyard(daemon_->base(), {"ai-platform", "jobs", "describe", "no_such_job"});
  EXPECT_EQ(ml.rc, 1);
  EXPECT_NE(ml.err.find("ERROR: (trainyard.ai-platform.jobs.describe) "), std::string::npos)
      << ml.err;
}

// Found by a hostile probe (issue 19): with --listen 0.0.0.0 a request from another
// host ran `id` here through the process executor. Without access tokens the daemon
// refuses any address but loopback, and says why.
TEST(DaemonListenTest, ANonLoopbackAddressIsRefusedWithTheReason) {
  const std::string data =
      std::filesystem::temp_directory_path() / ("ty-listen-" + std::to_string(::getpid()));
  for (const std::string listen : {"0.0.0.0:0", "192.0.2.1:0", "[::]:0"}) {
    ProcessRun r = RunProcess({BinaryDir() + "/bin/trainyardd", "--listen", listen, "--data-dir",
                               data, "--executor", "process"},
                              {}, 30);
    EXPECT_NE(r.rc, 0) << listen << ": " << r.err;
    const std::string said = r.out + r.err;
    EXPECT_NE(said.find("serves only loopback addresses"), std::string::npos) << said;
  }
  std::filesystem::remove_all(data);
}

// Issue 30 item 2: the registry takes no credential without tokens, so beyond loopback
// anyone reaching it would push and pull every project's images. On e6a55ab such a
// daemon started with a warning.
TEST(DaemonListenTest, AnOpenRegistryBeyondLoopbackIsRefusedWithTheReason) {
  const std::string data =
      std::filesystem::temp_directory_path() / ("ty-open-registry-" + std::to_string(::getpid()));
  ProcessRun r = RunProcess({BinaryDir() + "/bin/trainyardd", "--listen", "127.0.0.1:0",
                             "--data-dir", data, "--registry", "192.0.2.1:80"},
                            {}, 30);
  EXPECT_NE(r.rc, 0) << r.err;
  const std::string said = r.out + r.err;
  EXPECT_NE(said.find("--registry 192.0.2.1:80: without access tokens"), std::string::npos) << said;
  EXPECT_NE(said.find("add `tokens:`"), std::string::npos) << said;
  std::filesystem::remove_all(data);
}

TEST(CliNoDaemonTest, ConnectionRefusedIsExplained) {
  CliRun r = RunTrainyard("http://127.0.0.1:1", {"ai-platform", "jobs", "list"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("could not connect to the Trainyard API at http://127.0.0.1:1"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("trainyardd"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ty::testing
