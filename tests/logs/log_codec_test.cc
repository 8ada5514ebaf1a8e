// The on-disk line format is a compatibility surface (files outlive the daemon).
#include "logs/log_codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ty::logs::internal {
namespace {

TEST(LogCodecTest, EncodesOneCompactLineWithStableKeys) {
  LogEntry e{1599694755549112, "workerpool0-0", LogStream::kStderr, "ERROR", "a\nb \"q\""};
  EXPECT_EQ(EncodeLine(e),
            R"({"t":1599694755549112,"task":"workerpool0-0","stream":"stderr","sev":"ERROR",)"
            R"("msg":"a\nb \"q\""})"
            "\n");
}

TEST(LogCodecTest, DecodesWhatItEncodes) {
  LogEntry e{-5, "service", LogStream::kService, "INFO", "hello \xc3\xa9"};
  std::string line = EncodeLine(e);
  line.pop_back();  // '\n'
  std::optional<LogEntry> back = DecodeLine(line);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->time, e.time);
  EXPECT_EQ(back->task, e.task);
  EXPECT_EQ(back->stream, e.stream);
  EXPECT_EQ(back->severity, e.severity);
  EXPECT_EQ(back->message, e.message);
}

TEST(LogCodecTest, RejectsMalformedLines) {
  EXPECT_FALSE(DecodeLine("").has_value());
  EXPECT_FALSE(DecodeLine("not json").has_value());
  EXPECT_FALSE(DecodeLine("[1,2]").has_value());
  EXPECT_FALSE(DecodeLine(R"({"msg":"no time"})").has_value());
  EXPECT_FALSE(DecodeLine(R"({"t":"1","msg":"string time"})").has_value());
  EXPECT_FALSE(DecodeLine(R"({"t":1,"msg":5})").has_value());  // Wrong type: no throw.
}

TEST(LogCodecTest, NormalizeLeavesPlainTextAlone) {
  LogEntry e{1, "t", LogStream::kStdout, "", "{not json}"};
  LogEntry n = Normalize(e);
  EXPECT_EQ(n.message, "{not json}");
  EXPECT_EQ(n.severity, "INFO");
}

TEST(LogCodecTest, StructuredLinesKeepTheirJsonThroughTheFile) {
  LogEntry e{1, "t", LogStream::kStdout, "",
             R"({"message":"epoch 1","severity":"warning","loss":0.5})"};
  LogEntry n = Normalize(e);
  EXPECT_EQ(n.message, "epoch 1");
  EXPECT_EQ(n.severity, "WARNING");
  std::optional<LogEntry> back = DecodeLine(EncodeLine(n));
  ASSERT_TRUE(back.has_value());
  nlohmann::json payload = nlohmann::json::parse(back->json_payload);
  EXPECT_EQ(payload["loss"], 0.5);
  EXPECT_EQ(payload["message"], "epoch 1");
  // A non-string message is not a usable jsonPayload: the line stays text.
  LogEntry odd = Normalize(LogEntry{1, "t", LogStream::kStdout, "", R"({"message":7})"});
  EXPECT_EQ(odd.message, R"({"message":7})");
  EXPECT_TRUE(odd.json_payload.empty());
}

}  // namespace
}  // namespace ty::logs::internal
