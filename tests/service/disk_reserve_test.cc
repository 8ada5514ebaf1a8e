#include "service/disk_reserve.h"

#include <gtest/gtest.h>

namespace ty::service {
namespace {

constexpr uint64_t kMiB = 1ULL << 20;

TEST(DiskReserveTest, TheDefaultIsTheSmallerOf256MiBAndFivePercent) {
  EXPECT_EQ(ReserveBytes({.free_bytes = 0, .total_bytes = 64 * 1024 * kMiB}, std::nullopt),
            256 * kMiB);
  EXPECT_EQ(ReserveBytes({.free_bytes = 0, .total_bytes = 64 * kMiB}, std::nullopt),
            64 * kMiB / 20);
  EXPECT_EQ(ReserveBytes({.free_bytes = 0, .total_bytes = 64 * kMiB}, 7 * kMiB), 7 * kMiB);
  EXPECT_EQ(ReserveBytes({.free_bytes = 0, .total_bytes = 64 * kMiB}, 0), 0u);
}

TEST(DiskReserveTest, BelowTheReserveIsAResourceExhaustedSayingBoth) {
  EXPECT_TRUE(CheckReserve({.free_bytes = 10 * kMiB, .total_bytes = 0}, 10 * kMiB).ok());
  Status low = CheckReserve({.free_bytes = 3 * kMiB, .total_bytes = 0}, 10 * kMiB);
  EXPECT_EQ(low.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(low.message().find("3 MiB free, below its reserve of 10 MiB"), std::string::npos)
      << low.message();
}

TEST(DiskReserveTest, MeasuresARealFilesystem) {
  Result<DiskSpace> disk = MeasureDisk("/");
  ASSERT_TRUE(disk.ok()) << disk.status().ToString();
  EXPECT_GT(disk->total_bytes, 0u);
  EXPECT_LE(disk->free_bytes, disk->total_bytes);
  EXPECT_EQ(MeasureDisk("/no/such/dir").status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace ty::service
