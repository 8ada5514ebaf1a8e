#include "tensorboard/indexer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fakes/manual_clock.h"
#include "tensorboard/event_decoder.h"
#include "tensorboard/record_reader.h"

namespace ty::tensorboard {
namespace {

namespace fs = std::filesystem;

class IndexerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ty-indexer-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ + "/bucket/out/logs");
    store_ = std::move(Store::Open(":memory:", &clock_).value());
    Tensorboard t;
    t.path = {"p", "us-central1", "", "", "", ""};
    t.display_name = "board";
    tb_ = store_->CreateTensorboard(t)->path;
    target_.experiment = tb_;
    target_.experiment.experiment = "42";
    target_.experiment_display_name = "job 42";
    target_.bucket_root = root_;
    target_.log_dir = "bucket/out/logs";
  }
  void TearDown() override { fs::remove_all(root_); }

  void Append(const std::string& rel, const std::string& tag, int step, float value) {
    const std::string path = root_ + "/bucket/out/logs/" + rel;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary | std::ios::app)
        << FrameRecord(EncodeScalarEvent(tag, step, 1.7e9 + step, value));
  }
  std::vector<Point> Points(const std::string& run, const std::string& tag) {
    ResourcePath r = target_.experiment;
    r.run = run;
    Result<Page<TimeSeries>> series = store_->ListTimeSeries(r, {});
    if (!series.ok()) return {};
    for (const TimeSeries& s : series->items) {
      if (s.display_name == tag) return *store_->ReadPoints(s.path, {});
    }
    return {};
  }

  ty::testing::ManualClock clock_;
  std::string root_;
  std::unique_ptr<Store> store_;
  ResourcePath tb_;
  IndexTarget target_;
};

TEST_F(IndexerTest, EachPassReadsWhatWasAppendedSinceTheLast) {
  Append("events.out.tfevents.1.host", "loss", 1, 0.9f);
  Append("train/events.out.tfevents.2.host", "loss", 1, 0.8f);
  Result<IndexStats> first = IndexOnce(store_.get(), target_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->points, 2u);
  Append("events.out.tfevents.1.host", "loss", 2, 0.5f);
  Result<IndexStats> second = IndexOnce(store_.get(), target_);
  EXPECT_EQ(second->points, 1u);
  std::vector<Point> root = Points("default", "loss");
  ASSERT_EQ(root.size(), 2u);
  EXPECT_FLOAT_EQ(static_cast<float>(root[1].value), 0.5f);
  EXPECT_EQ(Points("train", "loss").size(), 1u);
  EXPECT_EQ(IndexOnce(store_.get(), target_)->points, 0u);
}

TEST_F(IndexerTest, RunIdsFollowVertexRulesAndTrialPrefixes) {
  EXPECT_EQ(RunIdFor("", ""), "default");
  EXPECT_EQ(RunIdFor("", "Train/Eval_1"), "train-eval-1");
  EXPECT_EQ(RunIdFor("3", ""), "3");
  EXPECT_EQ(RunIdFor("3", "validation"), "3-validation");
  EXPECT_EQ(RunIdFor("", "--"), "default");
}

TEST_F(IndexerTest, LinksAndFifosInTheLogDirAreNeverFollowedOrOpened) {
  const std::string secret = root_ + "/secret";
  fs::create_directories(secret);
  std::ofstream(secret + "/events.out.tfevents.9.host", std::ios::binary)
      << FrameRecord(EncodeScalarEvent("stolen", 1, 1, 1));
  const std::string logs = root_ + "/bucket/out/logs";
  fs::create_directory_symlink(secret, logs + "/linked");
  fs::create_symlink(secret + "/events.out.tfevents.9.host", logs + "/events.out.tfevents.9.host");
  ASSERT_EQ(mkfifo((logs + "/events.out.tfevents.fifo").c_str(), 0600), 0);
  Result<IndexStats> stats = IndexOnce(store_.get(), target_);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->points, 0u);
  EXPECT_TRUE(Points("linked", "stolen").empty());
  EXPECT_TRUE(Points("default", "stolen").empty());
}

TEST_F(IndexerTest, ALogDirReachedThroughALinkIsNotIndexed) {
  fs::remove_all(root_ + "/bucket/out/logs");
  fs::create_directories(root_ + "/elsewhere");
  fs::create_directory_symlink(root_ + "/elsewhere", root_ + "/bucket/out/logs");
  std::ofstream(root_ + "/elsewhere/events.out.tfevents.1", std::ios::binary)
      << FrameRecord(EncodeScalarEvent("loss", 1, 1, 1));
  EXPECT_EQ(IndexOnce(store_.get(), target_)->files, 0u);
}

TEST_F(IndexerTest, DamagedRecordsAreCountedAndTheRestIndexed) {
  const std::string path = root_ + "/bucket/out/logs/events.out.tfevents.1.host";
  std::string bad = FrameRecord(EncodeScalarEvent("loss", 2, 1, 1));
  bad[bad.size() - 1] ^= 0x7f;
  std::ofstream(path, std::ios::binary)
      << FrameRecord(EncodeScalarEvent("loss", 1, 1, 1)) << bad
      << FrameRecord("not an event \xff\xff") << FrameRecord(EncodeScalarEvent("loss", 3, 1, 1));
  Result<IndexStats> stats = IndexOnce(store_.get(), target_);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->bad_records, 2u);
  EXPECT_EQ(Points("default", "loss").size(), 2u);
}

TEST_F(IndexerTest, AMissingLogDirIsNothingYet) {
  fs::remove_all(root_ + "/bucket/out/logs");
  Result<IndexStats> stats = IndexOnce(store_.get(), target_);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->files, 0u);
}

}  // namespace
}  // namespace ty::tensorboard
