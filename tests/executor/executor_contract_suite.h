// The executor contract (executor.h) as parameterised tests: each binary that
// includes this instantiates them for its backends (executor_contract_test.cc: the
// local ones; tests/slurm: Slurm on a real cluster).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "executor/executor_contract.h"

namespace ty::testing {
namespace {

using executor::AttemptSpec;
using executor::ExecutorEvent;
using executor::ExecutorEventKind;
using executor::ReplicaLaunch;
using ::testing::Contains;
using ::testing::ElementsAre;

class ExecutorContractTest : public ::testing::TestWithParam<BackendFactory> {
 protected:
  void SetUp() override {
    backend_ = GetParam()();
    if (backend_->NeedsEngine()) TY_REQUIRE_ENGINE_OR_SKIP();
    uid_ = UniqueJobUid();
    ex_ = MakeExecutor();
    ASSERT_NE(ex_, nullptr);
  }

  void TearDown() override {
    if (ex_ != nullptr) {
      ex_->Stop(uid_, 1, 0).IgnoreError();
      ex_->Cleanup(uid_, 1).IgnoreError();
    }
    ex_.reset();
    if (backend_ != nullptr && !uid_.empty()) backend_->ForceClean(uid_);
  }

  std::unique_ptr<executor::Executor> MakeExecutor() {
    auto ex = backend_->MakeExecutor(&sink_);
    EXPECT_TRUE(ex.ok()) << ex.status().ToString();
    if (!ex.ok()) return nullptr;
    (*ex)->SetEventCallback(events_.Callback());
    return std::move(*ex);
  }

  ReplicaLaunch Replica(int pool, int index, const std::string& script) {
    ReplicaLaunch r = TestReplica(uid_, pool, index);
    backend_->SetScript(&r, script);
    return r;
  }

  AttemptSpec Attempt(std::vector<ReplicaLaunch> replicas) {
    return TestAttempt(uid_, std::move(replicas));
  }

  // Launches and waits for kAttemptStarted.
  void LaunchAndWaitStarted(const AttemptSpec& a) {
    ASSERT_TRUE(ex_->Launch(a).ok());
    auto launched = events_.WaitForLaunch(uid_);
    ASSERT_TRUE(launched.has_value()) << "no launch event";
    ASSERT_EQ(launched->kind, ExecutorEventKind::kAttemptStarted) << launched->message;
    backend_->Observe(uid_);
  }

  std::unique_ptr<Backend> backend_;
  std::string uid_;
  RecordingLogSink sink_;
  EventRecorder events_{&sink_};
  std::unique_ptr<executor::Executor> ex_;
};

TEST_P(ExecutorContractTest, RejectsMalformedAttempts) {
  AttemptSpec empty = Attempt({});
  EXPECT_EQ(ex_->Launch(empty).code(), StatusCode::kInvalidArgument);
  AttemptSpec dup = Attempt({Replica(0, 0, "true"), Replica(0, 0, "true")});
  EXPECT_EQ(ex_->Launch(dup).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(events_.Events(uid_).empty());
}

TEST_P(ExecutorContractTest, ReportsExitCodeAfterCompleteLogs) {
  // Two pipes carry no relative order (the engine reads stdout and stderr
  // separately), so the script paces its writes to make the expected order real.
  LaunchAndWaitStarted(
      Attempt({Replica(0, 0, "echo a; sleep 0.3; echo b >&2; sleep 0.3; echo c; exit 3")}));
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 3);
  EXPECT_FALSE(exits[0].signal.has_value());
  EXPECT_EQ(exits[0].pool, 0);
  EXPECT_EQ(exits[0].index, 0);

  auto all = events_.Events(uid_);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].kind, ExecutorEventKind::kAttemptStarted);
  EXPECT_GT(all[0].image_ready_time, 0);
  // Issue 31 item 6: the backend's own time of the end (the job's endTime), not when
  // the executor got to it: after the start, not after the report.
  EXPECT_GT(exits[0].finished_at, all[0].time - 1'000'000);
  EXPECT_LE(exits[0].finished_at, exits[0].time + 1'000);
  // Recorded before the exit event was sent.
  EXPECT_THAT(events_.SnapshotAt(uid_, 1), ElementsAre("a", "b", "c"));

  auto entries = sink_.Entries(uid_);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].stream, logs::LogStream::kStdout);
  EXPECT_EQ(entries[1].stream, logs::LogStream::kStderr);
  EXPECT_EQ(entries[2].stream, logs::LogStream::kStdout);
  for (const auto& e : entries) {
    EXPECT_EQ(e.task, "workerpool0-0");
    EXPECT_TRUE(e.severity.empty());
    EXPECT_GT(e.time, 0);
  }
  EXPECT_LT(entries[0].time, entries[1].time);
  EXPECT_LT(entries[1].time, entries[2].time);
}

// Issue 31: a replica that ends while the log sink cannot take its last lines (a full
// data disk) is reported ended only once they are taken, each once. Before, the
// process and Slurm executors reported the end at once and the refused lines were gone.
TEST_P(ExecutorContractTest, AnEndWaitsForItsLastLinesOnAFullDisk) {
  LaunchAndWaitStarted(Attempt({Replica(0, 0, "echo ready; sleep 1; echo one; echo two; exit 3")}));
  ASSERT_TRUE(sink_.WaitForMessage(uid_, "ready", 20000));
  sink_.full = true;
  EXPECT_TRUE(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1, 4000).empty())
      << "reported ended with its last lines refused";
  sink_.full = false;
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1, 20000);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 3);
  EXPECT_THAT(sink_.Messages(uid_), ElementsAre("ready", "one", "two"));
  const size_t last = events_.Events(uid_).size() - 1;
  EXPECT_THAT(events_.SnapshotAt(uid_, last), ElementsAre("ready", "one", "two"))
      << "every line before the end";
}

TEST_P(ExecutorContractTest, GangOfThreeStartsAndExits) {
  LaunchAndWaitStarted(
      Attempt({Replica(0, 0, "echo zero"), Replica(1, 0, "echo one"), Replica(1, 1, "echo two")}));
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 3);
  ASSERT_EQ(exits.size(), 3u);
  std::set<std::pair<int, int>> seen;
  for (const auto& e : exits) {
    EXPECT_EQ(e.exit_code, 0);
    seen.insert({e.pool, e.index});
  }
  EXPECT_EQ(seen, (std::set<std::pair<int, int>>{{0, 0}, {1, 0}, {1, 1}}));
  EXPECT_THAT(sink_.Messages(uid_, "workerpool1-1"), ElementsAre("two"));
}

TEST_P(ExecutorContractTest, StopEndsASleepingReplica) {
  LaunchAndWaitStarted(Attempt({Replica(0, 0, "exec sleep 1000")}));
  int64_t start = MonotonicMicros();
  ASSERT_TRUE(ex_->Stop(uid_, 1, 1000000).ok());
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1, 15000);
  double seconds = (MonotonicMicros() - start) / 1e6;
  ASSERT_EQ(exits.size(), 1u);
  ASSERT_TRUE(exits[0].signal.has_value()) << "exit code " << exits[0].exit_code << ": "
                                           << ::testing::PrintToString(sink_.Messages(uid_));
  EXPECT_TRUE(*exits[0].signal == 15 || *exits[0].signal == 9) << *exits[0].signal;
  EXPECT_LT(seconds, 8.0);
  // Stopping again is fine.
  EXPECT_TRUE(ex_->Stop(uid_, 1, 1000000).ok());
}

TEST_P(ExecutorContractTest, StopSendsTermBeforeKill) {
  LaunchAndWaitStarted(Attempt({Replica(
      0, 0, "trap 'echo got term; exit 0' TERM; echo ready; while true; do sleep 0.1; done")}));
  ASSERT_TRUE(sink_.WaitForMessage(uid_, "ready", 10000));
  ASSERT_TRUE(ex_->Stop(uid_, 1, 10000000).ok());
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1, 15000);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 0);
  EXPECT_FALSE(exits[0].signal.has_value());
  EXPECT_THAT(sink_.Messages(uid_), Contains("got term"));
}

TEST_P(ExecutorContractTest, CleanupLeavesNothingAndIsIdempotent) {
  AttemptSpec a = Attempt({Replica(0, 0, "echo x"), Replica(1, 0, "exec sleep 1000")});
  a.peers_talk = true;
  LaunchAndWaitStarted(a);
  events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_TRUE(backend_->Leftovers(uid_));
  ASSERT_TRUE(ex_->Stop(uid_, 1, 1000000).ok());
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2);
  ASSERT_EQ(exits.size(), 2u);
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  EXPECT_FALSE(backend_->Leftovers(uid_));
  EXPECT_TRUE(ex_->Cleanup(uid_, 1).ok());
  auto recovered = ex_->Recover();
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  for (const auto& o : *recovered) EXPECT_NE(o.job_uid, uid_);
}

TEST_P(ExecutorContractTest, RecoverReattachesAfterRestart) {
  // The primary outlives the executor's restart by seconds even on a loaded engine
  // (CI: podman creates can take seconds each when two suites share it).
  LaunchAndWaitStarted(Attempt({Replica(0, 0, "echo one; echo two; sleep 10; echo three; exit 4"),
                                Replica(1, 0, "echo bye; exit 5")}));
  ASSERT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);
  ASSERT_TRUE(sink_.WaitForMessage(uid_, "two", 10000));

  ex_.reset();  // The daemon goes away; the replicas do not.
  ex_ = MakeExecutor();
  ASSERT_NE(ex_, nullptr);
  auto recovered = ex_->Recover();
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  std::map<int, executor::ObservedReplica> mine;
  for (const auto& o : *recovered) {
    if (o.job_uid == uid_) mine[o.pool] = o;
  }
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_TRUE(mine[0].running);
  EXPECT_EQ(mine[0].attempt, 1);
  EXPECT_EQ(mine[0].name, executor::ReplicaName(uid_, 1, 0, 0));
  EXPECT_FALSE(mine[1].running);
  EXPECT_EQ(mine[1].exit_code, 5);
  EXPECT_GT(mine[1].finished_at, 0) << "an exit found at recovery keeps its own time";

  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2, 40000);
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_EQ(exits[1].pool, 0);
  EXPECT_EQ(exits[1].exit_code, 4);
  EXPECT_THAT(sink_.Messages(uid_, "workerpool0-0"), ElementsAre("one", "two", "three"));
  EXPECT_THAT(sink_.Messages(uid_, "workerpool1-0"), ElementsAre("bye"));
  // Recover() twice does not attach a second watcher.
  EXPECT_TRUE(ex_->Recover().ok());
}

TEST_P(ExecutorContractTest, EnvironmentArrivesExactly) {
  ReplicaLaunch r = Replica(0, 0, "env");
  r.env = {{"TY_PLAIN", "value"},  {"TY_SPACES", "a b  c"},
           {"TY_EQUALS", "x=y=z"}, {"TY_QUOTES", "it's \"quoted\" $HOME"},
           {"TY_EMPTY", ""},       {"CLOUD_ML_JOB_ID", uid_}};
  LaunchAndWaitStarted(Attempt({r}));
  ASSERT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);
  auto lines = sink_.Messages(uid_);
  EXPECT_THAT(lines, Contains("TY_PLAIN=value"));
  EXPECT_THAT(lines, Contains("TY_SPACES=a b  c"));
  EXPECT_THAT(lines, Contains("TY_EQUALS=x=y=z"));
  EXPECT_THAT(lines, Contains("TY_QUOTES=it's \"quoted\" $HOME"));
  EXPECT_THAT(lines, Contains("TY_EMPTY="));
  EXPECT_THAT(lines, Contains("CLOUD_ML_JOB_ID=" + uid_));
}

// Issue 32 item 5: the spec says where a trial's report must land on the daemon's host
// (metrics_host_dir); how the replica writes there is each executor's own (a mount, or
// the host path itself). The replica writes where CLOUD_ML_HP_METRIC_FILE says, as
// cloudml-hypertune does.
TEST_P(ExecutorContractTest, ATrialsReportLandsInItsHostMetricsDirectory) {
  char tmpl[] = "/tmp/ty-metrics-XXXXXX";  // /tmp: every Slurm host sees it.
  const std::string dir = mkdtemp(tmpl);
  ReplicaLaunch r =
      Replica(0, 0, "echo '{\"accuracy\": \"0.5\"}' > \"$CLOUD_ML_HP_METRIC_FILE\" && echo wrote");
  r.metrics_host_dir = dir;
  LaunchAndWaitStarted(Attempt({r}));
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 0) << ::testing::PrintToString(sink_.Messages(uid_));
  std::ifstream in(dir + "/output.metrics");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"accuracy\": \"0.5\"}\n");
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// The replica keeps state only in its working directory (writable in both
// backends: the container's layer survives a restart, the process's directory
// is <state_dir>/<name>/), so the second run behaves differently.
TEST_P(ExecutorContractTest, RestartRunsTheExitedReplicaAgainInPlace) {
  ReplicaLaunch r = Replica(0, 0,
                            "if [ -f ran ]; then echo second; echo \"$TY_VALUE\"; exit 4; fi; "
                            "touch ran; echo first; exit 3");
  r.env = {{"TY_VALUE", "same env"}};
  LaunchAndWaitStarted(Attempt({r}));
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 3);
  // Right away, so both runs usually write in the same second: the numbering of
  // the log must still tell them apart.
  Status restarted = ex_->RestartReplica(uid_, 1, 0, 0);
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2);
  ASSERT_EQ(exits.size(), 2u);
  EXPECT_EQ(exits[1].exit_code, 4);
  EXPECT_FALSE(exits[1].signal.has_value());
  EXPECT_EQ(exits[1].pool, 0);
  EXPECT_EQ(exits[1].index, 0);
  // Complete when the second end was reported, and nothing of the first run twice.
  EXPECT_THAT(events_.SnapshotAt(uid_, 2), ElementsAre("first", "second", "same env"));
  auto entries = sink_.Entries(uid_, "workerpool0-0");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_LT(entries[0].time, entries[1].time);
  EXPECT_LT(entries[1].time, entries[2].time);
  // A later look (a daemon restart) adds nothing either.
  ASSERT_TRUE(ex_->Recover().ok());
  EXPECT_THAT(sink_.Messages(uid_), ElementsAre("first", "second", "same env"));
  // Failed again: it may be restarted again. (After a success an executor may have
  // released the replica: executor.h.)
  ASSERT_TRUE(ex_->RestartReplica(uid_, 1, 0, 0).ok());
  exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 3);
  ASSERT_EQ(exits.size(), 3u);
  EXPECT_THAT(sink_.Messages(uid_),
              ElementsAre("first", "second", "same env", "second", "same env"));
}

TEST_P(ExecutorContractTest, RestartOfARunningReplicaFails) {
  LaunchAndWaitStarted(Attempt({Replica(0, 0, "exec sleep 1000")}));
  EXPECT_EQ(ex_->RestartReplica(uid_, 1, 0, 0).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(ex_->Stop(uid_, 1, 1000000).ok());
  EXPECT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);
}

TEST_P(ExecutorContractTest, RestartOfAnUnknownReplicaIsNotFound) {
  EXPECT_EQ(ex_->RestartReplica(uid_, 1, 0, 0).code(), StatusCode::kNotFound);
  LaunchAndWaitStarted(Attempt({Replica(0, 0, "true")}));
  ASSERT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);
  EXPECT_EQ(ex_->RestartReplica(uid_, 1, 0, 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(ex_->RestartReplica(uid_, 1, 1, 0).code(), StatusCode::kNotFound);
  EXPECT_EQ(ex_->RestartReplica(uid_, 2, 0, 0).code(), StatusCode::kNotFound);
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  EXPECT_EQ(ex_->RestartReplica(uid_, 1, 0, 0).code(), StatusCode::kNotFound);
  EXPECT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2, 500).size(), 1u);
}

TEST_P(ExecutorContractTest, StopAndCleanupEndARestartedReplica) {
  AttemptSpec a = Attempt(
      {Replica(0, 0, "if [ -f ran ]; then echo again; exec sleep 1000; fi; touch ran; exit 1")});
  a.peers_talk = true;
  LaunchAndWaitStarted(a);
  ASSERT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);
  ASSERT_TRUE(ex_->RestartReplica(uid_, 1, 0, 0).ok());
  backend_->Observe(uid_);  // The restarted process is a new one.
  ASSERT_TRUE(sink_.WaitForMessage(uid_, "again", 10000));
  ASSERT_TRUE(ex_->Stop(uid_, 1, 1000000).ok());
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 2, 15000);
  ASSERT_EQ(exits.size(), 2u);
  ASSERT_TRUE(exits[1].signal.has_value()) << "exit code " << exits[1].exit_code;
  ASSERT_TRUE(ex_->Cleanup(uid_, 1).ok());
  EXPECT_FALSE(backend_->Leftovers(uid_));
}

}  // namespace
}  // namespace ty::testing
