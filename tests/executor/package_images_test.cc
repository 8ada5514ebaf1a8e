// The package installer's edges that need no engine doing real work: what it copies out
// of a bucket (never through a link a replica planted, never outside the bucket) and how
// it keys what it installs.
#include "executor/container/package_images.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "fakes/fake_engine.h"

namespace ty::executor::internal {
namespace {

namespace fs = std::filesystem;

class PackageImagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ty-pkgimg-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "b" / "dir");
    std::ofstream(root_ / "b" / "dir" / "p.tar.gz") << "package bytes";
    std::ofstream(root_ / "secret") << "host file";
    engine_.AddImage("img:1");
  }
  void TearDown() override { fs::remove_all(root_); }

  Result<std::string> Prepare(const std::vector<std::string>& uris) {
    PackageImages::Options options;
    options.bucket_root = root_.string();
    PackageImages images(&engine_, options);
    return images.Prepare("img:1", uris, InstallLimits{}, [] { return false; });
  }

  fs::path root_;
  testing::FakeEngine engine_;
};

// Issue 30 item 5: pip and a package's setup.py run within the pool's admitted share
// (its CPUs, memory and a pids bound); an install killed for memory fails the launch
// saying so, and pip's lines reach the job's log. On 3c2a683 the install container had
// no limit at all, outside admission, for up to 15 minutes.
TEST_F(PackageImagesTest, AnInstallRunsWithinThePoolsShareAndSaysWhenItRanOutOfMemory) {
  PackageImages::Options options;
  options.bucket_root = root_.string();
  PackageImages images(&engine_, options);
  InstallLimits limits;
  limits.cpus = 2;
  limits.memory_bytes = int64_t{1} << 30;
  std::vector<std::string> said;
  Result<std::string> result = Status::Ok();
  std::thread install([&] {
    result = images.Prepare(
        "img:1", {"gs://b/dir/p.tar.gz"}, limits, [] { return false; },
        [&](const std::string& line) { said.push_back(line); });
  });
  std::string name;
  for (int i = 0; i < 500 && name.empty(); ++i) {
    for (const std::string& n : engine_.ContainerNames()) {
      if (n.rfind("ty-pkg-", 0) == 0 && engine_.IsRunning(n)) name = n;
    }
    if (name.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_FALSE(name.empty()) << "no install container ran";
  const nlohmann::json host = engine_.CreateBody(name)["HostConfig"];
  EXPECT_EQ(host["NanoCpus"], 2000000000);
  EXPECT_EQ(host["Memory"], int64_t{1} << 30);
  EXPECT_EQ(host["MemorySwap"], int64_t{1} << 30);
  EXPECT_EQ(host["PidsLimit"], 4096);
  engine_.Print(name, "Processing /packages/0/p.tar.gz");
  engine_.Exit(name, 137, /*oom_killed=*/true);
  install.join();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(result.status().message().find("ran out of memory"), std::string::npos)
      << result.status().message();
  EXPECT_NE(result.status().message().find("1.00 GB"), std::string::npos)
      << result.status().message();
  EXPECT_NE(std::find(said.begin(), said.end(), "pip: Processing /packages/0/p.tar.gz"), said.end())
      << ::testing::PrintToString(said);
}

TEST_F(PackageImagesTest, NoPackagesMeansTheImageItself) {
  Result<std::string> image = Prepare({});
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  EXPECT_EQ(*image, "img:1");
}

// A replica can write its bucket: a link there must not bring a host file into an
// install container (or into the daemon's hashing).
TEST_F(PackageImagesTest, LinksAndPathsOutOfTheBucketAreRefused) {
  fs::create_symlink(root_ / "secret", root_ / "b" / "link.tar.gz");
  fs::create_directory_symlink(root_, root_ / "b" / "up");
  for (const char* uri :
       {"gs://b/link.tar.gz", "gs://b/up/secret", "gs://b/../secret", "gs://b/dir/../../secret",
        "gs://b//dir/p.tar.gz", "gs://b/dir", "gs://b/missing.tar.gz", "gs://nobucket/p.tar.gz"}) {
    Result<std::string> image = Prepare({uri});
    EXPECT_FALSE(image.ok()) << uri;
    EXPECT_NE(image.status().message().find("package"), std::string::npos)
        << uri << ": " << image.status().message();
  }
}

TEST_F(PackageImagesTest, TheKeyFollowsImageBucketNameAndContents) {
  const std::string path = (root_ / "b" / "dir" / "p.tar.gz").string();
  auto key = [&](const std::string& id, const std::string& uri) {
    Result<std::string> k = PackageImages::KeyFor(id, {uri}, {path});
    EXPECT_TRUE(k.ok());
    return k.ok() ? *k : "";
  };
  const std::string base = key("sha256:aa", "gs://b/dir/p.tar.gz");
  EXPECT_EQ(base.size(), 32u);
  EXPECT_EQ(base, key("sha256:aa", "gs://b/dir/p.tar.gz"));
  // gcloud stages each submit's package under a path of its own: the same file hits.
  EXPECT_EQ(base, key("sha256:aa", "gs://b/job_2/packages/9f/p.tar.gz"));
  EXPECT_NE(base, key("sha256:bb", "gs://b/dir/p.tar.gz"));      // Another executor image.
  EXPECT_NE(base, key("sha256:aa", "gs://c/dir/p.tar.gz"));      // Another bucket: project.
  EXPECT_NE(base, key("sha256:aa", "gs://b/dir/p-0.2.tar.gz"));  // Another file name.
  std::ofstream(path) << "other bytes";
  EXPECT_NE(base, key("sha256:aa", "gs://b/dir/p.tar.gz"));  // Other contents.
}

// Distinct packages must not fill the disk: beyond the bound, the oldest installs go.
TEST_F(PackageImagesTest, InstallsBeyondTheBoundAreRemovedOldestFirst) {
  const std::string repo = std::string(kPackageImageRepo) + ":";
  for (const char* key : {"a", "b", "c", "d"}) engine_.AddImage(repo + key);
  PackageImages::Options options;
  options.keep_images = 2;
  PackageImages images(&engine_, options);
  images.Prune(repo + "a");  // Just made (an old key reinstalled): kept whatever its age.
  EXPECT_TRUE(*engine_.ImageExists(repo + "a"));
  EXPECT_FALSE(*engine_.ImageExists(repo + "b"));
  EXPECT_FALSE(*engine_.ImageExists(repo + "c"));
  EXPECT_TRUE(*engine_.ImageExists(repo + "d"));
  EXPECT_TRUE(*engine_.ImageExists("img:1"));  // Not an installed image.
}

}  // namespace
}  // namespace ty::executor::internal
