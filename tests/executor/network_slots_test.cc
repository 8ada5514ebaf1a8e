// Network slots (executor/container/network_slots.h) on a fake engine that, as podman, refuses
// to remove a container another one joined: which replicas join a holder, that a
// slot serves one replica at a time and then the next, and that no holder is lost
// or removed from under a replica across executors. The same slots run on real
// podman in the contract suite (ContainerExecutorContract/Slots).
#include "executor/container/network_slots.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <memory>
#include <thread>

#include "executor/container/container_executor.h"
#include "executor/event_recorder.h"
#include "executor/executor_contract.h"
#include "executor/recording_log_sink.h"
#include "fakes/fake_engine.h"

namespace ty::testing {
namespace {

using executor::AttemptSpec;
using executor::ContainerExecutor;
using executor::ExecutorEventKind;
using executor::kLabelNetSlot;
using executor::kLabelNetSlotHolder;
using executor::ReplicaLaunch;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr char kImage[] = "127.0.0.1:5000/train:1";
constexpr char kInstance[] = "/var/lib/trainyard-slots";

class NetworkSlotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_->AddImage(kImage);
    engine_->speaks_libpod = true;
    ex_ = NewExecutor(2);
    ASSERT_NE(ex_, nullptr);
  }
  void TearDown() override {
    ex_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<ContainerExecutor> NewExecutor(int slots) {
    ContainerExecutor::Options o;
    o.clock = SystemClock::Get();
    o.random = SystemRandom::Get();
    o.instance = kInstance;
    o.network_slots = slots;
    o.sandbox_dir = dir_;
    o.sandbox_init = "/bin/true";  // Only copied into the holders' root here.
    return ExecutorOnEngine(engine_, o, &sink_, &events_);
  }

  AttemptSpec Attempt(const std::string& uid, int replicas) {
    return ChiefAndWorkers(uid, replicas, kImage);
  }

  // Launches a one-replica job; returns the replica's container name.
  std::string LaunchOne(const std::string& uid, ContainerExecutor* ex = nullptr) {
    AttemptSpec a = Attempt(uid, 1);
    EXPECT_TRUE((ex != nullptr ? ex : ex_.get())->Launch(a).ok());
    auto e = events_.WaitForLaunch(uid, 10000);
    EXPECT_TRUE(e.has_value() && e->kind == ExecutorEventKind::kAttemptStarted)
        << (e ? e->message : "no launch event");
    return a.replicas[0].name;
  }

  void EndAndCleanUp(const std::string& uid, const std::string& replica,
                     ContainerExecutor* ex = nullptr) {
    engine_->Exit(replica, 0);
    EXPECT_THAT(events_.WaitFor(uid, ExecutorEventKind::kReplicaExited, 1, 10000), SizeIs(1));
    EXPECT_TRUE((ex != nullptr ? ex : ex_.get())->Cleanup(uid, 1).ok());
  }

  // The holder a replica joined, from its create body ("" = none).
  std::string HolderOf(const std::string& replica) {
    nlohmann::json body = engine_->CreateBody(replica);
    std::string mode = body["HostConfig"].value("NetworkMode", "");
    std::string label = body["Labels"].value(kLabelNetSlot, "");
    EXPECT_EQ(mode.empty() ? "" : mode.substr(std::string("container:").size()), label) << mode;
    return label;
  }

  // The holder of a job that ran and was cleaned up: idle, the next one handed out.
  std::string IdleHolder() {
    std::string uid = "j" + UniqueJobUid();
    std::string replica = LaunchOne(uid);
    std::string holder = HolderOf(replica);
    EndAndCleanUp(uid, replica);
    return holder;
  }

  // `a` starts, its replica in no slot, and no holder is left (the one it was handed
  // was dropped).
  void ExpectStartedWithoutSlot(const AttemptSpec& a) {
    ASSERT_TRUE(ex_->Launch(a).ok());
    auto e = events_.WaitForLaunch(a.job_uid, 10000);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->kind, ExecutorEventKind::kAttemptStarted) << e->message;
    EXPECT_EQ(HolderOf(a.replicas[0].name), "");
    EXPECT_THAT(Holders(), IsEmpty());
  }

  std::vector<std::string> Holders() {
    std::vector<std::string> out;
    auto listed = engine_->ListContainers({kLabelNetSlotHolder});
    EXPECT_TRUE(listed.ok());
    if (listed.ok()) {
      for (const auto& c : *listed) out.push_back(c.name);
    }
    return out;
  }

  std::string dir_ = "/tmp/ty-slots-test-" + UniqueJobUid();
  std::shared_ptr<FakeEngine> engine_ = std::make_shared<FakeEngine>();
  RecordingLogSink sink_;
  EventRecorder events_{&sink_};
  std::unique_ptr<ContainerExecutor> ex_;
};

TEST_F(NetworkSlotsTest, AReplicaJoinsAHolderThatServesTheNextJobAfterIt) {
  std::string first = "j" + UniqueJobUid();
  std::string replica = LaunchOne(first);
  std::string holder = HolderOf(replica);
  ASSERT_FALSE(holder.empty());
  // The holder: the daemon's own root with the init waiting, labelled for recovery.
  nlohmann::json body = engine_->CreateBody(holder);
  EXPECT_EQ(body["rootfs"], dir_ + "/netslot-root");
  EXPECT_EQ(body["command"], nlohmann::json({"/init", "--hold"}));
  EXPECT_EQ(body["labels"][executor::kLabelInstance], kInstance);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/netslot-root/init"));
  EXPECT_TRUE(engine_->IsRunning(holder));

  // While the first job runs, the next gets a slot of its own.
  std::string second = "j" + UniqueJobUid();
  std::string other = HolderOf(LaunchOne(second));
  EXPECT_NE(other, holder);
  EndAndCleanUp(first, replica);
  // Its replica gone, the first slot serves the next job.
  std::string third = "j" + UniqueJobUid();
  EXPECT_EQ(HolderOf(LaunchOne(third)), holder);
  EXPECT_THAT(Holders(), SizeIs(2));
}

TEST_F(NetworkSlotsTest, ReplicasThatTalkGetTheirOwnNetworkAndNoSlot) {
  std::string uid = "j" + UniqueJobUid();
  AttemptSpec a = Attempt(uid, 3);
  ASSERT_TRUE(ex_->Launch(a).ok());
  ASSERT_EQ(events_.WaitForLaunch(uid, 10000)->kind, ExecutorEventKind::kAttemptStarted);
  for (const ReplicaLaunch& r : a.replicas) {
    EXPECT_EQ(engine_->CreateBody(r.name)["HostConfig"]["NetworkMode"],
              ContainerExecutor::AttemptNetworkName(uid, 1));
  }
  EXPECT_THAT(Holders(), IsEmpty());
}

TEST_F(NetworkSlotsTest, OnlyPodmanHasSlots) {
  engine_->speaks_libpod = false;
  auto docker = NewExecutor(2);
  std::string uid = "j" + UniqueJobUid();
  std::string replica = LaunchOne(uid, docker.get());
  EXPECT_EQ(HolderOf(replica), "");
  EXPECT_THAT(Holders(), IsEmpty());
}

// A daemon restart: the holder of a replica that runs on is neither removed nor
// handed to another job; once that replica is cleaned up it serves again; the
// executor's end removes every holder no replica uses.
TEST_F(NetworkSlotsTest, AHolderInUseSurvivesTheExecutorAndIsNotSharedAfterRecovery) {
  std::string running = "j" + UniqueJobUid();
  std::string replica = LaunchOne(running);
  std::string holder = HolderOf(replica);
  ex_.reset();  // The daemon stops; the replica runs on.
  EXPECT_TRUE(engine_->IsRunning(holder));

  ex_ = NewExecutor(2);
  ASSERT_TRUE(ex_->Recover().ok());
  std::string next = "j" + UniqueJobUid();
  std::string next_replica = LaunchOne(next);
  EXPECT_NE(HolderOf(next_replica), holder);
  EndAndCleanUp(running, replica);
  EXPECT_EQ(HolderOf(LaunchOne("j" + UniqueJobUid())), holder);

  EndAndCleanUp(next, next_replica);
  ex_.reset();
  // Left: the holder of the last job's replica, which still runs.
  EXPECT_THAT(Holders(), ::testing::ElementsAre(holder));
}

TEST_F(NetworkSlotsTest, IdleHoldersBeyondTheLimitAreRemoved) {
  ex_ = NewExecutor(1);
  std::vector<std::pair<std::string, std::string>> jobs;
  for (int i = 0; i < 3; ++i) {
    std::string uid = "j" + UniqueJobUid();
    jobs.emplace_back(uid, LaunchOne(uid));
  }
  EXPECT_THAT(Holders(), SizeIs(3));
  for (const auto& [uid, replica] : jobs) EndAndCleanUp(uid, replica);
  EXPECT_THAT(Holders(), SizeIs(1));
}

// A holder the engine lost (removed by hand): the launch goes on without a slot, and
// that holder is never handed out again.
TEST_F(NetworkSlotsTest, ALaunchThatCannotJoinItsHolderGoesOnWithoutSlot) {
  std::string holder = IdleHolder();
  AttemptSpec a = Attempt("j" + UniqueJobUid(), 1);
  engine_->FailNext("CreateContainer",
                    NotFound("no container with name or ID \"" + holder + "\" found"),
                    a.replicas[0].name);
  ExpectStartedWithoutSlot(a);
  EXPECT_NE(HolderOf(LaunchOne("j" + UniqueJobUid())), holder);
}

// A holder that stopped while idle: podman cannot start it for the next replica and
// says so without naming it; the launch goes on without a slot and drops it.
TEST_F(NetworkSlotsTest, ALaunchWhoseHolderCannotStartGoesOnWithoutIt) {
  engine_->Exit(IdleHolder(), 137);
  ExpectStartedWithoutSlot(Attempt("j" + UniqueJobUid(), 1));
}

// A daemon killed between creating a holder and starting it: the next daemon does
// not hand that holder out (a replica joining it would fail to start) but removes it.
TEST_F(NetworkSlotsTest, AHolderThatNeverStartedIsRemovedAtRecovery) {
  const std::string stale = "ty-net-0123456789-h";
  nlohmann::json body = {
      {"name", stale},
      {"rootfs", dir_ + "/netslot-root"},
      {"command", {"/init", "--hold"}},
      {"labels", {{kLabelNetSlotHolder, "1"}, {executor::kLabelInstance, kInstance}}}};
  ASSERT_TRUE(engine_->CreateContainerLibpod(stale, body.dump()).ok());
  ASSERT_TRUE(ex_->Recover().ok());
  EXPECT_THAT(Holders(), IsEmpty());
  std::string holder = HolderOf(LaunchOne("j" + UniqueJobUid()));
  EXPECT_FALSE(holder.empty());
  EXPECT_NE(holder, stale);
}

// A restarted daemon while a holder of the one before runs the root's init: the new
// daemon still makes holders (writing over a running binary fails with ETXTBSY).
TEST_F(NetworkSlotsTest, HoldersAreMadeWhileAnEarlierDaemonsHolderRunsTheInit) {
  const std::string root = dir_ + "/netslot-root";
  std::filesystem::create_directories(root);
  std::filesystem::copy_file("/bin/sleep", root + "/init");
  pid_t running = fork();
  if (running == 0) {
    execl((root + "/init").c_str(), "init", "30", nullptr);
    _exit(127);
  }
  // Until the child runs the file, not some earlier stage of exec.
  for (int i = 0; i < 200; ++i) {
    char exe[4096] = {0};
    std::string link = "/proc/" + std::to_string(running) + "/exe";
    if (readlink(link.c_str(), exe, sizeof exe - 1) > 0 && std::string(exe) == root + "/init")
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string holder = HolderOf(LaunchOne("j" + UniqueJobUid()));
  kill(running, SIGKILL);
  waitpid(running, nullptr, 0);
  EXPECT_FALSE(holder.empty()) << "no holder made while the old init ran";
  // The root's init is the new daemon's (here /bin/true), whole.
  EXPECT_EQ(std::filesystem::file_size(root + "/init"), std::filesystem::file_size("/bin/true"));
}

}  // namespace
}  // namespace ty::testing
