// Pure parts of the warm pool: which attempts share a gang, and replica names.
#include "executor/container/warm_pool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fakes/fake_engine.h"

namespace ty::executor {
namespace {

AttemptSpec Shape(std::vector<std::string> images, bool own_network) {
  AttemptSpec a;
  a.job_uid = std::string(1, '1');  // Not a literal: GCC 12 misreports -Wrestrict on it.
  a.peers_talk = own_network;
  for (size_t i = 0; i < images.size(); ++i) {
    ReplicaLaunch r;
    r.pool = i == 0 ? 0 : 1;
    r.index = i == 0 ? 0 : static_cast<int>(i - 1);
    r.name = ReplicaName("1", 1, r.pool, r.index);
    r.image = images[i];
    r.mounts = {{"/data/buckets", "/gcs", false}};
    a.replicas.push_back(r);
  }
  return a;
}

TEST(WarmPoolShapeTest, SameImagesMountsAndNetworkingShareAKey) {
  AttemptSpec a = Shape({"img:1", "img:1"}, true);
  AttemptSpec b = Shape({"img:1", "img:1"}, true);
  b.job_uid = "2";  // Another job, other commands and environment: same shape.
  b.replicas[0].command = {"python3", "-m", "trainer"};
  b.replicas[1].env = {{"A", "b"}};
  EXPECT_EQ(WarmPool::ShapeKey(a), WarmPool::ShapeKey(b));
  EXPECT_NE(WarmPool::ShapeKey(a), WarmPool::ShapeKey(Shape({"img:1", "img:2"}, true)));
  EXPECT_NE(WarmPool::ShapeKey(a), WarmPool::ShapeKey(Shape({"img:1", "img:1", "img:1"}, true)));
  EXPECT_NE(WarmPool::ShapeKey(a), WarmPool::ShapeKey(Shape({"img:1", "img:1"}, false)));
  AttemptSpec other_mount = Shape({"img:1", "img:1"}, true);
  other_mount.replicas[1].mounts[0].read_only = true;
  EXPECT_NE(WarmPool::ShapeKey(a), WarmPool::ShapeKey(other_mount));
}

TEST(WarmPoolShapeTest, GpusAndEmptyAttemptsAreNeverWarm) {
  AttemptSpec gpu = Shape({"img:1", "img:1"}, true);
  gpu.replicas[1].accelerator_type = "NVIDIA_TESLA_T4";
  gpu.replicas[1].accelerator_count = 1;
  EXPECT_EQ(WarmPool::ShapeKey(gpu), "");
  EXPECT_EQ(WarmPool::ShapeKey(AttemptSpec{}), "");
}

// A shell execs into the container, which in a warm sandbox lacks the replica's
// environment: an attempt that offers shells is never warm.
TEST(WarmPoolShapeTest, AttemptsOfferingShellsAreNeverWarm) {
  AttemptSpec plain = Shape({"img:1"}, false);
  ASSERT_NE(WarmPool::ShapeKey(plain), "");
  AttemptSpec shells = plain;
  shells.shells = true;
  EXPECT_EQ(WarmPool::ShapeKey(shells), "");
}

// Issue 30 item 7: a sandbox's claim record is read back as untrusted (the sandbox
// directory is shared with a replica): a FIFO never blocks recovery, a field of
// another type is a malformed claim, never an exception.
TEST(WarmPoolClaimTest, AClaimRecordIsReadBackAsUntrusted) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ty-claim-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "sb1");
  testing::FakeEngine engine;
  WarmPoolOptions options;
  options.dir = dir.string();
  WarmPool pool(&engine, options);
  ContainerSummary c;
  c.labels[kLabelSandbox] = "sb1";
  EXPECT_EQ(pool.ReadClaim(c).status().code(), StatusCode::kNotFound);
  std::ofstream(dir / "sb1" / "claim.json") << R"({"replica": 5, "task": "t"})";
  EXPECT_EQ(pool.ReadClaim(c).status().code(), StatusCode::kInternal);
  std::filesystem::remove(dir / "sb1" / "claim.json");
  ASSERT_EQ(::mkfifo((dir / "sb1" / "claim.json").c_str(), 0600), 0);
  EXPECT_EQ(pool.ReadClaim(c).status().code(), StatusCode::kInternal);
  std::filesystem::remove(dir / "sb1" / "claim.json");
  std::ofstream(dir / "sb1" / "claim.json") << R"({"replica": "r-0", "task": "workerpool0-0"})";
  Result<SandboxClaim> claim = pool.ReadClaim(c);
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  EXPECT_EQ(claim->replica, "r-0");
  EXPECT_EQ(claim->task, "workerpool0-0");
  std::filesystem::remove_all(dir);
}

TEST(ReplicaNameTest, ParsesWhatReplicaNameMakes) {
  std::string uid;
  int attempt = 0, pool = 0, index = 0;
  ASSERT_TRUE(ParseReplicaName(ReplicaName("1731234567890123456", 2, 3, 14), &uid, &attempt, &pool,
                               &index));
  EXPECT_EQ(uid, "1731234567890123456");
  EXPECT_EQ(attempt, 2);
  EXPECT_EQ(pool, 3);
  EXPECT_EQ(index, 14);
  // Uids with dashes (tests use any string) parse from the right.
  ASSERT_TRUE(ParseReplicaName(ReplicaName("a-b", 1, 0, 0), &uid, &attempt, &pool, &index));
  EXPECT_EQ(uid, "a-b");
  for (const char* bad : {"", "ty-", "ty-1-1-0", "ty--1-0-0", "ty-1-1-0-x", "ty-1-1--0",
                          "ty-sbx-0a1-0", "other-1-1-0-0"}) {
    EXPECT_FALSE(ParseReplicaName(bad, &uid, &attempt, &pool, &index)) << bad;
  }
}

}  // namespace
}  // namespace ty::executor
