#include "common/time.h"

#include <gtest/gtest.h>

namespace ty {
namespace {

TEST(TimeTest, FormatsUtcWithZAndTrimmedFraction) {
  EXPECT_EQ(FormatRfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatRfc3339(1599694755549000), "2020-09-09T23:39:15.549Z");
  EXPECT_EQ(FormatRfc3339(1599694755549112), "2020-09-09T23:39:15.549112Z");
}

TEST(TimeTest, FormatsFixedNineDigitsSoStringsSortAsTimes) {
  EXPECT_EQ(FormatRfc3339Nanos(0), "1970-01-01T00:00:00.000000000Z");
  EXPECT_EQ(FormatRfc3339Nanos(1599694755549112), "2020-09-09T23:39:15.549112000Z");
  EXPECT_LT(FormatRfc3339Nanos(1599694755000000), FormatRfc3339Nanos(1599694755500000));
  EXPECT_EQ(*ParseRfc3339(FormatRfc3339Nanos(1599694755549112)), 1599694755549112);
}

TEST(TimeTest, ParsesOffsetsAndNanos) {
  EXPECT_EQ(*ParseRfc3339("2020-09-09T23:39:15.549112551Z"), 1599694755549112);
  EXPECT_EQ(*ParseRfc3339("2020-09-10T01:39:15+02:00"), 1599694755000000);
  EXPECT_FALSE(ParseRfc3339("2020-09-09 junk").ok());
  EXPECT_FALSE(ParseRfc3339("2020-13-09T00:00:00Z").ok());
}

TEST(TimeTest, Durations) {
  EXPECT_EQ(*ParseDuration("7200s"), 7200LL * 1000000);
  EXPECT_EQ(*ParseDuration("1.5s"), 1500000);
  EXPECT_FALSE(ParseDuration("7200").ok());
  EXPECT_FALSE(ParseDuration("s").ok());
  EXPECT_FALSE(ParseDuration("1.s").ok());
  EXPECT_EQ(FormatDuration(1500000), "1.5s");
}

// Found by a hostile request (issue 19): "999999999999999s" got the wrong message,
// "-0.000000001s" read as 0 (a valid timeout) and "315576000001s" past proto3's range
// was accepted.
TEST(TimeTest, DurationsParseExactlyWithinProto3sRange) {
  EXPECT_EQ(*ParseDuration("315576000000s"), 315576000000LL * 1000000);
  for (const char* over : {"315576000001s", "999999999999999s", "-315576000001s",
                           "315576000000.000000001s", "99999999999999999999999999s"}) {
    Result<DurationMicros> d = ParseDuration(over);
    ASSERT_FALSE(d.ok()) << over;
    EXPECT_NE(d.status().message().find("out of range"), std::string::npos) << d.status().message();
  }
  EXPECT_LT(*ParseDuration("-0.000000001s"), 0);
  EXPECT_GT(*ParseDuration("0.000000001s"), 0);
  EXPECT_EQ(*ParseDuration("-1.5s"), -1500000);
  EXPECT_EQ(*ParseDuration("0.123456789s"), 123457);
  EXPECT_FALSE(ParseDuration("1.1234567890s").ok());
  EXPECT_FALSE(ParseDuration("--1s").ok());
  EXPECT_FALSE(ParseDuration("+1s").ok());
  EXPECT_EQ(FormatDuration(7200LL * 1000000), "7200s");
}

}  // namespace
}  // namespace ty
