// Network slots (executor/container/network_slots.h) on real podman: what a replica in a slot
// sees of the network, and that the next job's replica gets the same namespace with
// nothing of the previous one left in it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "executor/container/container_executor.h"
#include "executor/container/network_slots.h"
#include "executor/executor_contract.h"

namespace ty::testing {
namespace {

using executor::AttemptSpec;
using executor::ExecutorEventKind;
using executor::ReplicaLaunch;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// Prints the replica's host name, where /etc/hosts puts it, its address, and
// whether it can listen on port 2222 (a previous replica's listener would hold it).
constexpr char kReport[] =
    "echo \"host $(hostname) $(grep -w \"$(hostname)\" /etc/hosts | awk '{print $1}' | head -n "
    "1)\"; "
    "echo \"names $(awk '{for (i = 2; i <= NF; i++) print $i}' /etc/hosts | tr '\\n' ',')\"; "
    "echo \"addr $(ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1)\"; "
    "(nc -l -p 2222 >/dev/null 2>&1 & p=$!; sleep 0.3; "
    " if kill -0 $p 2>/dev/null; then echo listen ok; kill $p; else echo listen failed; fi); "
    "nc -l -p 2222 >/dev/null 2>&1 &";  // Left listening as the replica ends.

class NetworkSlotsPodmanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TY_REQUIRE_ENGINE_OR_SKIP();
    char tmpl[] = "/tmp/ty-netslots-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    instance_ = "slots" + UniqueJobUid();
    executor::ContainerExecutor::Options o;
    o.clock = SystemClock::Get();
    o.random = SystemRandom::Get();
    o.engine_socket = EngineSocket();
    o.log_sink = &sink_;
    o.instance = instance_;
    o.network_slots = 2;
    o.sandbox_dir = dir_;
    o.sandbox_init = std::string(TY_BINARY_DIR) + "/bin/ty-sandbox-init";
    auto ex = executor::ContainerExecutor::Create(o);
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    ex_ = std::move(*ex);
    ex_->SetEventCallback(events_.Callback());
  }
  void TearDown() override {
    for (const std::string& uid : uids_) {
      if (ex_ != nullptr) ex_->Cleanup(uid, 1).IgnoreError();
      ContainerBackend().ForceClean(uid);
    }
    ex_.reset();
    RemoveLabelled(std::string(executor::kLabelInstance) + "=" + instance_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Runs a one-replica job to its end; returns its log and the holder it joined.
  std::vector<std::string> RunJob(const std::string& hostname, std::string* holder) {
    std::string uid = UniqueJobUid();
    uids_.push_back(uid);
    ReplicaLaunch r = TestReplica(uid, 0, 0);
    r.image = kTestImage;
    r.hostname = hostname;
    r.command = {"/bin/sh", "-c", kReport};
    AttemptSpec a = TestAttempt(uid, {r});
    EXPECT_TRUE(ex_->Launch(a).ok());
    auto launched = events_.WaitForLaunch(uid);
    EXPECT_TRUE(launched && launched->kind == ExecutorEventKind::kAttemptStarted)
        << (launched ? launched->message : "no launch event");
    executor::EngineApiClient engine(EngineSocket());
    auto listed = engine.ListContainers({std::string(executor::kLabelJob) + "=" + uid});
    if (listed.ok() && listed->size() == 1) *holder = (*listed)[0].Label(executor::kLabelNetSlot);
    auto exits = events_.WaitFor(uid, ExecutorEventKind::kReplicaExited, 1, 30000);
    EXPECT_EQ(exits.size(), 1u);
    EXPECT_TRUE(ex_->Cleanup(uid, 1).ok());
    return sink_.Messages(uid, r.task_name);
  }

  std::string dir_;
  std::string instance_;
  std::vector<std::string> uids_;
  RecordingLogSink sink_;
  EventRecorder events_{&sink_};
  std::unique_ptr<executor::ContainerExecutor> ex_;
};

TEST_F(NetworkSlotsPodmanTest, TheNextJobGetsTheSameNamespaceWithNothingLeftInIt) {
  std::string first_holder, second_holder;
  std::vector<std::string> first = RunJob("workerpool0-0", &first_holder);
  ASSERT_FALSE(first_holder.empty()) << "the replica joined no slot";
  // Its own host name resolves (to the shared namespace's loopback), it has an
  // address on the engine's network, and the port is free.
  EXPECT_THAT(first, Contains("host workerpool0-0 127.0.0.1"));
  EXPECT_THAT(first, Contains("listen ok"));
  std::string address;
  for (const std::string& m : first) {
    if (m.rfind("addr ", 0) == 0) address = m.substr(5);
  }
  EXPECT_FALSE(address.empty());

  std::vector<std::string> second = RunJob("chief-host", &second_holder);
  EXPECT_EQ(second_holder, first_holder);
  // The same address; the first replica's name is gone from /etc/hosts, and its
  // last listener went with it.
  EXPECT_THAT(second, Contains("addr " + address));
  EXPECT_THAT(second, Contains("host chief-host 127.0.0.1"));
  EXPECT_THAT(second, Contains("listen ok"));
  std::string names;
  for (const std::string& m : second) {
    if (m.rfind("names ", 0) == 0) names = m;
  }
  EXPECT_THAT(names, HasSubstr("chief-host"));
  EXPECT_THAT(names, Not(HasSubstr("workerpool0-0")));
  executor::EngineApiClient engine(EngineSocket());
  auto holders = engine.ListContainers(
      {std::string(executor::kLabelInstance) + "=" + instance_, executor::kLabelNetSlotHolder});
  ASSERT_TRUE(holders.ok());
  EXPECT_EQ(holders->size(), 1u);

  // The executor's end takes its idle holders with it.
  ex_.reset();
  holders = engine.ListContainers(
      {std::string(executor::kLabelInstance) + "=" + instance_, executor::kLabelNetSlotHolder});
  ASSERT_TRUE(holders.ok());
  EXPECT_TRUE(holders->empty());
}

}  // namespace
}  // namespace ty::testing
