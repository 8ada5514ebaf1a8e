// ContainerExecutor logic on a fake engine (tests/fakes/fake_engine.h): what it
// asks the engine for, and what it does when one engine call fails or answers
// the way podman does in awkward moments. No podman needed; the same executor
// runs against the real engine in container_executor_test and the contract suite.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "executor/container/container_body.h"
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
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kImage[] = "127.0.0.1:5000/train:1";
constexpr char kInstance[] = "/var/lib/trainyard-a";

// spdlog makes its registry on first use. The daemon logs from main() before any thread
// starts; these tests may first log from two executor threads at once (the engine probe
// and a launch), and TSan, which does not see inside the uninstrumented libspdlog,
// reports that first use as a race. Made here, before any test starts a thread.
[[maybe_unused]] const bool kLoggerMade = spdlog::default_logger_raw() != nullptr;

class ContainerExecutorLogicTest : public ::testing::Test {
 protected:
  void SetUp() override {
    engine_->AddImage(kImage);
    ex_ = NewExecutor(kInstance);
    ASSERT_NE(ex_, nullptr);
  }

  std::unique_ptr<ContainerExecutor> NewExecutor(
      const std::string& instance,
      const std::function<void(ContainerExecutor::Options*)>& tweak = nullptr) {
    ContainerExecutor::Options o;
    o.clock = SystemClock::Get();
    o.random = SystemRandom::Get();
    o.instance = instance;
    if (tweak) tweak(&o);
    return ExecutorOnEngine(engine_, o, &sink_, &events_);
  }

  AttemptSpec Attempt(int replicas) { return ChiefAndWorkers(uid_, replicas, kImage); }

  std::string Name(const AttemptSpec& a, int i) const { return a.replicas[i].name; }

  // Launches and returns the launch event's kind and message.
  executor::ExecutorEvent LaunchAndWait(const AttemptSpec& a, ContainerExecutor* ex = nullptr) {
    Status s = (ex != nullptr ? ex : ex_.get())->Launch(a);
    EXPECT_TRUE(s.ok()) << s.ToString();
    auto e = events_.WaitForLaunch(uid_, 10000);
    EXPECT_TRUE(e.has_value()) << "no launch event";
    return e.value_or(executor::ExecutorEvent{});
  }

  executor::ExecutorEvent WaitExit(size_t nth) {
    auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, nth, 10000);
    EXPECT_GE(exits.size(), nth);
    return exits.size() >= nth ? exits[nth - 1] : executor::ExecutorEvent{};
  }

  std::shared_ptr<FakeEngine> engine_ = std::make_shared<FakeEngine>();
  std::string uid_ = "j" + UniqueJobUid();
  RecordingLogSink sink_;
  EventRecorder events_{&sink_};
  std::unique_ptr<ContainerExecutor> ex_;
};

TEST(ContainerLogTimeTest, AWholeSecondStampIsWhenTheLineWasSeenWithinThatSecond) {
  constexpr TimeMicros kSecond = 1000000;
  const TimeMicros s = 1700000000 * kSecond;
  // podman 4.3: whole seconds. Read 0.3 s into the second: written then at the latest.
  EXPECT_EQ(ContainerExecutor::ShownTime(s, s + 300000), s + 300000);
  // Read in a later second: written before its own second ended.
  EXPECT_EQ(ContainerExecutor::ShownTime(s, s + 2 * kSecond), s + kSecond - 1);
  // Never before the second it was stamped with.
  EXPECT_EQ(ContainerExecutor::ShownTime(s, s - 5), s);
  // A finer stamp (Docker's nanoseconds) is the time itself.
  EXPECT_EQ(ContainerExecutor::ShownTime(s + 123456, s + 900000), s + 123456);
  // No stamp at all: when it was read.
  EXPECT_EQ(ContainerExecutor::ShownTime(std::nullopt, s + 42), s + 42);
}

TEST_F(ContainerExecutorLogicTest, UnavailableWhenTheEngineIsDown) {
  engine_->SetDown(true);
  ContainerExecutor::Options o;
  o.clock = SystemClock::Get();
  o.random = SystemRandom::Get();
  o.engine = engine_;
  o.log_sink = &sink_;
  auto ex = ContainerExecutor::Create(o);
  EXPECT_EQ(ex.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(ex.status().message(), HasSubstr("podman system service"));
}

// Podman restarted (its socket gone a few seconds) just as a job launched: the launch
// waits for the engine and starts the job instead of failing it (found by the chaos test).
TEST_F(ContainerExecutorLogicTest, ALaunchDuringAnEngineOutageWaitsForTheEngine) {
  AttemptSpec a = Attempt(2);
  engine_->SetDown(true);
  ASSERT_TRUE(ex_->Launch(a).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  EXPECT_FALSE(events_.WaitForLaunch(uid_, 0).has_value()) << "the launch gave up at once";
  // The wait is said (the job's log shows it) before the outcome.
  auto waiting = events_.WaitFor(uid_, ExecutorEventKind::kLaunchWaiting, 1, 0);
  ASSERT_EQ(waiting.size(), 1u);
  EXPECT_THAT(waiting[0].message, HasSubstr("Waiting for the container engine"));
  EXPECT_TRUE(waiting[0].trouble) << "said as a WARNING: the user may act on it";
  engine_->SetDown(false);
  auto e = events_.WaitForLaunch(uid_, 10000);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, ExecutorEventKind::kAttemptStarted) << e->message;
  EXPECT_TRUE(engine_->IsRunning(Name(a, 0)));
  EXPECT_TRUE(engine_->IsRunning(Name(a, 1)));
}

// An outage longer than the executor waits fails the launch, saying why.
TEST_F(ContainerExecutorLogicTest, ALaunchFailsWhenTheEngineStaysDown) {
  auto ex =
      NewExecutor(kInstance, [](ContainerExecutor::Options* o) { o->engine_outage_wait_ms = 700; });
  ASSERT_NE(ex, nullptr);
  engine_->SetDown(true);
  executor::ExecutorEvent e = LaunchAndWait(Attempt(1), ex.get());
  EXPECT_EQ(e.kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(e.message, HasSubstr("image inspect failed"));
}

// A daemon killed while podman was creating a replica: the create completed after the
// client was gone, recovery saw nothing, and the same attempt is launched again. The
// leftover under the replica's own name is replaced instead of failing the launch.
// Replicas in a user namespace (issue 19 item 5): on podman each is created through the
// native API with root mapped to the configured host uid, the directories it writes are
// given to that uid first, and a GPU replica keeps the host's ids.
TEST_F(ContainerExecutorLogicTest, ReplicasRunInAUserNamespaceWhoseRootOwnsTheirWritableMounts) {
  constexpr uint32_t kBase = 2000000000;
  engine_->speaks_libpod = true;
  auto ex = NewExecutor(kInstance,
                        [&](ContainerExecutor::Options* o) { o->replica_userns_base = kBase; });
  ASSERT_NE(ex, nullptr);
  EXPECT_EQ(ex->ReplicaUidBase(), kBase);
  char tmpl[] = "/tmp/ty-userns-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  ::mkdir((dir + "/bucket").c_str(), 0755);
  ::mkdir((dir + "/ro").c_str(), 0755);
  AttemptSpec a = Attempt(2);
  a.replicas[0].mounts = {{dir + "/bucket", "/gcs/bucket", false}, {dir + "/ro", "/ro", true}};
  a.replicas[1].accelerator_count = 1;
  a.replicas[1].gpu_indices = {0};
  ASSERT_EQ(LaunchAndWait(a, ex.get()).kind, ExecutorEventKind::kAttemptStarted);

  nlohmann::json plain = engine_->CreateBody(Name(a, 0));
  EXPECT_EQ(plain["userns"]["nsmode"], "private") << plain.dump();
  const nlohmann::json map = nlohmann::json::array(
      {{{"container_id", 0}, {"host_id", kBase}, {"size", executor::internal::kUsernsSize}}});
  EXPECT_EQ(plain["idmappings"]["UIDMap"], map);
  EXPECT_EQ(plain["idmappings"]["GIDMap"], map);
  EXPECT_FALSE(engine_->CreateBody(Name(a, 1)).contains("idmappings"));  // The GPU replica.
  struct stat st = {};
  ASSERT_EQ(::stat((dir + "/bucket").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kBase);
  EXPECT_EQ(st.st_gid, kBase);
  ASSERT_EQ(::stat((dir + "/ro").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);  // Read-only mounts stay the host's.
  std::filesystem::remove_all(dir);
}

// Another engine (Docker) has no per-container mapping: replicas keep the host's ids.
TEST_F(ContainerExecutorLogicTest, WithoutPodmanReplicasKeepTheHostsIds) {
  auto ex = NewExecutor(kInstance,
                        [](ContainerExecutor::Options* o) { o->replica_userns_base = 2000000000; });
  ASSERT_NE(ex, nullptr);
  EXPECT_EQ(ex->ReplicaUidBase(), 0u);
  AttemptSpec a = Attempt(1);
  ASSERT_EQ(LaunchAndWait(a, ex.get()).kind, ExecutorEventKind::kAttemptStarted);
  EXPECT_FALSE(engine_->CreateBody(Name(a, 0)).contains("idmappings"));
  EXPECT_FALSE(engine_->CreateBody(Name(a, 0))["HostConfig"].contains("UsernsMode"));
}

TEST_F(ContainerExecutorLogicTest, ALeftoverOfAnInterruptedLaunchIsReplaced) {
  AttemptSpec a = Attempt(1);
  nlohmann::json leftover = {{"Image", "127.0.0.1:5000/train:1"},
                             {"Labels",
                              {{executor::kLabelJob, uid_},
                               {executor::kLabelAttempt, std::to_string(a.attempt)},
                               {"leftover", "yes"}}}};
  ASSERT_TRUE(engine_->CreateContainer(Name(a, 0), leftover.dump()).ok());
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  EXPECT_TRUE(engine_->IsRunning(Name(a, 0)));
  // The running container is the launch's own, not the leftover.
  EXPECT_FALSE(engine_->CreateBody(Name(a, 0))["Labels"].contains("leftover"));
}

// A container of the replica's name that this attempt did not create is not ours to remove.
TEST_F(ContainerExecutorLogicTest, AForeignContainerOfTheNameFailsTheLaunch) {
  AttemptSpec a = Attempt(1);
  ASSERT_TRUE(engine_->CreateContainer(Name(a, 0), R"({"Image":"127.0.0.1:5000/train:1"})").ok());
  executor::ExecutorEvent e = LaunchAndWait(a);
  EXPECT_EQ(e.kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(e.message, HasSubstr(Name(a, 0)));
  EXPECT_FALSE(engine_->IsRunning(Name(a, 0)));
}

TEST_F(ContainerExecutorLogicTest, GangOnItsOwnNetworkLabelledForRecovery) {
  AttemptSpec a = Attempt(2);
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);

  const std::string network = ContainerExecutor::AttemptNetworkName(uid_, 1);
  EXPECT_THAT(engine_->NetworkNames(), ElementsAre(network));
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(engine_->IsRunning(Name(a, i)));
    nlohmann::json body = engine_->CreateBody(Name(a, i));
    EXPECT_EQ(body["Labels"][executor::kLabelInstance], kInstance);
    EXPECT_EQ(body["Labels"][executor::kLabelJob], uid_);
    EXPECT_EQ(body["Labels"][executor::kLabelTask], a.replicas[i].task_name);
    EXPECT_EQ(body["Hostname"], a.replicas[i].hostname);
    EXPECT_EQ(body["HostConfig"]["NetworkMode"], network);
    // Fixed addresses in the subnet the engine chose, the gateway skipped.
    EXPECT_EQ(body["NetworkingConfig"]["EndpointsConfig"][network]["IPAMConfig"]["IPv4Address"],
              "10.89.1." + std::to_string(2 + i));
  }
}

TEST_F(ContainerExecutorLogicTest, ExitIsReportedAfterTheLogsWithOomAndSignal) {
  AttemptSpec a = Attempt(2);
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  engine_->Print(Name(a, 0), "epoch 1");
  engine_->Print(Name(a, 0), "warning: slow", 2);
  engine_->Print(Name(a, 0), "done");
  engine_->Exit(Name(a, 0), 0);
  executor::ExecutorEvent first = WaitExit(1);
  EXPECT_EQ(first.pool, 0);
  EXPECT_EQ(first.exit_code, 0);
  EXPECT_FALSE(first.signal.has_value());
  EXPECT_THAT(events_.SnapshotAt(uid_, 1), ElementsAre("epoch 1", "warning: slow", "done"));
  auto entries = sink_.Entries(uid_, a.replicas[0].task_name);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[1].stream, logs::LogStream::kStderr);

  engine_->Exit(Name(a, 1), 137, /*oom_killed=*/true);
  executor::ExecutorEvent second = WaitExit(2);
  EXPECT_EQ(second.pool, 1);
  EXPECT_TRUE(second.oom_killed);
  EXPECT_EQ(second.signal, 9);
}

// Podman reports Running=false, status "stopping" and a provisional exit code 0
// while a stop is under way: that is not an exit, let alone a success.
TEST_F(ContainerExecutorLogicTest, AStoppingReplicaHasNotExitedYet) {
  AttemptSpec a = Attempt(1);
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  engine_->Stopping(Name(a, 0));
  EXPECT_THAT(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1, 600), IsEmpty());
  engine_->Exit(Name(a, 0), 143);
  EXPECT_EQ(WaitExit(1).signal, 15);
}

TEST_F(ContainerExecutorLogicTest, EngineTroubleWhileWatchingLosesNeitherExitNorLogs) {
  AttemptSpec a = Attempt(1);
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  engine_->Print(Name(a, 0), "one");
  for (int i = 0; i < 3; ++i) {
    engine_->FailNext("InspectContainer", Unavailable("engine restarting"), Name(a, 0));
    engine_->FailNext("StreamLogs", Internal("broken pipe"), Name(a, 0));
  }
  engine_->Print(Name(a, 0), "two");
  engine_->Exit(Name(a, 0), 3);
  EXPECT_EQ(WaitExit(1).exit_code, 3);
  EXPECT_THAT(sink_.Messages(uid_), ElementsAre("one", "two"));
}

// The exit says the log is complete: an engine gone between the exit and the last read
// (the chaos test's outage lost a job's last line so) delays the exit, not the lines.
TEST_F(ContainerExecutorLogicTest, AnExitWaitsForItsLastLogReadThroughAnEngineOutage) {
  AttemptSpec a = Attempt(1);
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  engine_->Print(Name(a, 0), "first");
  engine_->Print(Name(a, 0), "last");
  for (int i = 0; i < 3; ++i) {
    engine_->FailNext("StreamLogs", Unavailable("container engine: Couldn't connect"), Name(a, 0));
  }
  engine_->Exit(Name(a, 0), 0);
  EXPECT_EQ(WaitExit(1).exit_code, 0);
  EXPECT_THAT(sink_.Messages(uid_), ElementsAre("first", "last"));
}

TEST_F(ContainerExecutorLogicTest, MissingImageIsPulledOnce) {
  const std::string other = "127.0.0.1:5000/eval:2";
  engine_->AddRegistryImage(other);
  AttemptSpec a = Attempt(3);
  a.replicas[1].image = other;
  a.replicas[2].image = other;
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  EXPECT_THAT(engine_->Pulls(), ElementsAre(other));
}

TEST_F(ContainerExecutorLogicTest, FailedPullLeavesNothingAndSaysWhy) {
  AttemptSpec a = Attempt(2);
  a.replicas[1].image = "127.0.0.1:5000/missing:1";
  executor::ExecutorEvent e = LaunchAndWait(a);
  EXPECT_EQ(e.kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(e.message, HasSubstr("image pull failed for 127.0.0.1:5000/missing:1"));
  EXPECT_THAT(e.message, HasSubstr("manifest unknown"));
  EXPECT_THAT(engine_->ContainerNames(), IsEmpty());
  EXPECT_THAT(engine_->NetworkNames(), IsEmpty());
}

// Issue 33: a Vertex PyTorch name on a server that has not built the runtime failed
// with the engine's words (a pull from https://localhost/v2/); it says how to build it.
TEST_F(ContainerExecutorLogicTest, AnUnbuiltRuntimeSaysHowToBuildIt) {
  AttemptSpec a = Attempt(1);
  a.replicas[0].image = "localhost/trainyard/torch-cpu:latest";
  executor::ExecutorEvent e = LaunchAndWait(a);
  EXPECT_EQ(e.kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(e.message, HasSubstr("is not built on this server"));
  EXPECT_THAT(e.message, HasSubstr("`trainyard images build pytorch`"));
  EXPECT_THAT(engine_->Pulls(), IsEmpty()) << "nothing to pull it from";
}

// Asked at submit (executor.h): the engine says whether it holds the runtime; an
// engine that does not answer refuses nothing (the launch says what is wrong).
TEST_F(ContainerExecutorLogicTest, HoldsRuntimeAsksTheEngine) {
  const std::string torch = "localhost/trainyard/torch-cpu:latest";
  EXPECT_FALSE(ex_->HoldsRuntime(torch));
  engine_->AddImage(torch);
  EXPECT_TRUE(ex_->HoldsRuntime(torch));
  engine_->FailNext("ImageExists", Unavailable("engine down"));
  EXPECT_TRUE(ex_->HoldsRuntime("localhost/trainyard/sklearn-cpu:latest"));
}

// gcr.io and pkg.dev names come from the local registry (by its address, host
// dropped), are tagged by the name the job gave, and are never looked up elsewhere.
TEST_F(ContainerExecutorLogicTest, AGoogleRegistryNameIsPulledFromTheLocalRegistry) {
  auto ex = NewExecutor(
      "reg", [](ContainerExecutor::Options* o) { o->google_registry = "127.77.0.1:80"; });
  engine_->AddRegistryImage("127.77.0.1:80/p/repo/app:1");
  AttemptSpec a = Attempt(2);
  a.replicas[1].image = "us-central1-docker.pkg.dev/p/repo/app:1";
  ASSERT_EQ(LaunchAndWait(a, ex.get()).kind, ExecutorEventKind::kAttemptStarted);
  EXPECT_THAT(engine_->Pulls(), ElementsAre("127.77.0.1:80/p/repo/app:1"));
  EXPECT_TRUE(*engine_->ImageExists("us-central1-docker.pkg.dev/p/repo/app:1"));
  EXPECT_THAT(sink_.Messages(uid_), IsEmpty());  // Said through the service, not the replicas.
}

// A registry with tokens: the daemon pulls a job's image with that job's credential,
// which the token service turns into pulls of its project's images (api/registry_token.h).
TEST_F(ContainerExecutorLogicTest, ARegistryWithTokensIsAskedWithTheJobsCredential) {
  auto ex = NewExecutor("reg", [](ContainerExecutor::Options* o) {
    o->google_registry = "127.77.0.1:80";
    o->registry_credential = [](const std::string& uid) { return "credential-of-" + uid; };
  });
  engine_->AddRegistryImage("127.77.0.1:80/p/app:1");
  AttemptSpec a = Attempt(1);
  a.replicas[0].image = "gcr.io/p/app:1";
  ASSERT_EQ(LaunchAndWait(a, ex.get()).kind, ExecutorEventKind::kAttemptStarted);
  ASSERT_EQ(engine_->pull_logins().size(), 1u);
  EXPECT_EQ(engine_->pull_logins()[0].username, "trainyard-job");
  EXPECT_EQ(engine_->pull_logins()[0].password, "credential-of-" + a.job_uid);
}

TEST_F(ContainerExecutorLogicTest, AGoogleNameMissingFromTheRegistryFailsNamingIt) {
  auto ex = NewExecutor(
      "reg", [](ContainerExecutor::Options* o) { o->google_registry = "127.77.0.1:80"; });
  AttemptSpec a = Attempt(1);
  a.replicas[0].image = "gcr.io/p/missing:1";
  executor::ExecutorEvent e = LaunchAndWait(a, ex.get());
  EXPECT_EQ(e.kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(e.message, HasSubstr("image pull failed for gcr.io/p/missing:1: the registry at "
                                   "127.77.0.1:80 does not have it"));
  EXPECT_THAT(e.message, HasSubstr("docker push gcr.io/p/missing:1"));
  EXPECT_THAT(engine_->Pulls(), ElementsAre("127.77.0.1:80/p/missing:1"));  // Not gcr.io.
}

TEST_F(ContainerExecutorLogicTest, AGoogleNameWithoutARegistryFailsWithoutAPull) {
  AttemptSpec a = Attempt(1);
  a.replicas[0].image = "gcr.io/p/app:1";
  executor::ExecutorEvent e = LaunchAndWait(a);
  EXPECT_EQ(e.kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(e.message, HasSubstr("image pull failed for gcr.io/p/app:1: no registry serves "
                                   "gcr.io names here"));
  EXPECT_THAT(engine_->Pulls(), IsEmpty());
}

// Gang start: no replica runs unless every one could be created.
TEST_F(ContainerExecutorLogicTest, FailedCreateStartsNoReplicaAndLeavesNothing) {
  AttemptSpec a = Attempt(3);
  engine_->FailNext("CreateContainer", Internal("no space left on device"), Name(a, 2));
  executor::ExecutorEvent e = LaunchAndWait(a);
  EXPECT_EQ(e.kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(e.message, HasSubstr("create replica " + Name(a, 2)));
  EXPECT_THAT(e.message, HasSubstr("no space left on device"));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(engine_->Starts(Name(a, i)), 0) << i;
  EXPECT_THAT(engine_->ContainerNames(), IsEmpty());
  EXPECT_THAT(engine_->NetworkNames(), IsEmpty());
}

TEST_F(ContainerExecutorLogicTest, FailedStartRemovesTheReplicasThatDidStart) {
  AttemptSpec a = Attempt(2);
  engine_->FailNext("StartContainer", Internal("OCI runtime error"), Name(a, 1));
  executor::ExecutorEvent e = LaunchAndWait(a);
  EXPECT_EQ(e.kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_THAT(e.message, HasSubstr("OCI runtime error"));
  EXPECT_THAT(engine_->ContainerNames(), IsEmpty());
  EXPECT_THAT(engine_->NetworkNames(), IsEmpty());
  // A failed launch reports no replica exits (nothing the service must account for).
  EXPECT_THAT(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1, 300), IsEmpty());
}

// When the launch's own removal fails too, the service's Cleanup finds the rest by label.
TEST_F(ContainerExecutorLogicTest, CleanupRemovesWhatAFailedLaunchCouldNot) {
  AttemptSpec a = Attempt(2);
  engine_->FailNext("StartContainer", Internal("OCI runtime error"), Name(a, 1));
  engine_->FailNext("RemoveContainer", Unavailable("engine busy"), Name(a, 0));
  engine_->FailNext("RemoveNetwork", Unavailable("engine busy"));
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kLaunchFailed);
  EXPECT_FALSE(engine_->ContainerNames().empty());
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  EXPECT_THAT(engine_->ContainerNames(), IsEmpty());
  EXPECT_THAT(engine_->NetworkNames(), IsEmpty());
}

TEST_F(ContainerExecutorLogicTest, StopGivesTheGraceAndReportsHowEachEnded) {
  AttemptSpec a = Attempt(2);
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  engine_->IgnoreTerm(Name(a, 1));
  ASSERT_TRUE(ex_->Stop(uid_, 1, 6500 * 1000).ok());
  EXPECT_EQ(engine_->StopGrace(Name(a, 0)), 7);  // Rounded up to whole seconds.
  EXPECT_EQ(engine_->StopGrace(Name(a, 1)), 7);
  WaitExit(2);
  std::map<int, std::optional<int>> signals;
  for (const auto& e : events_.Events(uid_)) {
    if (e.kind == ExecutorEventKind::kReplicaExited) signals[e.pool] = e.signal;
  }
  EXPECT_EQ(signals[0], 15);
  EXPECT_EQ(signals[1], 9);
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());  // Idempotent.
  EXPECT_THAT(engine_->ContainerNames(), IsEmpty());
  EXPECT_THAT(engine_->NetworkNames(), IsEmpty());
}

TEST_F(ContainerExecutorLogicTest, StopReportsAnEngineFailureNamingTheReplica) {
  AttemptSpec a = Attempt(1);
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  engine_->FailNext("StopContainer", Internal("cannot kill"), "");
  Status s = ex_->Stop(uid_, 1, 1000000);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr(Name(a, 0)));
  EXPECT_TRUE(ex_->Stop(uid_, 1, 1000000).ok());  // The service retries.
}

// A restarted daemon finds its replicas by label: the running one is watched
// again (its exit and later lines arrive, earlier lines are not appended twice),
// the one that ended meanwhile is reported with its code, another daemon's
// containers are not its business.
TEST_F(ContainerExecutorLogicTest, RecoverReattachesToRunningAndReportsEnded) {
  AttemptSpec a = Attempt(2);
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  engine_->Print(Name(a, 0), "before restart");
  ASSERT_TRUE(sink_.WaitForMessage(uid_, "before restart", 5000));
  ex_.reset();  // The daemon dies; the engine keeps running the replicas.

  engine_->Exit(Name(a, 1), 3);
  std::string foreign = uid_ + "-other";
  std::unique_ptr<ContainerExecutor> other = NewExecutor("/var/lib/trainyard-b");
  {
    std::swap(uid_, foreign);
    ASSERT_EQ(LaunchAndWait(Attempt(1), other.get()).kind, ExecutorEventKind::kAttemptStarted);
    std::swap(uid_, foreign);
  }

  ex_ = NewExecutor(kInstance);
  auto observed = ex_->Recover();
  ASSERT_TRUE(observed.ok()) << observed.status().ToString();
  ASSERT_EQ(observed->size(), 2u);
  for (const executor::ObservedReplica& r : *observed) {
    EXPECT_EQ(r.job_uid, uid_);
    if (r.pool == 0) {
      EXPECT_TRUE(r.running);
    } else {
      EXPECT_FALSE(r.running);
      EXPECT_EQ(r.exit_code, 3);
    }
  }
  engine_->Print(Name(a, 0), "after restart");
  engine_->Exit(Name(a, 0), 0);
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1, 10000);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].pool, 0);
  EXPECT_THAT(sink_.Messages(uid_, a.replicas[0].task_name),
              ElementsAre("before restart", "after restart"));
  EXPECT_TRUE(engine_->IsRunning(executor::ReplicaName(foreign, 1, 0, 0)));
}

// One replica the engine cannot tell about during recovery (podman answered a busy
// engine's error for an exited container in CI) must not fail the daemon's start:
// it is watched as if running, and its exit and last lines come when the engine tells.
TEST_F(ContainerExecutorLogicTest, RecoverWatchesAReplicaTheEngineCannotTellAboutYet) {
  AttemptSpec a = Attempt(2);
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  ex_.reset();
  engine_->Print(Name(a, 0), "late line");
  engine_->Exit(Name(a, 0), 7);
  engine_->Print(Name(a, 1), "tail");
  engine_->Exit(Name(a, 1), 0);
  engine_->FailNext("InspectContainer", Internal("container state improper"), Name(a, 0));
  engine_->FailNext("StreamLogs", Internal("broken pipe"), Name(a, 1));

  ex_ = NewExecutor(kInstance);
  auto observed = ex_->Recover();
  ASSERT_TRUE(observed.ok()) << observed.status().ToString();
  ASSERT_EQ(observed->size(), 2u);
  for (const executor::ObservedReplica& r : *observed) EXPECT_TRUE(r.running) << r.pool;
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2, 10000);
  ASSERT_EQ(exits.size(), 2u);
  std::map<int, int> codes;
  for (const auto& e : exits) codes[e.pool] = e.exit_code;
  EXPECT_EQ(codes[0], 7);
  EXPECT_EQ(codes[1], 0);
  EXPECT_THAT(sink_.Messages(uid_, a.replicas[0].task_name), ElementsAre("late line"));
  EXPECT_THAT(sink_.Messages(uid_, a.replicas[1].task_name), ElementsAre("tail"));
}

TEST_F(ContainerExecutorLogicTest, RestartReplicaStartsTheSameContainerAgain) {
  AttemptSpec a = Attempt(2);
  ASSERT_EQ(LaunchAndWait(a).kind, ExecutorEventKind::kAttemptStarted);
  EXPECT_EQ(ex_->RestartReplica(uid_, 1, 1, 0).code(), StatusCode::kFailedPrecondition);
  engine_->Print(Name(a, 1), "first run");
  engine_->Exit(Name(a, 1), 137);
  ASSERT_EQ(WaitExit(1).pool, 1);
  ASSERT_TRUE(ex_->RestartReplica(uid_, 1, 1, 0).ok());
  EXPECT_EQ(engine_->Starts(Name(a, 1)), 2);
  engine_->Print(Name(a, 1), "second run");
  engine_->Exit(Name(a, 1), 0);
  EXPECT_EQ(WaitExit(2).exit_code, 0);
  EXPECT_THAT(sink_.Messages(uid_, a.replicas[1].task_name),
              ElementsAre("first run", "second run"));
  EXPECT_EQ(ex_->RestartReplica(uid_, 1, 1, 7).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ty::testing
