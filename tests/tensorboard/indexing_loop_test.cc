#include "tensorboard/indexing_loop.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "fakes/manual_clock.h"
#include "tensorboard/event_decoder.h"
#include "tensorboard/record_reader.h"

namespace ty::tensorboard {
namespace {

namespace fs = std::filesystem;

class IndexingLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ty-indexing-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    store_ = std::move(Store::Open(":memory:", &clock_).value());
    Tensorboard t;
    t.path = {"p", "l", "", "", "", ""};
    t.display_name = "b";
    target_.experiment = store_->CreateTensorboard(t)->path;
    target_.experiment.experiment = "7";
    target_.bucket_root = root_;
    target_.log_dir = "b/logs";
    fs::create_directories(root_ + "/b/logs");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(int step) {
    std::ofstream(root_ + "/b/logs/events.out.tfevents.1", std::ios::binary | std::ios::app)
        << FrameRecord(EncodeScalarEvent("loss", step, 1, 1));
  }

  ty::testing::ManualClock clock_;
  std::string root_;
  std::unique_ptr<Store> store_;
  IndexTarget target_;
};

TEST_F(IndexingLoopTest, AJobThatEndedBeforeAnyRoundStillGetsItsPass) {
  IndexingLoop loop(store_.get());
  loop.SetTargetsForTest([] { return std::vector<IndexTarget>{}; });
  Write(1);
  loop.Ended(target_);
  EXPECT_EQ(loop.Tick().points, 1u);
  EXPECT_EQ(loop.Tick().points, 0u);
}

TEST_F(IndexingLoopTest, ATargetGoneFromTheListGetsOneLastPass) {
  IndexingLoop loop(store_.get());
  bool live = true;
  loop.SetTargetsForTest(
      [&] { return live ? std::vector<IndexTarget>{target_} : std::vector<IndexTarget>{}; });
  Write(1);
  EXPECT_EQ(loop.Tick().points, 1u);
  Write(2);
  live = false;
  EXPECT_EQ(loop.Tick().points, 1u);  // The last pass.
  Write(3);
  EXPECT_EQ(loop.Tick().points, 0u);  // Forgotten.
}

TEST_F(IndexingLoopTest, ADeletedTensorboardIsLeftAloneWithoutErrors) {
  IndexingLoop loop(store_.get());
  loop.SetTargetsForTest([&] { return std::vector<IndexTarget>{target_}; });
  Write(1);
  ASSERT_TRUE(store_->DeleteTensorboard(target_.experiment.Tensorboard()).ok());
  EXPECT_EQ(loop.Tick().points, 0u);
  EXPECT_EQ(loop.Tick().points, 0u);
}

// A round's start is kept (at most every 30 s) for the next daemon: what it finds
// ended after that may have missed its last pass.
TEST_F(IndexingLoopTest, ARoundsStartIsKeptAsIndexedThrough) {
  IndexingLoop loop(store_.get(), {}, &clock_);
  loop.SetTargetsForTest([] { return std::vector<IndexTarget>{}; });
  EXPECT_EQ(store_->IndexedThrough().value(), 0);
  const TimeMicros first = clock_.Now();
  loop.Round();
  EXPECT_EQ(store_->IndexedThrough().value(), first);
  clock_.Advance(10 * 1000000LL);
  loop.Round();
  EXPECT_EQ(store_->IndexedThrough().value(), first);  // Not every round: a write a second.
  clock_.Advance(25 * 1000000LL);
  loop.Round();
  EXPECT_EQ(store_->IndexedThrough().value(), clock_.Now());
}

// What the daemon found ended while none ran gets a pass in the first round.
TEST_F(IndexingLoopTest, JobsThatEndedWhileAwayGetTheirPassFirst) {
  Write(1);
  Write(2);
  IndexingLoop loop(store_.get(), {}, &clock_);
  int asked = 0;
  loop.Start([] { return std::vector<IndexTarget>{}; }, 10'000,
             [&] {
               ++asked;
               return std::vector<IndexTarget>{target_};
             });
  for (int i = 0; i < 500; ++i) {
    Result<FileState> state =
        store_->GetFileState(target_.experiment.Tensorboard(), "7//events.out.tfevents.1");
    if (state.ok() && state->offset > 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  loop.Stop();
  EXPECT_EQ(asked, 1);
  Result<FileState> state =
      store_->GetFileState(target_.experiment.Tensorboard(), "7//events.out.tfevents.1");
  ASSERT_TRUE(state.ok());
  EXPECT_GT(state->offset, 0u);
}

}  // namespace
}  // namespace ty::tensorboard
