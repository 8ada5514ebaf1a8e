// The Random seam (common/random.h): a seeded source replays, the system's does not,
// and the ids made from either have the length asked for.
#include "common/random.h"

#include <gtest/gtest.h>

#include <set>

namespace ty {
namespace {

TEST(RandomTest, ASeededSourceReplaysItsSequence) {
  SeededRandom a(42), b(42), c(43);
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    EXPECT_NE(x, c.Next());
  }
}

TEST(RandomTest, TheSystemSourceRepeatsNothingInAThousandDraws) {
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(SystemRandom::Get()->Next());
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(RandomTest, HexHasTheDigitsAskedForUpTo32) {
  SeededRandom r(7);
  for (int digits : {0, 1, 8, 16, 17, 32}) {
    std::string hex = RandomHex(r, digits);
    EXPECT_EQ(hex.size(), static_cast<size_t>(digits));
    EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos) << hex;
  }
  EXPECT_EQ(RandomHex(r, 40).size(), 32u);
}

}  // namespace
}  // namespace ty
