#include "images/runtimes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace ty::images {
namespace {

TEST(RuntimeCatalogTest, VertexPrebuiltTrainingNamesMapToRuntimes) {
  for (const char* name :
       {"us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest",
        "europe-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0",
        "us-docker.pkg.dev/vertex-ai/training/xgboost-cpu.1-1:latest",
        "asia-docker.pkg.dev/vertex-ai-restricted/training/scikit-learn-cpu.0-23:latest",
        "gcr.io/deeplearning-platform-release/sklearn-cpu",
        "gcr.io/deeplearning-platform-release/base-cpu:latest",
        "us-docker.pkg.dev/deeplearning-platform-release/gcr.io/xgboost-cpu.1-1"}) {
    std::optional<PrebuiltMatch> m = MatchPrebuilt(name);
    ASSERT_TRUE(m.has_value()) << name;
    ASSERT_NE(m->runtime, nullptr) << name;
    EXPECT_EQ(m->runtime->name, "scikit-learn") << name;
    EXPECT_TRUE(m->note.empty()) << name;
    EXPECT_EQ(ResolveImage(name), "localhost/trainyard/sklearn-cpu:latest");
  }
  std::optional<PrebuiltMatch> gpu =
      MatchPrebuilt("us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.1-13.py310:latest");
  ASSERT_TRUE(gpu && gpu->runtime);
  EXPECT_EQ(gpu->runtime->name, "pytorch");
  EXPECT_NE(gpu->note.find("CPU build"), std::string::npos);  // Says a CPU build stands in.
  EXPECT_EQ(MatchPrebuilt("us-docker.pkg.dev/vertex-ai/training/pytorch-xla.1-11")->runtime->name,
            "pytorch");
  EXPECT_EQ(ResolveImage("gcr.io/deeplearning-platform-release/pytorch-cpu.1-13"),
            "localhost/trainyard/torch-cpu:latest");
}

TEST(RuntimeCatalogTest, OwnImagesAreLeftAlone) {
  for (const char* name : {"gcr.io/my-project/trainer:v1", "us-central1-docker.pkg.dev/p/r/img:1",
                           "localhost/trainyard/busybox:latest", "python:3.11",
                           "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-0:latest",
                           "gcr.io/deeplearning-platform-release/r-cpu.4-1"}) {
    EXPECT_FALSE(MatchPrebuilt(name).has_value()) << name;
    EXPECT_EQ(ResolveImage(name), name);
    EXPECT_TRUE(CheckPrebuiltAvailable(name, "x").ok()) << name;
  }
}

TEST(RuntimeCatalogTest, TensorFlowNamesAreRefusedNamingTheField) {
  for (const char* name : {"us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11.py310:latest",
                           "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11.py310:latest",
                           "gcr.io/deeplearning-platform-release/tf2-cpu.2-11",
                           "gcr.io/deeplearning-platform-release/tf-gpu.1-15"}) {
    Status s = CheckPrebuiltAvailable(name, "jobSpec.workerPoolSpecs[0].containerSpec.imageUri");
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(s.field(), "jobSpec.workerPoolSpecs[0].containerSpec.imageUri");
    EXPECT_NE(s.message().find("no TensorFlow"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("scikit-learn"), std::string::npos) << s.message();  // Lists them.
  }
}

TEST(RuntimeCatalogTest, RuntimesHavePipAndAPythonCommand) {
  ASSERT_EQ(Runtimes().size(), 2u);
  for (const Runtime& r : Runtimes()) {
    for (const char* p : {"python3-pip", "python3-setuptools", "python-is-python3", "curl"}) {
      EXPECT_NE(r.packages.find(p), std::string_view::npos) << r.name << " lacks " << p;
    }
  }
  EXPECT_EQ(FindRuntime("xgboost"), FindRuntime("scikit-learn"));
  EXPECT_EQ(FindRuntime("tensorflow"), nullptr);
  EXPECT_EQ(MlRuntime("2.11").name, "scikit-learn");
}

// The images are built by scripts/build-sample-image; its package lists must be the
// catalogue's, or `trainyard images list` describes images that are not what was built.
TEST(RuntimeCatalogTest, TheBuildScriptInstallsTheCataloguesPackages) {
  std::ifstream in(std::string(TY_SOURCE_DIR) + "/scripts/build-sample-image");
  ASSERT_TRUE(in) << "scripts/build-sample-image";
  std::map<std::string, std::string> vars;
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (eq == std::string::npos || line.find(' ') < eq || line.empty() || line[0] == '#') continue;
    std::string value = line.substr(eq + 1);
    for (const auto& [name, v] : vars) {  // $NAME references to earlier lines.
      for (size_t at; (at = value.find("$" + name)) != std::string::npos;) {
        value.replace(at, name.size() + 1, v);
      }
    }
    vars[line.substr(0, eq)] = value;
  }
  auto as_set = [](std::string_view list) {
    std::set<std::string> out;
    std::stringstream ss{std::string(list)};
    for (std::string p; std::getline(ss, p, ',');) out.insert(p);
    return out;
  };
  EXPECT_EQ(as_set(vars["PACKAGES"]), as_set(FindRuntime("scikit-learn")->packages));
  EXPECT_EQ(as_set(vars["TORCH_PACKAGES"]), as_set(FindRuntime("pytorch")->packages));
  EXPECT_EQ(vars["BASE_IMAGE"], FindRuntime("scikit-learn")->local_image);
  EXPECT_EQ(vars["TORCH_BASE_IMAGE"], FindRuntime("pytorch")->local_image);
}

// Issue 33: `images list` did not say what is built. Each runtime's line carries what
// the caller says of it (the CLI: whether the engine holds it, and its size).
TEST(RuntimeCatalogTest, TheListSaysOfEachRuntimeWhatTheCallerFound) {
  const std::string list = DescribeRuntimes([](const Runtime& r) {
    return r.name == "pytorch" ? std::string("not built (trainyard images build pytorch)")
                               : std::string("built, 307 MB");
  });
  EXPECT_NE(list.find("scikit-learn\tlocalhost/trainyard/sklearn-cpu:latest\tbuilt, 307 MB\t"),
            std::string::npos)
      << list;
  EXPECT_NE(list.find("pytorch\tlocalhost/trainyard/torch-cpu:latest\tnot built (trainyard "
                      "images build pytorch)\t"),
            std::string::npos)
      << list;
}

}  // namespace
}  // namespace ty::images
