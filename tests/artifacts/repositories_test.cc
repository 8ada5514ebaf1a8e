// Artifact Registry's repositories over their files (artifacts/repositories.h).
#include "artifacts/repositories.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace ty::artifacts {
namespace {

class FixedClock : public Clock {
 public:
  TimeMicros Now() const override { return now; }
  TimeMicros now = 1700000000000000;
};

class RepositoriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("ty-ar-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    auto opened = Repositories::Open(dir_.string(), &clock_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    repos_ = std::move(opened).value();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result<Repository> Make(const std::string& project, const std::string& location,
                          const std::string& id) {
    Repository r;
    r.project = project;
    r.location = location;
    r.id = id;
    return repos_->Create(r);
  }

  FixedClock clock_;
  std::filesystem::path dir_;
  std::unique_ptr<Repositories> repos_;
};

TEST_F(RepositoriesTest, ACreatedRepositoryIsReadAndListedBack) {
  Repository r;
  r.project = "p";
  r.location = "us-central1";
  r.id = "flower-app";
  r.description = "Flowers";
  r.labels = {{"team", "vision"}};
  ASSERT_TRUE(repos_->Create(r).ok());
  Result<Repository> got = repos_->Get("p", "us-central1", "flower-app");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->name(), "projects/p/locations/us-central1/repositories/flower-app");
  EXPECT_EQ(got->format, "DOCKER");
  EXPECT_EQ(got->description, "Flowers");
  EXPECT_EQ(got->labels.at("team"), "vision");
  EXPECT_EQ(got->create_time, clock_.now);
  ASSERT_TRUE(Make("p", "europe-west4", "models").ok());
  ASSERT_TRUE(Make("q", "us-central1", "theirs").ok());
  EXPECT_EQ(repos_->List("p", "us-central1")->size(), 1u);
  EXPECT_EQ(repos_->List("p", "-")->size(), 2u);
  EXPECT_EQ(*repos_->Locations("p"), (std::vector<std::string>{"europe-west4", "us-central1"}));
  EXPECT_EQ(repos_->Get("q", "us-central1", "flower-app").status().code(), StatusCode::kNotFound);
}

TEST_F(RepositoriesTest, BadIdsFormatsAndRepeatsAreRefusedNamingTheField) {
  ASSERT_TRUE(Make("p", "us-central1", "flower-app").ok());
  EXPECT_EQ(Make("p", "us-central1", "flower-app").status().code(), StatusCode::kAlreadyExists);
  for (const char* id : {"", "Flower", "1abc", "ends-", "../../etc", "a/b", "a_b"}) {
    Status s = Make("p", "us-central1", id).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << id;
    EXPECT_NE(s.message().find("repositoryId"), std::string::npos) << s.message();
  }
  EXPECT_EQ(Make("p", "us-central1", std::string(64, 'a')).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Make("../p", "us-central1", "x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Make("p", "..", "x").status().code(), StatusCode::kInvalidArgument);
  Repository r;
  r.project = "p";
  r.location = "us-central1";
  r.id = "odd";
  r.format = "TARBALL";
  Status s = repos_->Create(r).status();
  EXPECT_NE(s.message().find("repository.format"), std::string::npos) << s.message();
  r.format = "DOCKER";
  r.labels = {{std::string(64, 'k'), "v"}};
  EXPECT_EQ(repos_->Create(r).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "p" / "us-central1" / "odd.json"));
}

// A file nobody should have put there (damaged, huge, a link) is no repository: left
// out of reads, never the daemon's undoing.
TEST_F(RepositoriesTest, AHostileFileIsLeftOut) {
  ASSERT_TRUE(Make("p", "us-central1", "good").ok());
  const std::filesystem::path loc = dir_ / "p" / "us-central1";
  std::ofstream(loc / "garbage.json") << "{not json";
  std::ofstream(loc / "huge.json") << std::string(1 << 20, ' ');
  std::filesystem::create_symlink("/etc/passwd", loc / "link.json");
  Result<std::vector<Repository>> all = repos_->List("p", "us-central1");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].id, "good");
  EXPECT_EQ(repos_->Get("p", "us-central1", "link").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Make("p", "us-central1", "garbage").status().code(), StatusCode::kAlreadyExists);
}

TEST_F(RepositoriesTest, AProjectHasAtMostAThousand) {
  for (size_t i = 0; i < Repositories::kMaxPerProject; ++i) {
    ASSERT_TRUE(Make("p", i % 2 ? "us-central1" : "us-east1", "r" + std::to_string(i)).ok()) << i;
  }
  EXPECT_EQ(Make("p", "us-central1", "one-more").status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(Make("q", "us-central1", "one-more").ok()) << "another project's own count";
}

}  // namespace
}  // namespace ty::artifacts
