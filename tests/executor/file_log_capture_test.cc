// Log capture from files a replica writes (the process executor's and the Slurm
// launcher's): crash-safe resume, and bounded reads of hostile output.
#include "executor/file_log_capture.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "executor/recording_log_sink.h"
#include "fakes/manual_clock.h"

namespace ty::executor::internal {
namespace {

class FileLogCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ty-capture-XXXXXX";
    dir_ = mkdtemp(tmpl);
    prefix_ = dir_ + "/r";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const char* suffix, const std::string& text) {
    std::ofstream(prefix_ + suffix, std::ios::app) << text;
  }
  FileLogCapture Capture() { return FileLogCapture(&sink_, &clock_, prefix_, "job", "task"); }

  std::string dir_, prefix_;
  ty::testing::RecordingLogSink sink_;
  ty::testing::ManualClock clock_;
};

TEST_F(FileLogCaptureTest, TakesCompleteLinesThenTheRestOnceTheWriterIsGone) {
  FileLogCapture c = Capture();
  Write(".out", "one\ntwo\npart");
  Write(".err", "err\n");
  EXPECT_TRUE(c.CaptureNew(false));
  EXPECT_EQ(sink_.Messages("job"), (std::vector<std::string>{"one", "two", "err"}));
  EXPECT_FALSE(c.CaptureNew(false));  // "part" waits for its newline …
  c.CaptureAll();                     // … unless the writer is gone.
  EXPECT_EQ(sink_.Messages("job").back(), "part");
}

TEST_F(FileLogCaptureTest, AResumedCaptureNeitherLosesNorRepeatsALine) {
  Write(".out", "a\nb\n");
  {
    FileLogCapture c = Capture();
    c.CaptureNew(false);
  }
  Write(".out", "c\n");
  clock_.Advance(1000);
  FileLogCapture again = Capture();  // A restarted daemon.
  again.Resume();
  again.CaptureAll();
  EXPECT_EQ(sink_.Messages("job"), (std::vector<std::string>{"a", "b", "c"}));
}

TEST_F(FileLogCaptureTest, AHugeLineIsCutIntoBoundedPieces) {
  const std::string huge(FileLogCapture::kMaxBatchBytes * 2 + 10, 'x');
  Write(".out", huge);
  FileLogCapture c = Capture();
  EXPECT_TRUE(c.CaptureNew(false));  // A full batch without a newline is taken cut.
  c.CaptureAll();
  std::vector<std::string> got = sink_.Messages("job");
  ASSERT_EQ(got.size(), 3u);
  for (const std::string& piece : got) {
    EXPECT_LE(piece.size(), static_cast<size_t>(FileLogCapture::kMaxBatchBytes));
  }
  EXPECT_EQ(got[0] + got[1] + got[2], huge);
}

// Issue 31: a replica's last lines that the sink cannot take when it ends (a full disk)
// are taken by a later call, each once; until then CaptureAll says the capture is not
// complete, so the replica's end is not reported yet.
TEST_F(FileLogCaptureTest, TheLastLinesWaitForADiskWithRoom) {
  FileLogCapture c = Capture();
  Write(".out", "one\n");
  EXPECT_TRUE(c.CaptureNew(false));
  Write(".out", "two\nthree");
  Write(".err", "err\n");
  sink_.full = true;
  EXPECT_FALSE(c.CaptureAll());
  EXPECT_FALSE(c.CaptureAll()) << "still full";
  sink_.full = false;
  EXPECT_TRUE(c.CaptureAll());
  EXPECT_EQ(sink_.Messages("job"), (std::vector<std::string>{"one", "two", "three", "err"}));
  EXPECT_TRUE(c.CaptureAll()) << "nothing more, nothing again";
  EXPECT_EQ(sink_.Messages("job").size(), 4u);
}

TEST_F(FileLogCaptureTest, CaptureAllWaitingEndsOnceTheSinkTakesTheLines) {
  FileLogCapture c = Capture();
  Write(".out", "last\n");
  sink_.full = true;
  int tries = 0;
  EXPECT_TRUE(c.CaptureAllWaiting([&] {
    if (++tries == 3) sink_.full = false;  // The host frees space.
    return false;
  }));
  EXPECT_EQ(sink_.Messages("job"), std::vector<std::string>{"last"});
  sink_.full = true;
  Write(".out", "more\n");
  EXPECT_FALSE(c.CaptureAllWaiting([] { return true; })) << "the daemon stopping gives up";
}

}  // namespace
}  // namespace ty::executor::internal
