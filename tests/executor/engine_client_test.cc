// LogDemuxer (no engine needed), EngineClient calls against the real engine, and
// pulls from a real registry on 127.0.0.1 (EngineClient and ContainerExecutor).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "executor/container/engine_api_client.h"
#include "executor/executor_contract.h"
#include "executor/loopback_registry.h"

namespace ty::executor {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

std::string Frame(int stream, const std::string& payload) {
  std::string h(8, '\0');
  h[0] = static_cast<char>(stream);
  uint32_t n = static_cast<uint32_t>(payload.size());
  h[4] = static_cast<char>(n >> 24);
  h[5] = static_cast<char>(n >> 16);
  h[6] = static_cast<char>(n >> 8);
  h[7] = static_cast<char>(n);
  return h + payload;
}

class LogDemuxerTest : public ::testing::Test {
 protected:
  LogDemuxer demux_{[this](int s, std::string_view l) { lines_.emplace_back(s, std::string(l)); }};
  std::vector<std::pair<int, std::string>> lines_;
};

TEST_F(LogDemuxerTest, SplitsFramesIntoLinesPerStream) {
  demux_.Feed(Frame(1, "a\nb\n") + Frame(2, "err\n") + Frame(1, "c\n"));
  demux_.Finish();
  EXPECT_THAT(lines_, ElementsAre(Pair(1, "a"), Pair(1, "b"), Pair(2, "err"), Pair(1, "c")));
}

TEST_F(LogDemuxerTest, HandlesHeadersAndLinesSplitAcrossReads) {
  std::string bytes = Frame(1, "hel") + Frame(2, "oops\n") + Frame(1, "lo\n") + Frame(1, "tail");
  for (char c : bytes) demux_.Feed(std::string_view(&c, 1));  // Worst case: byte by byte.
  EXPECT_THAT(lines_, ElementsAre(Pair(2, "oops"), Pair(1, "hello")));
  demux_.Finish();
  EXPECT_THAT(lines_.back(), Pair(1, "tail"));
}

// Seen in CI: podman 4.3 sent its 200, then failed to inspect the exiting container
// and wrote its error body into the stream; that body became the replica's "log line"
// and the replica's real last line was lost. A replica has no TTY, so its log is
// always multiplexed: anything else is kept aside, never a line.
TEST(LogDemuxerFramesOnlyTest, AnUnframedStreamIsNoLog) {
  std::vector<std::pair<int, std::string>> lines;
  auto collect = [&](int s, std::string_view l) { lines.emplace_back(s, std::string(l)); };
  LogDemuxer demux(collect, /*timestamps=*/true, /*frames_only=*/true);
  const std::string body =
      R"({"cause":"no such process","message":"failed to obtain logs for Container 'ty-1': )"
      R"(read /proc/20319/cgroup: no such process","response":500})"
      "\n";
  demux.Feed(body.substr(0, 5));
  demux.Feed(body.substr(5));
  demux.Finish();
  EXPECT_TRUE(lines.empty());
  EXPECT_EQ(demux.unframed(), body);
  LogDemuxer framed(collect, /*timestamps=*/true, /*frames_only=*/true);
  framed.Feed(Frame(1, "2024-01-01T00:00:00Z ok\n"));
  EXPECT_THAT(lines, ElementsAre(Pair(1, "2024-01-01T00:00:00Z ok")));
  EXPECT_EQ(framed.unframed(), "");
}

TEST(LogDemuxerTimestampTest, RejoinsLinesSplitAcrossTimestampedFrames) {
  std::vector<std::pair<int, std::string>> lines;
  LogDemuxer demux([&](int s, std::string_view l) { lines.emplace_back(s, std::string(l)); },
                   /*timestamps=*/true);
  std::string bytes = Frame(1, "2024-01-01T00:00:00Z 104") + Frame(1, "2024-01-01T00:00:00Z 1\n") +
                      Frame(1, "2024-01-01T00:00:01Z next\n");
  // Split inside the continuation frame's time prefix too.
  demux.Feed(bytes.substr(0, 40));
  demux.Feed(bytes.substr(40));
  demux.Finish();
  EXPECT_THAT(lines, ElementsAre(Pair(1, "2024-01-01T00:00:00Z 1041"),
                                 Pair(1, "2024-01-01T00:00:01Z next")));
}

TEST_F(LogDemuxerTest, AcceptsRawTtyStreams) {
  demux_.Feed("2024-01-01T00:00:00Z one\n2024-01-01T00:");
  demux_.Feed("00:01Z two\nlast");
  demux_.Finish();
  EXPECT_THAT(lines_, ElementsAre(Pair(1, "2024-01-01T00:00:00Z one"),
                                  Pair(1, "2024-01-01T00:00:01Z two"), Pair(1, "last")));
}

TEST_F(LogDemuxerTest, ShortRawStreamIsFlushedOnFinish) {
  demux_.Feed("hi");
  demux_.Finish();
  EXPECT_THAT(lines_, ElementsAre(Pair(1, "hi")));
}

TEST(UrlEncodeTest, EncodesReservedCharacters) {
  EXPECT_EQ(UrlEncode("a/b:c d"), "a%2Fb%3Ac%20d");
  EXPECT_EQ(UrlEncode("plain-1.2_x~"), "plain-1.2_x~");
}

TEST(EngineClientTest, ReportsUnavailableForADeadSocket) {
  EngineApiClient engine("/nonexistent/engine.sock", 1000);
  EXPECT_EQ(engine.Ping().code(), StatusCode::kUnavailable);
}

TEST(EngineClientTest, NotFoundAndIdempotentRemovals) {
  TY_REQUIRE_ENGINE_OR_SKIP();
  EngineApiClient engine(testing::EngineSocket());
  EXPECT_EQ(engine.InspectContainer("ty-no-such-container").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(engine.RemoveContainer("ty-no-such-container").ok());
  EXPECT_TRUE(engine.RemoveNetwork("ty-no-such-network").ok());
  auto exists = engine.ImageExists(testing::kTestImage);
  ASSERT_TRUE(exists.ok());
  EXPECT_TRUE(*exists);
  exists = engine.ImageExists("localhost/trainyard/no-such-image:x");
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(*exists);
}

// Tag, list by repository, remove: what the registry pulls and the package-image
// pruning use, against the real engine.
TEST(EngineClientTest, TagListAndRemoveImages) {
  TY_REQUIRE_ENGINE_OR_SKIP();
  EngineApiClient engine(testing::EngineSocket());
  const std::string repo = "localhost/ty-engine-test-" + std::to_string(::getpid());
  ASSERT_TRUE(engine.TagImage(testing::kTestImage, repo + ":one").ok());
  ASSERT_TRUE(engine.TagImage(testing::kTestImage, repo + ":two").ok());
  Result<std::vector<ImageSummary>> listed = engine.ListImages(repo);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  std::vector<std::string> tags;
  for (const ImageSummary& image : *listed) {
    EXPECT_GT(image.created, 0);
    for (const std::string& tag : image.tags) {
      if (tag.rfind(repo + ":", 0) == 0) tags.push_back(tag);
    }
  }
  std::sort(tags.begin(), tags.end());
  EXPECT_EQ(tags, (std::vector<std::string>{repo + ":one", repo + ":two"}));
  EXPECT_TRUE(engine.RemoveImage(repo + ":one").ok());
  EXPECT_TRUE(engine.RemoveImage(repo + ":two").ok());
  EXPECT_EQ(engine.RemoveImage(repo + ":two").code(), StatusCode::kNotFound);
  EXPECT_TRUE(*engine.ImageExists(testing::kTestImage));  // Only the names went.
}

}  // namespace
}  // namespace ty::executor

namespace ty::testing {
namespace {

using executor::ExecutorEventKind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Pulls from a real registry on 127.0.0.1 (docker-registry, run by the fixture):
// the EngineClient call alone, and the ContainerExecutor's launch path end to end.
class LoopbackRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TY_REQUIRE_ENGINE_OR_SKIP();
    if (access(kRegistryBinary, X_OK) != 0) {
      std::string why = std::string(kRegistryBinary) + " is missing; run scripts/setup";
      if (std::getenv("TRAINYARD_REQUIRE_ENGINE") != nullptr) FAIL() << why;
      GTEST_SKIP() << why;
    }
    Status started = registry_.Start();
    ASSERT_TRUE(started.ok()) << started.ToString();
    uid_ = UniqueJobUid();
    image_ = registry_.host() + "/trainyard-test/" + uid_ + ":v1";
    Status pushed = PushImage(EngineSocket(), kTestImage, image_);
    ASSERT_TRUE(pushed.ok()) << pushed.ToString() << "\nregistry log:\n" << registry_.Log();
    auto local = engine_.ImageExists(image_);
    ASSERT_TRUE(local.ok()) << local.status().ToString();
    ASSERT_FALSE(*local) << image_ << " is still local: a launch would not pull it";
  }

  void TearDown() override {
    if (ex_ != nullptr) ex_->Cleanup(uid_, 1).IgnoreError();
    ex_.reset();
    if (!uid_.empty()) ContainerBackend().ForceClean(uid_);
    if (!image_.empty()) UntagImage(EngineSocket(), image_).IgnoreError();
    registry_.Stop();
  }

  void MakeExecutor() {
    auto ex = NewContainerExecutor(&sink_, events_.Callback());
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    ex_ = std::move(*ex);
  }

  executor::AttemptSpec Attempt(const std::string& image, const std::string& script) {
    executor::ReplicaLaunch r = TestReplica(uid_, 0, 0);
    r.image = image;
    r.command = {"/bin/sh", "-c", script};
    return TestAttempt(uid_, {r});
  }

  LoopbackRegistry registry_;
  std::string uid_;
  std::string image_;  // Pushed to the registry, absent locally.
  executor::EngineApiClient engine_{EngineSocket()};
  RecordingLogSink sink_;
  EventRecorder events_{&sink_};
  std::unique_ptr<executor::ContainerExecutor> ex_;
};

TEST_F(LoopbackRegistryTest, EngineClientPullsFromIt) {
  Status s = engine_.PullImage(image_);
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto exists = engine_.ImageExists(image_);
  ASSERT_TRUE(exists.ok());
  EXPECT_TRUE(*exists);
}

TEST_F(LoopbackRegistryTest, ExecutorPullsTheImageAndRunsTheReplica) {
  MakeExecutor();
  ASSERT_TRUE(ex_->Launch(Attempt(image_, "echo pulled-and-ran")).ok());
  auto launched = events_.WaitForLaunch(uid_);
  ASSERT_TRUE(launched.has_value());
  ASSERT_EQ(launched->kind, ExecutorEventKind::kAttemptStarted)
      << launched->message << "\nregistry log:\n"
      << registry_.Log();
  EXPECT_GT(launched->image_ready_time, 0);
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 0);
  EXPECT_THAT(sink_.Messages(uid_), ElementsAre("pulled-and-ran"));
  auto exists = engine_.ImageExists(image_);
  ASSERT_TRUE(exists.ok());
  EXPECT_TRUE(*exists);
}

TEST_F(LoopbackRegistryTest, ExecutorReportsAMissingTag) {
  MakeExecutor();
  const std::string missing = registry_.host() + "/trainyard-test/" + uid_ + ":no-such-tag";
  ASSERT_TRUE(ex_->Launch(Attempt(missing, "true")).ok());
  auto launched = events_.WaitForLaunch(uid_);
  ASSERT_TRUE(launched.has_value());
  EXPECT_EQ(launched->kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(launched->message, HasSubstr("image pull failed for " + missing));
  EXPECT_FALSE(ContainerBackend().Leftovers(uid_));
}

}  // namespace
}  // namespace ty::testing
