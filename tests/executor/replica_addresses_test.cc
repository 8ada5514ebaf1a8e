// Which job's replica has an address (executor/container/replica_addresses.h): listed lazily,
// forgotten at a replica's exit, strangers remembered briefly, ambiguity is nobody.
#include "executor/container/replica_addresses.h"

#include <gtest/gtest.h>

#include "fakes/manual_clock.h"

namespace ty::executor {
namespace {

using Entries = std::vector<ReplicaAddressBook::Entry>;

class ReplicaAddressesTest : public ::testing::Test {
 protected:
  ReplicaAddressBook book_{[this]() -> Result<Entries> {
                             ++lists_;
                             if (!engine_up_) return Unavailable("engine away");
                             return running_;
                           },
                           &clock_};
  testing::ManualClock clock_;
  Entries running_;
  bool engine_up_ = true;
  int lists_ = 0;
};

TEST_F(ReplicaAddressesTest, OneListingAnswersEveryKnownAddress) {
  running_ = {{"10.88.0.5", "job-a"}, {"10.89.0.2", "job-b"}, {"10.89.0.3", "job-b"}};
  EXPECT_EQ(book_.JobAt("10.88.0.5"), "job-a");
  EXPECT_EQ(book_.JobAt("10.89.0.3"), "job-b");
  EXPECT_EQ(book_.JobAt("10.89.0.2"), "job-b");
  EXPECT_EQ(lists_, 1);
  EXPECT_EQ(book_.JobAt(""), std::nullopt);
  EXPECT_EQ(lists_, 1);
}

TEST_F(ReplicaAddressesTest, AStrangerIsListedAtMostOnceASecond) {
  running_ = {{"10.88.0.5", "job-a"}};
  for (int i = 0; i < 100; ++i) EXPECT_EQ(book_.JobAt("127.0.0.1"), std::nullopt);
  EXPECT_EQ(lists_, 1);
  clock_.Advance(1'100'000);
  running_.push_back({"127.0.0.1", "job-c"});  // Not that loopback ever is a replica.
  EXPECT_EQ(book_.JobAt("127.0.0.1"), "job-c");
  EXPECT_EQ(lists_, 2);
}

TEST_F(ReplicaAddressesTest, AnAddressHandedOnNeverSpeaksForItsFormerJob) {
  // A network slot: job-a's replica had the holder's address, exits; job-b joins.
  running_ = {{"10.88.0.9", "job-a"}};
  EXPECT_EQ(book_.JobAt("10.88.0.9"), "job-a");
  book_.Forget("job-a");  // Its watcher, before the exit is reported.
  running_ = {{"10.88.0.9", "job-b"}};
  EXPECT_EQ(book_.JobAt("10.88.0.9"), "job-b");
  EXPECT_EQ(lists_, 2);
}

TEST_F(ReplicaAddressesTest, TwoJobsClaimingOneAddressAreNeither) {
  running_ = {{"10.88.0.9", "job-a"}, {"10.88.0.9", "job-b"}, {"10.88.0.10", "job-b"}};
  EXPECT_EQ(book_.JobAt("10.88.0.9"), std::nullopt);
  EXPECT_EQ(book_.JobAt("10.88.0.10"), "job-b");
}

TEST_F(ReplicaAddressesTest, WithTheEngineAwayNobodyIsAnybody) {
  engine_up_ = false;
  EXPECT_EQ(book_.JobAt("10.88.0.5"), std::nullopt);
  engine_up_ = true;
  running_ = {{"10.88.0.5", "job-a"}};
  EXPECT_EQ(book_.JobAt("10.88.0.5"), std::nullopt);  // Not asked again within a second.
  EXPECT_EQ(lists_, 1);
  clock_.Advance(1'100'000);
  EXPECT_EQ(book_.JobAt("10.88.0.5"), "job-a");
}

}  // namespace
}  // namespace ty::executor
