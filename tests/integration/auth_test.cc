// Access tokens end to end (issue 19): a daemon with `tokens:` in its config, the
// trainyard CLI with --access-token-file and $TRAINYARD_TOKEN, and the real gcloud
// configured by `trainyard config gcloud` to send a token (auth/access_token_file)
// for jobs, Logging and Storage; roles hold (a viewer cannot create or write), and a
// daemon with tokens may listen beyond loopback. The full matrix of routes and
// roles: tests/api/api_auth_test.cc.
#include <gmock/gmock.h>
#include <sys/stat.h>

#include <fstream>

#include "auth/tokens.h"
#include "integration/daemon_harness.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kAlice[] = "ty_alice_is_an_editor_of_tenant_a";
constexpr char kVal[] = "ty_val_only_views_tenant_a";

// A config granting alice (editor) and val (viewer) on tenant-a; its directory.
std::filesystem::path TokenConfig() {
  static int counter = 0;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("ty-auth-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.yaml") << "tokens:\n"
                                     << "  - name: alice\n    sha256: " << auth::Sha256Hex(kAlice)
                                     << "\n    role: editor\n    projects: [tenant-a]\n"
                                     << "  - name: val\n    sha256: " << auth::Sha256Hex(kVal)
                                     << "\n    role: viewer\n    projects: [tenant-a]\n";
  std::ofstream(dir / "alice.token") << kAlice << "\n";
  std::ofstream(dir / "val.token") << kVal;
  return dir;
}

class AuthDaemonTest : public ::testing::Test {
 protected:
  AuthDaemonTest()
      : config_(TokenConfig()),
        daemon_({"--config", (config_ / "config.yaml").string(), "--executor", "process"}) {}
  ~AuthDaemonTest() override {
    std::error_code ec;
    std::filesystem::remove_all(config_, ec);
  }

  ProcessRun Cli(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), {BinaryDir() + "/bin/trainyard", "--api-endpoint", daemon_.base(),
                               "--project", "tenant-a"});
    env.emplace("TRAINYARD_API", "");
    env.emplace("TRAINYARD_TOKEN", "");
    return RunProcess(args, env, 60);
  }

  ProcessRun Gcloud(std::vector<std::string> args) {
    args.insert(args.begin(), "gcloud");
    return RunProcess(args,
                      {{"CLOUDSDK_CONFIG", (config_ / "gcloud").string()},
                       {"CLOUDSDK_CORE_DISABLE_PROMPTS", "1"}},
                      120);
  }

  std::filesystem::path config_;
  Daemon daemon_;
};

const std::vector<std::string> kList = {"ai", "custom-jobs", "list", "--region", "us-central1"};
const std::vector<std::string> kCreate = {"ai",
                                          "custom-jobs",
                                          "create",
                                          "--region",
                                          "us-central1",
                                          "--display-name",
                                          "tokened",
                                          "--worker-pool-spec=machine-type=n1-standard-4,replica-"
                                          "count=1,container-image-uri=localhost/x:1"};

TEST_F(AuthDaemonTest, TheCliSendsItsTokenFromAFileOrTheEnvironment) {
  ProcessRun none = Cli(kList);
  EXPECT_EQ(none.rc, 1);
  EXPECT_THAT(none.err, HasSubstr("missing an access token")) << none.err;
  ProcessRun wrong = Cli(kList, {{"TRAINYARD_TOKEN", "ty_guess"}});
  EXPECT_EQ(wrong.rc, 1);
  EXPECT_THAT(wrong.err, HasSubstr("invalid access token")) << wrong.err;
  ProcessRun env = Cli(kCreate, {{"TRAINYARD_TOKEN", kAlice}});
  EXPECT_EQ(env.rc, 0) << env.err;
  std::vector<std::string> listed = kList;
  listed.insert(listed.begin(), {"--access-token-file", (config_ / "alice.token").string()});
  ProcessRun file = Cli(listed);
  EXPECT_EQ(file.rc, 0) << file.err;
  EXPECT_THAT(file.out, HasSubstr("tokened"));
  // A viewer lists and cannot create; the message says which role it lacks.
  ProcessRun view = Cli(kList, {{"TRAINYARD_TOKEN", kVal}});
  EXPECT_EQ(view.rc, 0) << view.err;
  ProcessRun create = Cli(kCreate, {{"TRAINYARD_TOKEN", kVal}});
  EXPECT_EQ(create.rc, 1);
  EXPECT_THAT(create.err, HasSubstr("\"val\" needs the editor role on project \"tenant-a\""));
  // The token never reaches the daemon's log.
  EXPECT_THAT(daemon_.Log(), ::testing::Not(HasSubstr(kAlice)));
}

TEST_F(AuthDaemonTest, GcloudSendsTheTokenForJobsLoggingAndStorage) {
  if (RunProcess({"gcloud", "--version"}, {}, 60).rc != 0) GTEST_SKIP() << "gcloud missing";
  auto configure = [&](const std::string& token_file) {
    std::vector<std::string> args = {BinaryDir() + "/bin/trainyard",
                                     "config",
                                     "gcloud",
                                     "--api-endpoint",
                                     daemon_.base(),
                                     "--project",
                                     "tenant-a"};
    if (!token_file.empty()) args.insert(args.end(), {"--access-token-file", token_file});
    return RunProcess(
        args, {{"CLOUDSDK_CONFIG", (config_ / "gcloud").string()}, {"TRAINYARD_TOKEN", ""}});
  };
  ASSERT_EQ(configure("").rc, 0);
  ProcessRun anonymous = Gcloud({"ai", "custom-jobs", "list", "--region", "us-central1"});
  EXPECT_NE(anonymous.rc, 0);
  EXPECT_THAT(anonymous.err, HasSubstr("missing an access token")) << anonymous.err;

  ProcessRun set = configure((config_ / "alice.token").string());
  ASSERT_EQ(set.rc, 0) << set.err;
  EXPECT_THAT(set.out, HasSubstr("auth/access_token_file = " + (config_ / "alice.token").string()));
  std::vector<std::string> create(kCreate.begin(), kCreate.end());
  ProcessRun created = Gcloud(create);
  EXPECT_EQ(created.rc, 0) << created.err;
  ProcessRun listed = Gcloud({"ai", "custom-jobs", "list", "--region", "us-central1"});
  EXPECT_EQ(listed.rc, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("tokened"));
  ProcessRun logs = Gcloud({"logging", "read", "resource.type=ml_job", "--limit", "1"});
  EXPECT_EQ(logs.rc, 0) << logs.err;
  std::ofstream(config_ / "weights.txt") << "w=1\n";
  ASSERT_EQ(Gcloud({"storage", "buckets", "create", "gs://alice-out"}).rc, 0);
  ProcessRun cp =
      Gcloud({"storage", "cp", (config_ / "weights.txt").string(), "gs://alice-out/weights.txt"});
  EXPECT_EQ(cp.rc, 0) << cp.err;

  // gcloud reads the file at every command: val's token now, a viewer.
  std::filesystem::copy_file(config_ / "val.token", config_ / "alice.token",
                             std::filesystem::copy_options::overwrite_existing);
  ProcessRun cat = Gcloud({"storage", "cat", "gs://alice-out/weights.txt"});
  EXPECT_EQ(cat.rc, 0) << cat.err;
  EXPECT_EQ(cat.out, "w=1\n");
  ProcessRun write =
      Gcloud({"storage", "cp", (config_ / "weights.txt").string(), "gs://alice-out/again.txt"});
  EXPECT_NE(write.rc, 0);
  EXPECT_THAT(write.err, HasSubstr("needs the editor role")) << write.err;
  ProcessRun refused = Gcloud(create);
  EXPECT_NE(refused.rc, 0);
  EXPECT_THAT(refused.err, HasSubstr("PERMISSION_DENIED")) << refused.err;
}

// With tokens the daemon may serve beyond loopback: every caller must then show one.
TEST(AuthListenTest, ADaemonWithTokensListensOnAnyAddress) {
  std::filesystem::path dir = TokenConfig();
  ProcessRun r = RunProcess({"timeout", "3", BinaryDir() + "/bin/trainyardd", "--listen",
                             "0.0.0.0:0", "--data-dir", (dir / "data").string(), "--executor",
                             "process", "--config", (dir / "config.yaml").string()},
                            {}, 30);
  EXPECT_EQ(r.rc, 124) << r.out << r.err;  // Still serving when `timeout` stopped it.
  EXPECT_THAT(r.out + r.err, HasSubstr("listening on http://0.0.0.0:"));
  EXPECT_THAT(r.out + r.err, HasSubstr("access tokens: 2"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ty::testing
