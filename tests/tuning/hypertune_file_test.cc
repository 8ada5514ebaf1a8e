#include "tuning/hypertune_file.h"

#include <gtest/gtest.h>

namespace ty::tuning {
namespace {

// Lines exactly as cloudml-hypertune writes them (json.dumps(sort_keys=True)).
constexpr char kRealFile[] =
    R"({"accuracy": "0.81", "checkpoint_path": "", "global_step": "100", "timestamp": 1690000000.123456, "trial": "3"})"
    "\n"
    R"({"accuracy": "0.875", "checkpoint_path": "", "global_step": "200", "timestamp": 1690000001.5, "trial": "3"})"
    "\n";

TEST(HypertuneFileTest, ReadsTheLibrarysLines) {
  MetricsFile f = ParseMetricsFile(kRealFile, "accuracy");
  ASSERT_EQ(f.measurements.size(), 2u);
  EXPECT_EQ(f.skipped, 0);
  EXPECT_EQ(f.measurements[0].step, 100);
  EXPECT_DOUBLE_EQ(f.measurements[0].value, 0.81);
  EXPECT_DOUBLE_EQ(f.measurements[1].value, 0.875);
  EXPECT_DOUBLE_EQ(f.measurements[1].timestamp, 1690000001.5);
}

TEST(HypertuneFileTest, TheEmptyTagIsTheDefaultTag) {
  MetricsFile f = ParseMetricsFile(
      R"({"checkpoint_path": "", "global_step": "0", "timestamp": 1.0, "training/hptuning/metric": "3.5", "trial": "0"})",
      "");
  ASSERT_EQ(f.measurements.size(), 1u);
  EXPECT_DOUBLE_EQ(f.measurements[0].value, 3.5);
  EXPECT_EQ(f.measurements[0].step, 0);
}

TEST(HypertuneFileTest, GarbageIsSkippedAndCountedNeverFatal) {
  std::string text = std::string(kRealFile) +
                     "not json\n"
                     "{\"accuracy\": \"nan\"}\n"
                     "{\"accuracy\": \"1e999\"}\n"
                     "{\"accuracy\": \"0.9x\"}\n"
                     "{\"loss\": \"0.1\"}\n"
                     "[1, 2]\n"
                     "{\"accuracy\": \n"  // A line cut by a rewrite in progress.
                     "\n"
                     "{\"accuracy\": 0.95, \"global_step\": 300}";  // No newline at the end.
  MetricsFile f = ParseMetricsFile(text, "accuracy");
  ASSERT_EQ(f.measurements.size(), 3u);
  EXPECT_EQ(f.skipped, 7);
  EXPECT_DOUBLE_EQ(f.measurements[2].value, 0.95);
  EXPECT_EQ(f.measurements[2].step, 300);
  std::string bytes(256, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i);
  EXPECT_TRUE(ParseMetricsFile(bytes, "accuracy").measurements.empty());
}

// Found by fuzzing: a global_step past int64's range was converted anyway (undefined
// behaviour). Such a line is skipped; the largest steps that fit are kept.
TEST(HypertuneFileTest, StepsOutsideInt64AreSkippedNotConverted) {
  std::string text =
      "{\"accuracy\": \"0.5\", \"global_step\": \"19999999999999999999999\"}\n"
      "{\"accuracy\": \"0.5\", \"global_step\": -1e300}\n"
      "{\"accuracy\": \"0.5\", \"global_step\": \"9223372036854775808\"}\n"
      "{\"accuracy\": \"0.6\", \"global_step\": 9007199254740992}\n"
      "{\"accuracy\": \"0.7\", \"global_step\": \"-5\"}\n";
  MetricsFile f = ParseMetricsFile(text, "accuracy");
  EXPECT_EQ(f.skipped, 3);
  ASSERT_EQ(f.measurements.size(), 2u);
  EXPECT_EQ(f.measurements[0].step, 9007199254740992);
  EXPECT_EQ(f.measurements[1].step, -5);
}

}  // namespace
}  // namespace ty::tuning
