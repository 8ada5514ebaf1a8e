// Python-package jobs for real (issue 20): sdists in a bucket, installed with pip into a
// prebuilt runtime named as Vertex names it, offline, once; then `python3 -m MODULE`.
// Real daemon, real podman, the scikit-learn runtime from scripts/build-sample-image.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "integration/daemon_harness.h"
#include "integration/subprocess.h"

namespace ty::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kRuntimeImage[] = "localhost/trainyard/sklearn-cpu:latest";
constexpr char kVertexName[] = "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest";
constexpr char kVertexJobs[] = "/v1/projects/pk/locations/us-central1/customJobs";

class PythonPackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bool required = std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr;
    if (!EngineAnswers() || !EngineHasImage(kRuntimeImage)) {
      if (required) FAIL() << kRuntimeImage << " is missing: run scripts/build-sample-image";
      GTEST_SKIP() << "engine or " << kRuntimeImage << " unavailable";
    }
    // A token in every package, so this run installs instead of finding an old result.
    token_ = std::to_string(std::random_device{}());
    made_before_ = PackageImages();
    daemon_ = std::make_unique<Daemon>();
    // A bucket is its project's from the moment it exists (issue 30): made through
    // the API, then filled on the host as a user copying files in would.
    ASSERT_EQ(daemon_->Post("/storage/v1/b?project=pk", R"({"name":"pk-bkt"})").status, 200);
    bucket_ = fs::path(daemon_->data_dir()) / "buckets" / "pk-bkt";
    fs::create_directories(bucket_);
  }
  void TearDown() override {
    if (HasFailure() && daemon_) std::cerr << "daemon log:\n" << daemon_->Log();
    // The installed images this test made (their tags hash the token).
    for (const std::string& image : PackageImages()) {
      if (made_before_.count(image) == 0) RunProcess({"podman", "rmi", image});
    }
  }

  static std::set<std::string> PackageImages() {
    ProcessRun list = RunProcess({"podman", "images", "--format", "{{.Repository}}:{{.Tag}}",
                                  "localhost/trainyard/packages"});
    std::set<std::string> out;
    std::stringstream lines(list.out);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) out.insert(line);
    }
    return out;
  }

  // An sdist gs://pk-bkt/NAME-0.1.tar.gz of package NAME with `files` and `requires`;
  // `setup_code` runs in its setup.py before setup().
  std::string Sdist(const std::string& name, const std::map<std::string, std::string>& files,
                    const std::string& requirements = "", const std::string& setup_code = "") {
    fs::path root = fs::temp_directory_path() / ("ty-sdist-" + token_) / (name + "-0.1");
    fs::create_directories(root / name);
    std::ofstream(root / "setup.py") << setup_code << "from setuptools import setup\nsetup(name='"
                                     << name << "', version='0.1', packages=['" << name
                                     << "'], install_requires=[" << requirements << "])\n";
    std::ofstream(root / name / "__init__.py") << "TOKEN = '" << token_ << "'\n";
    for (const auto& [file, text] : files) {
      std::ofstream(root / name / file, std::ios::app) << text;  // __init__.py: after TOKEN.
    }
    const std::string archive = name + "-0.1.tar.gz";
    ProcessRun tar = RunProcess({"tar", "czf", (bucket_ / archive).string(), "-C",
                                 root.parent_path().string(), name + "-0.1"});
    EXPECT_EQ(tar.rc, 0) << tar.err;
    return "gs://pk-bkt/" + archive;
  }

  nlohmann::json PackagePool(int replicas, const std::vector<std::string>& uris,
                             const std::string& image = kVertexName) {
    return {{"machineSpec", {{"machineType", "n1-standard-4"}}},
            {"replicaCount", std::to_string(replicas)},
            {"pythonPackageSpec",
             {{"executorImageUri", image},
              {"packageUris", uris},
              {"pythonModule", "trainer.task"},
              {"args", {"--epochs", "1"}}}}};
  }

  // Submits, waits for the end; returns the final job and the seconds it took.
  nlohmann::json Run(const std::vector<nlohmann::json>& pools, double* seconds = nullptr) {
    nlohmann::json body = {{"displayName", "pkg"},
                           {"jobSpec", {{"workerPoolSpecs", nlohmann::json(pools)}}}};
    auto start = std::chrono::steady_clock::now();
    HttpReply created = daemon_->Post(kVertexJobs, body.dump());
    EXPECT_EQ(created.status, 200) << created.body;
    if (created.status != 200) return created.Json();
    name_ = "/v1/" + created.Json().value("name", "");
    nlohmann::json done = daemon_->WaitForField(
        name_, "state", {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"}, 300);
    if (seconds != nullptr) {
      *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return done;
  }

  std::string Logs() {
    std::string all;
    for (const auto& e :
         daemon_->Get(name_ + "/logs").Json().value("entries", nlohmann::json::array())) {
      all += e.value("message", "") + "\n";
    }
    return all;
  }

  const std::string kTask =
      "import sys, sklearn, helper, trainer\n"
      "print('trainer', trainer.TOKEN, 'uses', helper.greet(), 'on sklearn', sklearn.__version__,"
      " 'args', sys.argv[1:])\n";
  std::string token_, name_;
  fs::path bucket_;
  std::set<std::string> made_before_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(PythonPackageTest, TwoSdistsAreInstalledOnceAndTheCachedInstallIsReused) {
  std::string helper =
      Sdist("helper", {{"__init__.py", "def greet():\n    return 'the helper'\n"}});
  std::string trainer = Sdist("trainer", {{"task.py", kTask}}, "'helper', 'scikit-learn'");

  double first_s = 0, second_s = 0;
  nlohmann::json first = Run({PackagePool(1, {trainer, helper})}, &first_s);
  ASSERT_EQ(first["state"], "JOB_STATE_SUCCEEDED") << first.dump() << Logs();
  std::string logs = Logs();
  EXPECT_NE(logs.find("trainer " + token_ + " uses the helper on sklearn 1.2"), std::string::npos)
      << logs;
  EXPECT_NE(logs.find("args ['--epochs', '1']"), std::string::npos) << logs;
  EXPECT_NE(logs.find("Installing the Python packages"), std::string::npos) << logs;
  // What pip did, in the job's log.
  EXPECT_THAT(logs, ::testing::ContainsRegex("Installed the Python packages in [0-9.]+ s \\(pip: "
                                             "Successfully installed helper-0.1 trainer-0.1\\)"));

  nlohmann::json second = Run({PackagePool(1, {trainer, helper})}, &second_s);
  ASSERT_EQ(second["state"], "JOB_STATE_SUCCEEDED") << second.dump() << Logs();
  logs = Logs();
  EXPECT_EQ(logs.find("Installing the Python packages"), std::string::npos) << logs;
  EXPECT_NE(logs.find("trainer " + token_), std::string::npos) << logs;
  std::cerr << "python package job: first (pip) " << first_s << " s, second (cached) " << second_s
            << " s\n";
}

TEST_F(PythonPackageTest, AMissingRequirementFailsTheJobWithPipsMessage) {
  std::string trainer =
      Sdist("trainer", {{"task.py", kTask}}, "'no-such-dependency-" + token_ + "'");
  nlohmann::json done = Run({PackagePool(1, {trainer})});
  ASSERT_EQ(done["state"], "JOB_STATE_FAILED") << done.dump();
  const std::string message = done["error"].value("message", "");
  EXPECT_NE(message.find("no-such-dependency-" + token_), std::string::npos) << message;
  EXPECT_NE(message.find("pip exited"), std::string::npos) << message;
}

// Issue 30 item 5: the install runs within the first pool's machine type (n1-highcpu-2:
// 1.8 GB); a setup.py that takes 3 GB is killed and the job fails saying why, with
// pip's lines in its log. On 3c2a683 the install had no memory limit at all.
TEST_F(PythonPackageTest, AnInstallPastItsPoolsMemoryIsKilledAndTheJobSaysWhy) {
  std::string trainer = Sdist("trainer", {{"task.py", kTask}}, "",
                              "big = bytearray(3 << 30)\nprint('allocated', len(big))\n");
  nlohmann::json pool = PackagePool(1, {trainer});
  pool["machineSpec"]["machineType"] = "n1-highcpu-2";
  nlohmann::json done = Run({pool});
  ASSERT_EQ(done["state"], "JOB_STATE_FAILED") << done.dump();
  const std::string message = done["error"].value("message", "");
  EXPECT_NE(message.find("ran out of memory"), std::string::npos) << message;
  EXPECT_NE(message.find("1.80 GB"), std::string::npos) << message;
  EXPECT_NE(Logs().find("pip: "), std::string::npos) << Logs();
}

TEST_F(PythonPackageTest, APackageJobOfThreeReplicasInstallsOnce) {
  std::string trainer =
      Sdist("trainer",
            {{"task.py",
              "import json, os, trainer\n"
              "tf = json.loads(os.environ['TF_CONFIG'])\n"
              "print('replica', tf['task']['type'], tf['task']['index'], 'of', trainer.TOKEN)\n"}});
  nlohmann::json done = Run({PackagePool(1, {trainer}), PackagePool(2, {trainer})});
  ASSERT_EQ(done["state"], "JOB_STATE_SUCCEEDED") << done.dump() << Logs();
  std::string logs = Logs();
  for (const char* who : {"replica chief 0", "replica worker 0", "replica worker 1"}) {
    EXPECT_NE(logs.find(std::string(who) + " of " + token_), std::string::npos) << who << logs;
  }
  size_t installs = 0;
  for (size_t at = logs.find("Installing the Python packages"); at != std::string::npos;
       at = logs.find("Installing the Python packages", at + 1)) {
    ++installs;
  }
  EXPECT_EQ(installs, 1u) << logs;
}

// Issue 33 item 1: a requirement no package index here has, as a wheel in the daemon's
// wheelhouse (<data-dir>/wheelhouse), installs offline: as a package's dependency in
// the install container (no network at all), and with `pip install` in a replica of the
// runtime image (a network, but no index reachable). Without it the install fails.
TEST_F(PythonPackageTest, ARequirementInTheWheelhouseInstallsWithNoPackageIndex) {
  const std::string dep = "tywheel" + token_;
  std::string trainer = Sdist("trainer",
                              {{"task.py", "import " + dep + ", trainer\nprint('wheel says', " +
                                               dep + ".WORD, trainer.TOKEN)\n"}},
                              "'" + dep + "'");
  nlohmann::json missing = Run({PackagePool(1, {trainer})});
  ASSERT_EQ(missing["state"], "JOB_STATE_FAILED") << missing.dump();

  // The wheel, built by the runtime's own pip with no network.
  const fs::path src = fs::temp_directory_path() / ("ty-wheel-" + token_);
  fs::create_directories(src);
  std::ofstream(src / "setup.py") << "from setuptools import setup\nsetup(name='" << dep
                                  << "', version='1.0', py_modules=['" << dep << "'])\n";
  std::ofstream(src / (dep + ".py")) << "WORD = 'from the wheelhouse'\n";
  ProcessRun wheel =
      RunProcess({"podman", "run", "--rm", "--network", "none", "-v", src.string() + ":/src",
                  kRuntimeImage, "python3", "-m", "pip", "wheel", "--no-deps",
                  "--no-build-isolation", "--no-index", "/src", "-w", "/src/out"},
                 {}, 180);
  ASSERT_EQ(wheel.rc, 0) << wheel.out << wheel.err;
  const fs::path wheelhouse = fs::path(daemon_->data_dir()) / "wheelhouse";
  for (const auto& f : fs::directory_iterator(src / "out")) {
    fs::copy_file(f.path(), wheelhouse / f.path().filename());
  }
  fs::remove_all(src);

  nlohmann::json installed = Run({PackagePool(1, {trainer})});
  ASSERT_EQ(installed["state"], "JOB_STATE_SUCCEEDED") << installed.dump() << Logs();
  EXPECT_THAT(Logs(), HasSubstr("wheel says from the wheelhouse " + token_));

  nlohmann::json replica = {{"machineSpec", {{"machineType", "n1-standard-4"}}},
                            {"replicaCount", "1"},
                            {"containerSpec",
                             {{"imageUri", kVertexName},
                              {"command",
                               {"sh", "-c",
                                "pip install -q " + dep + " && python3 -c 'import " + dep +
                                    "; print(" + dep + ".WORD)'"}}}}};
  nlohmann::json ran = Run({replica});
  ASSERT_EQ(ran["state"], "JOB_STATE_SUCCEEDED") << ran.dump() << Logs();
  EXPECT_THAT(Logs(), HasSubstr("from the wheelhouse"));
}

TEST_F(PythonPackageTest, AnMlPackageJobWithoutARuntimeVersionRunsOnTheDefaultRuntime) {
  std::string trainer = Sdist(
      "trainer", {{"task.py", "import sklearn, trainer\nprint('ml v1 ran', trainer.TOKEN)\n"}});
  nlohmann::json body = {{"jobId", "pkg_" + token_},
                         {"trainingInput",
                          {{"scaleTier", "BASIC"},
                           {"region", "us-central1"},
                           {"packageUris", {trainer}},
                           {"pythonModule", "trainer.task"}}}};
  HttpReply created = daemon_->Post("/v1/projects/pk/jobs", body.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  name_ = "/v1/projects/pk/jobs/pkg_" + token_;
  nlohmann::json done =
      daemon_->WaitForField(name_, "state", {"SUCCEEDED", "FAILED", "CANCELLED"}, 300);
  ASSERT_EQ(done["state"], "SUCCEEDED") << done.dump();
  nlohmann::json logs = daemon_->Get(name_ + "/logs").Json();
  EXPECT_NE(logs.dump().find("ml v1 ran " + token_), std::string::npos) << logs.dump();
}

TEST_F(PythonPackageTest, ATensorFlowRuntimeIsRefusedAtSubmit) {
  nlohmann::json body = {
      {"displayName", "tf"},
      {"jobSpec",
       {{"workerPoolSpecs",
         {PackagePool(1, {"gs://pk-bkt/t.tar.gz"},
                      "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11.py310:latest")}}}}};
  HttpReply r = daemon_->Post(kVertexJobs, body.dump());
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("workerPoolSpecs[0].pythonPackageSpec.executorImageUri"), std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("no TensorFlow runtime"), std::string::npos) << r.body;
}

// The guides' Dockerfiles start FROM Deep Learning Containers names; a TensorFlow one
// stops the build at its FROM, saying why and what there is instead.
TEST_F(PythonPackageTest, ADockerfileFromATensorFlowNameStopsSayingSo) {
  const fs::path ctx = fs::path(daemon_->data_dir()).parent_path() / "tf-build";
  fs::create_directories(ctx);
  std::ofstream(ctx / "Dockerfile") << "FROM gcr.io/deeplearning-platform-release/tf2-cpu.2-11\n"
                                    << "RUN echo never\n";
  ProcessRun build =
      RunProcess({"podman", "build", "-t", "localhost/ty-tf-from-test", ctx.string()});
  RunProcess({"podman", "rmi", "-f", "localhost/ty-tf-from-test"});
  EXPECT_NE(build.rc, 0);
  EXPECT_NE(build.err.find("TensorFlow is not available here"), std::string::npos) << build.err;
  EXPECT_NE(build.err.find("gcr.io/deeplearning-platform-release/sklearn-cpu"), std::string::npos);
  EXPECT_EQ((build.out + build.err).find("echo never\nnever"), std::string::npos);
}

}  // namespace
}  // namespace ty::testing
