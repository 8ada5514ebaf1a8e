// ProcessExecutor behaviour beyond the shared contract.
#include "executor/process_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "executor/executor_contract.h"

namespace ty::testing {
namespace {

using executor::AttemptSpec;
using executor::ExecutorEventKind;
using executor::ReplicaLaunch;
using ::testing::Contains;
using ::testing::Not;

class ProcessExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uid_ = UniqueJobUid();
    ex_ = Make();
  }
  void TearDown() override {
    if (ex_ != nullptr) {
      ex_->Stop(uid_, 1, 0).IgnoreError();
      ex_->Cleanup(uid_, 1).IgnoreError();
    }
    ex_.reset();
    backend_.ForceClean(uid_);
  }
  std::unique_ptr<executor::ProcessExecutor> Make() {
    executor::ProcessExecutor::Options o;
    o.clock = SystemClock::Get();
    o.state_dir = backend_.state_dir();
    o.log_sink = &sink_;
    auto ex = executor::ProcessExecutor::Create(o);
    EXPECT_TRUE(ex.ok());
    (*ex)->SetEventCallback(events_.Callback());
    return std::move(*ex);
  }
  AttemptSpec Attempt(const std::string& script) {
    ReplicaLaunch r;
    r.name = executor::ReplicaName(uid_, 1, 0, 0);
    r.task_name = "workerpool0-0";
    r.command = {"/bin/sh", "-c", script};
    AttemptSpec a;
    a.job_uid = uid_;
    a.attempt = 1;
    a.replicas = {r};
    return a;
  }

  // The wrapper is this test's child: reaping it is also how a test knows it ended
  // while no executor watched.
  bool ReapTheWrapper() {
    auto pids = backend_.PidsOf(uid_);
    if (pids.size() != 1u) return false;
    for (int i = 0; i < 300; ++i) {
      if (waitpid(pids[0], nullptr, WNOHANG) == pids[0]) return true;
      usleep(50000);
    }
    return false;
  }

  ProcessBackend backend_;
  std::string uid_;
  RecordingLogSink sink_;
  EventRecorder events_{&sink_};
  std::unique_ptr<executor::ProcessExecutor> ex_;
};

TEST_F(ProcessExecutorTest, RequiresACommand) {
  AttemptSpec a = Attempt("true");
  a.replicas[0].command.clear();
  a.replicas[0].args = {"--flag"};
  Status s = ex_->Launch(a);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("command"));
}

TEST_F(ProcessExecutorTest, RunsInItsWorkDirWithOnlyTheGivenEnvAndPath) {
  setenv("TY_DAEMON_SECRET", "leak", 1);
  AttemptSpec a = Attempt("pwd; env; echo no-newline-at-end >&2; printf tail");
  a.replicas[0].env = {{"TY_GIVEN", "1"}};
  ASSERT_TRUE(ex_->Launch(a).ok());
  ASSERT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);
  unsetenv("TY_DAEMON_SECRET");
  auto lines = sink_.Messages(uid_);
  EXPECT_EQ(lines.at(0), backend_.state_dir() + "/" + a.replicas[0].name);
  EXPECT_THAT(lines, Contains("TY_GIVEN=1"));
  EXPECT_THAT(lines, Contains(::testing::StartsWith("PATH=")));
  EXPECT_THAT(lines, Not(Contains("TY_DAEMON_SECRET=leak")));
  EXPECT_THAT(lines, Contains("tail"));  // A last line without "\n" is kept.
}

// A process sees every GPU of the host, so CUDA_VISIBLE_DEVICES is the only thing
// that keeps a replica to its grant: the granted indices, or none at all, whatever
// the job's own env says.
TEST_F(ProcessExecutorTest, SeesOnlyTheGpusItWasGranted) {
  AttemptSpec a = Attempt("echo \"cuda=[$CUDA_VISIBLE_DEVICES] nvidia=[$NVIDIA_VISIBLE_DEVICES]\"");
  a.replicas[0].env = {{"CUDA_VISIBLE_DEVICES", "0"}, {"NVIDIA_VISIBLE_DEVICES", "all"}};
  a.replicas[0].accelerator_type = "NVIDIA_TESLA_T4";
  a.replicas[0].accelerator_count = 2;
  a.replicas[0].gpu_indices = {1, 3};
  ASSERT_TRUE(ex_->Launch(a).ok());
  ASSERT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);
  EXPECT_THAT(sink_.Messages(uid_), Contains("cuda=[1,3] nvidia=[1,3]"));
  ex_->Cleanup(uid_, 1).IgnoreError();

  uid_ = UniqueJobUid();
  AttemptSpec cpu = Attempt(
      "echo \"cuda=[${CUDA_VISIBLE_DEVICES-unset}] nvidia=[${NVIDIA_VISIBLE_DEVICES-unset}]\"");
  cpu.replicas[0].env = {{"CUDA_VISIBLE_DEVICES", "0"}};
  ASSERT_TRUE(ex_->Launch(cpu).ok());
  ASSERT_EQ(events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1).size(), 1u);
  EXPECT_THAT(sink_.Messages(uid_), Contains("cuda=[] nvidia=[unset]"));
}

TEST_F(ProcessExecutorTest, RecoverReportsAReplicaKilledWithItsWrapper) {
  ASSERT_TRUE(ex_->Launch(Attempt("sleep 1000")).ok());
  auto launched = events_.WaitForLaunch(uid_);
  ASSERT_TRUE(launched.has_value());
  ASSERT_EQ(launched->kind, ExecutorEventKind::kAttemptStarted);
  backend_.Observe(uid_);
  ex_.reset();  // Daemon gone; then the whole group dies by SIGKILL (e.g. OOM killer).
  auto pids = backend_.PidsOf(uid_);
  ASSERT_EQ(pids.size(), 1u);
  kill(-pids[0], SIGKILL);
  for (int i = 0; i < 100 && kill(pids[0], 0) == 0; ++i) {
    waitpid(pids[0], nullptr, WNOHANG);
    usleep(20000);
  }
  ex_ = Make();
  auto recovered = ex_->Recover();
  ASSERT_TRUE(recovered.ok());
  ASSERT_EQ(recovered->size(), 1u);
  EXPECT_FALSE((*recovered)[0].running);
  EXPECT_EQ((*recovered)[0].exit_code, 137);
  EXPECT_EQ((*recovered)[0].signal, 9);
}

TEST_F(ProcessExecutorTest, RecoverResumesAHalfAppendedBatchExactly) {
  // Lines 1-3 are captured; then the daemon "crashes" after writing the cursor of
  // a batch but before appending all of it. Recover must append exactly the rest.
  ASSERT_TRUE(ex_->Launch(Attempt("echo 1; echo 2; echo 3; sleep 3; echo 4")).ok());
  ASSERT_TRUE(sink_.WaitForMessage(uid_, "3", 10000));
  ex_.reset();
  auto entries = sink_.Entries(uid_);
  ASSERT_EQ(entries.size(), 3u);
  RecordingLogSink partial;  // Holds only the first two lines, like a crash mid-batch.
  ASSERT_TRUE(partial.Append(uid_, entries[0]).ok());
  ASSERT_TRUE(partial.Append(uid_, entries[1]).ok());
  executor::ProcessExecutor::Options o;
  o.clock = SystemClock::Get();
  o.state_dir = backend_.state_dir();
  o.log_sink = &partial;
  auto ex = executor::ProcessExecutor::Create(o);
  ASSERT_TRUE(ex.ok());
  EventRecorder events(&partial);
  (*ex)->SetEventCallback(events.Callback());
  ASSERT_TRUE((*ex)->Recover().ok());
  ASSERT_EQ(events.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1, 15000).size(), 1u);
  EXPECT_THAT(partial.Messages(uid_), ::testing::ElementsAre("1", "2", "3", "4"));
  ASSERT_TRUE((*ex)->Cleanup(uid_, 1).ok());
}

TEST_F(ProcessExecutorTest, RecoverCapturesLinesWrittenWhileNoDaemonWatched) {
  ASSERT_TRUE(ex_->Launch(Attempt("echo one; sleep 2; echo two; exit 4")).ok());
  // Let the watcher take "one" first, so Recover() must also drop what it already has.
  ASSERT_TRUE(sink_.WaitForMessage(uid_, "one", 10000));
  ex_.reset();  // The daemon goes away: the watcher stops, the replica runs on.
  ASSERT_THAT(sink_.Messages(uid_), Not(Contains("two")))
      << "the replica outran the test: the gap was not exercised";

  ASSERT_TRUE(ReapTheWrapper());

  ex_ = Make();
  auto recovered = ex_->Recover();
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  // Checked right away: the lines must be in the sink when Recover() returns.
  EXPECT_THAT(sink_.Messages(uid_), ::testing::ElementsAre("one", "two"));
  ASSERT_EQ(recovered->size(), 1u);
  EXPECT_FALSE((*recovered)[0].running);
  EXPECT_EQ((*recovered)[0].exit_code, 4);
  // A second Recover() (or one by yet another daemon) adds nothing.
  ASSERT_TRUE(ex_->Recover().ok());
  EXPECT_THAT(sink_.Messages(uid_), ::testing::ElementsAre("one", "two"));
}

// Issue 31, as the contract's AnEndWaitsForItsLastLinesOnAFullDisk, at recovery: a
// replica that ended while no daemon watched, found while the log sink cannot take its
// last lines (a full disk), is reported running and ends once they are in; before, it
// was reported ended and the refused lines were gone.
TEST_F(ProcessExecutorTest, RecoverOnAFullDiskReportsTheEndAfterTheLastLines) {
  ASSERT_TRUE(ex_->Launch(Attempt("sleep 1; echo one; echo two; exit 4")).ok());
  ASSERT_TRUE(events_.WaitForLaunch(uid_).has_value());
  ex_.reset();  // The daemon goes away before the replica writes.
  ASSERT_TRUE(ReapTheWrapper());

  sink_.full = true;
  ex_ = Make();
  auto recovered = ex_->Recover();
  ASSERT_TRUE(recovered.ok()) << recovered.status().ToString();
  ASSERT_EQ(recovered->size(), 1u);
  EXPECT_TRUE((*recovered)[0].running) << "its end would have come without its lines";
  sink_.full = false;
  auto exits = events_.WaitFor(uid_, ExecutorEventKind::kReplicaExited, 1, 10000);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].exit_code, 4);
  EXPECT_THAT(sink_.Messages(uid_), ::testing::ElementsAre("one", "two"));
}

}  // namespace
}  // namespace ty::testing
