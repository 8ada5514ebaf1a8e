// The registry behind the daemon's tokens (issue 30 item 2), for real: a daemon with
// `tokens:` runs docker-registry with token auth and is its token service; podman logs
// in with a token, or gets gcloud's access token from `gcloud auth configure-docker`'s
// helper; pushes go only under a project the token edits; a job pulls its own
// project's images (with its job's credential) and the shared runtimes', never another
// project's. On 3c2a683 every push here succeeded without a credential and project B's
// job ran project A's image.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "auth/tokens.h"
#include "integration/daemon_harness.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kEditorA[] = "ty_registry_editor_of_proj_a";
constexpr char kViewerA[] = "ty_registry_viewer_of_proj_a";
constexpr char kEditorB[] = "ty_registry_editor_of_proj_b";
constexpr char kAdmin[] = "ty_registry_admin_of_everything";

class RegistryAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string missing = MissingForRegistryTests(); !missing.empty()) {
      if (std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr) FAIL() << missing << " missing";
      GTEST_SKIP() << missing << " unavailable";
    }
    std::mt19937 rng{std::random_device{}()};
    address_ = RandomRegistryAddress(rng);
    suffix_ = std::to_string(rng() % 1000000);
    dir_ = fs::temp_directory_path() / ("ty-regauth-" + std::to_string(::getpid()) + "-" + suffix_);
    fs::create_directories(dir_ / "home");
    std::ofstream(dir_ / "config.yaml")
        << "tokens:\n"
        << Grant("ea", kEditorA, "editor", "proj-a") << Grant("va", kViewerA, "viewer", "proj-a")
        << Grant("eb", kEditorB, "editor", "proj-b") << Grant("admin", kAdmin, "admin", "\"*\"");
    daemon_ = std::make_unique<Daemon>(std::vector<std::string>{
        "--config", (dir_ / "config.yaml").string(), "--registry", address_});
    ASSERT_TRUE(WaitForRegistry()) << daemon_->Log();
    image_ = "gcr.io/proj-a/hello-" + suffix_ + ":v1";
    mirror_ = address_ + "/proj-a/hello-" + suffix_ + ":v1";
    made_ = {image_, mirror_};
    std::ofstream(dir_ / "Dockerfile") << "FROM " << kTestImage << "\n"
                                       << "ENTRYPOINT [\"echo\", \"hello from proj-a\"]\n";
    ASSERT_EQ(RunProcess({"podman", "build", "-q", "-t", mirror_, dir_.string()}).rc, 0);
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
    daemon_.reset();
    for (const std::string& image : made_) RunProcess({"podman", "rmi", "-f", image});
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  static std::string Grant(const char* name, const char* token, const char* role,
                           const char* project) {
    return std::string("  - name: ") + name + "\n    sha256: " + auth::Sha256Hex(token) +
           "\n    role: " + role + "\n    projects: [" + project + "]\n";
  }

  bool WaitForRegistry() {
    for (int i = 0; i < 100; ++i) {
      ProcessRun r = RunProcess({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--noproxy",
                                 "*", "http://" + address_ + "/v2/"});
      if (r.out == "401") return true;  // It wants a token.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  // podman with an auth file of its own: logged in with `token` ("" = no credential).
  ProcessRun Podman(const std::string& token, std::vector<std::string> args) {
    const std::string auth = (dir_ / ("auth-" + std::to_string(++auth_files_) + ".json")).string();
    std::ofstream(auth) << "{}";
    if (!token.empty()) {
      ProcessRun login = RunProcess({"podman", "login", "--authfile", auth, "--tls-verify=false",
                                     "-u", "oauth2accesstoken", "-p", token, address_},
                                    {}, 60);
      if (login.rc != 0) return login;
    }
    std::vector<std::string> argv = {"podman", args[0], "--authfile", auth, "--tls-verify=false"};
    argv.insert(argv.end(), args.begin() + 1, args.end());
    return RunProcess(argv, {}, 180);
  }

  // A request to the jobs API as `token`.
  nlohmann::json Submit(const std::string& token, const std::string& project,
                        const std::string& image, int* status) {
    nlohmann::json job = {{"displayName", "registry-auth"},
                          {"jobSpec",
                           {{"workerPoolSpecs",
                             {{{"machineSpec", {{"machineType", "n1-standard-4"}}},
                               {"replicaCount", 1},
                               {"containerSpec", {{"imageUri", image}}}}}}}}};
    const std::string url =
        daemon_->base() + "/v1/projects/" + project + "/locations/us-central1/customJobs";
    ProcessRun r =
        RunProcess({"curl", "-s", "-w", "\n%{http_code}", "-H", "Authorization: Bearer " + token,
                    "-H", "Content-Type: application/json", "-X", "POST", url, "-d", job.dump()});
    const size_t nl = r.out.rfind('\n');
    *status = std::atoi(r.out.substr(nl + 1).c_str());
    return nlohmann::json::parse(r.out.substr(0, nl), nullptr, false);
  }

  nlohmann::json Get(const std::string& token, const std::string& path) {
    ProcessRun r =
        RunProcess({"curl", "-s", "-H", "Authorization: Bearer " + token, daemon_->base() + path});
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  nlohmann::json WaitForEnd(const std::string& token, const std::string& name) {
    nlohmann::json job;
    for (int i = 0; i < 600; ++i) {
      job = Get(token, "/v1/" + name);
      const std::string state = job.value("state", "");
      if (state == "JOB_STATE_SUCCEEDED" || state == "JOB_STATE_FAILED") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return job;
  }

  std::string address_, suffix_, image_, mirror_;
  fs::path dir_;
  int auth_files_ = 0;
  std::unique_ptr<Daemon> daemon_;
  std::vector<std::string> made_;
};

TEST_F(RegistryAuthTest, APushNeedsATokenThatEditsTheImagesProject) {
  ProcessRun anonymous = Podman("", {"push", "-q", mirror_});
  EXPECT_NE(anonymous.rc, 0) << "pushed without a credential";
  ProcessRun bad_login = Podman("ty_nobody_issued_this", {"push", "-q", mirror_});
  EXPECT_NE(bad_login.rc, 0);
  EXPECT_THAT(bad_login.err, HasSubstr("invalid username/password"));
  EXPECT_NE(Podman(kEditorB, {"push", "-q", mirror_}).rc, 0) << "proj-b pushed into proj-a";
  EXPECT_NE(Podman(kViewerA, {"push", "-q", mirror_}).rc, 0) << "a viewer pushed";
  ProcessRun editor = Podman(kEditorA, {"push", "-q", mirror_});
  ASSERT_EQ(editor.rc, 0) << editor.out << editor.err;
  // Reads follow the same grants: proj-a's viewer pulls, nobody else does.
  ASSERT_EQ(RunProcess({"podman", "rmi", mirror_}).rc, 0);
  EXPECT_NE(Podman("", {"pull", "-q", mirror_}).rc, 0) << "pulled without a credential";
  EXPECT_NE(Podman(kEditorB, {"pull", "-q", mirror_}).rc, 0) << "proj-b pulled proj-a's image";
  ProcessRun viewer = Podman(kViewerA, {"pull", "-q", mirror_});
  EXPECT_EQ(viewer.rc, 0) << viewer.err;
}

TEST_F(RegistryAuthTest, AJobPullsItsOwnProjectsImagesOnlyWithItsJobsCredential) {
  const std::string digest_file = (dir_ / "pushed-digest").string();
  ASSERT_EQ(Podman(kEditorA, {"push", "-q", "--digestfile", digest_file, mirror_}).rc, 0);
  ASSERT_EQ(RunProcess({"podman", "rmi", mirror_}).rc, 0);
  ASSERT_FALSE(EngineHasImage(image_));
  int status = 0;
  nlohmann::json refused = Submit(kEditorB, "proj-b", image_, &status);
  EXPECT_EQ(status, 403) << refused.dump();
  EXPECT_THAT(refused.dump(), HasSubstr("is an image of project proj-a"));
  nlohmann::json made = Submit(kEditorA, "proj-a", image_, &status);
  ASSERT_EQ(status, 200) << made.dump();
  nlohmann::json done = WaitForEnd(kEditorA, made.value("name", ""));
  EXPECT_EQ(done.value("state", ""), "JOB_STATE_SUCCEEDED") << done.dump();
  const nlohmann::json logs = Get(kEditorA, "/v1/" + made.value("name", "") + "/logs");
  EXPECT_THAT(logs.dump(), HasSubstr("hello from proj-a"));
  EXPECT_THAT(logs.dump(), HasSubstr("Image " + image_ + " is sha256:"));
  // The record names the manifest the registry gave, asked with the job's credential:
  // the pushed one, though the engine also lists the manifest it made when building.
  std::string pushed;
  std::ifstream(digest_file) >> pushed;
  const nlohmann::json details = Get(kEditorA, "/v1/" + made.value("name", "") + "/details");
  ASSERT_TRUE(details.contains("images")) << details.dump();
  EXPECT_EQ(details["images"][0].value("digest", ""), pushed) << details.dump();
}

TEST_F(RegistryAuthTest, TheSharedRuntimesArePulledByAllAndPushedByAdminsOnly) {
  const std::string runtime = address_ + "/vertex-ai/training/shared-" + suffix_ + ":1";
  made_.push_back(runtime);
  ASSERT_EQ(RunProcess({"podman", "tag", mirror_, runtime}).rc, 0);
  EXPECT_NE(Podman(kEditorA, {"push", "-q", runtime}).rc, 0) << "an editor pushed a runtime";
  ProcessRun admin = Podman(kAdmin, {"push", "-q", runtime});
  ASSERT_EQ(admin.rc, 0) << admin.err;
  ASSERT_EQ(RunProcess({"podman", "rmi", runtime}).rc, 0);
  ProcessRun anyone = Podman("", {"pull", "-q", runtime});
  EXPECT_EQ(anyone.rc, 0) << anyone.err;
}

// The guides' way: `gcloud auth configure-docker`, whose helper hands gcloud's access
// token, which `trainyard config gcloud --access-token-file` made the daemon's token;
// `trainyard config registry --credential-helper` leaves the names to that helper.
TEST_F(RegistryAuthTest, GcloudsCredentialHelperPushesByTheGoogleNameWithTheDaemonsToken) {
  const std::map<std::string, std::string> env = {{"HOME", (dir_ / "home").string()},
                                                  {"CLOUDSDK_CONFIG", (dir_ / "gcloud").string()},
                                                  {"CLOUDSDK_CORE_DISABLE_PROMPTS", "1"},
                                                  {"TRAINYARD_TOKEN", ""}};
  auto as_token = [&](const char* token) {
    std::ofstream(dir_ / "token", std::ios::trunc) << token;
    ProcessRun gcloud = RunProcess(
        {BinaryDir() + "/bin/trainyard", "config", "gcloud", "--api-endpoint", daemon_->base(),
         "--project", "proj-a", "--access-token-file", (dir_ / "token").string()},
        env);
    EXPECT_EQ(gcloud.rc, 0) << gcloud.err;
  };
  as_token(kEditorA);
  ProcessRun helper = RunProcess({"gcloud", "auth", "configure-docker", "gcr.io", "--quiet"}, env);
  ASSERT_EQ(helper.rc, 0) << helper.err;
  const fs::path hosts = dir_ / "hosts";
  fs::copy_file("/etc/hosts", hosts, fs::copy_options::overwrite_existing);
  const fs::path conf = dir_ / "registries.conf";
  ProcessRun config = RunProcess(
      {BinaryDir() + "/bin/trainyard", "config", "registry", "--address", address_, "--hosts-file",
       hosts.string(), "--registries-conf", conf.string(), "--credential-helper", "--plain-http"},
      env);
  ASSERT_EQ(config.rc, 0) << config.err;
  EXPECT_THAT(config.out, HasSubstr("credential helper"));
  ASSERT_EQ(RunProcess({"podman", "tag", mirror_, image_}).rc, 0);
  auto push = [&] {
    std::map<std::string, std::string> with = env;
    with["CONTAINERS_REGISTRIES_CONF"] = conf.string();
    return RunProcess({"unshare", "-m", "sh", "-ec",
                       "mount --bind " + hosts.string() + " /etc/hosts\npodman push -q " + image_},
                      with, 180);
  };
  ProcessRun pushed = push();
  EXPECT_EQ(pushed.rc, 0) << pushed.out << pushed.err;
  as_token(kEditorB);  // gcloud re-reads the file: now proj-b's editor.
  EXPECT_NE(push().rc, 0) << "proj-b's token pushed into proj-a";
}

// The token service answers Docker's protocol itself; what it refuses, it says.
TEST_F(RegistryAuthTest, TheTokenServiceRefusesUnknownCredentialsAndMalformedScopes) {
  const std::string url = daemon_->base() + "/registry/token?service=trainyard-registry";
  auto code = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}"});
    return RunProcess(args).out;
  };
  EXPECT_EQ(code({"-u", "x:ty_unknown", url}), "401");
  EXPECT_EQ(code({"-u", std::string("x:") + kEditorA, url + "&scope=repository:A/B:pull"}), "400");
  EXPECT_EQ(
      code({"-u", std::string("x:") + kEditorA, daemon_->base() + "/registry/token?service=other"}),
      "400");
  EXPECT_EQ(code({"-u", std::string("x:") + kEditorA, url + "&scope=repository:proj-a/x:push"}),
            "200");
  EXPECT_EQ(code({url + "&scope=repository:proj-a/x:pull"}), "200");  // A token of nothing.
}

}  // namespace
}  // namespace ty::testing
