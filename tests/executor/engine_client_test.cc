// LogDemuxer (no engine needed) and EngineClient calls against the real engine.
#include "executor/engine_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "executor/executor_contract.h"

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
  EngineClient engine("/nonexistent/engine.sock", 1000);
  EXPECT_EQ(engine.Ping().code(), StatusCode::kUnavailable);
}

TEST(EngineClientTest, NotFoundAndIdempotentRemovals) {
  TY_REQUIRE_ENGINE_OR_SKIP();
  EngineClient engine(testing::EngineSocket());
  EXPECT_EQ(engine.InspectContainer("ty-no-such-container").status().code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(engine.RemoveContainer("ty-no-such-container").ok());
  EXPECT_TRUE(engine.RemoveNetwork("ty-no-such-network").ok());
  auto exists = engine.ImageExists(testing::kTestImage);
  ASSERT_TRUE(exists.ok());
  EXPECT_TRUE(*exists);
  exists = engine.ImageExists("localhost/trainyard/no-such-image:x");
  ASSERT_TRUE(exists.ok());
  EXPECT_FALSE(*exists);
}

}  // namespace
}  // namespace ty::executor

namespace ty::executor {
namespace {

// Needs a local registry: set TRAINYARD_TEST_REGISTRY_IMAGE to an image pushed to
// one on 127.0.0.1 (e.g. 127.0.0.1:5055/ty/busybox:v1) that is not present locally.
TEST(EngineClientTest, PullsFromALoopbackRegistry) {
  TY_REQUIRE_ENGINE_OR_SKIP();
  const char* image = std::getenv("TRAINYARD_TEST_REGISTRY_IMAGE");
  if (image == nullptr) GTEST_SKIP() << "TRAINYARD_TEST_REGISTRY_IMAGE not set";
  EngineClient engine(testing::EngineSocket());
  Status s = engine.PullImage(image);
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto exists = engine.ImageExists(image);
  ASSERT_TRUE(exists.ok());
  EXPECT_TRUE(*exists);
}

}  // namespace
}  // namespace ty::executor
