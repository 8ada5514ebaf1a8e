// Table tests of the pure job state machine: every state (with and without a
// pending ending) against every input, then the rules that decide outcomes.
#include "machines/job_machine.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "wire/dialect.h"

namespace ty::machines {
namespace {

using model::EndingKind;
using model::Job;
using model::JobEvent;
using model::JobState;
using model::JobStateName;
using model::ReplicaState;

constexpr TimeMicros kNow = 1'000'000'000;

Job TwoReplicaJob() {
  auto parsed =
      wire::ParseVertexCustomJob(nlohmann::json::parse(R"({"displayName": "t", "jobSpec": {
    "workerPoolSpecs": [
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri": "img", "command": ["train"]}},
      {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
       "containerSpec": {"imageUri": "img", "command": ["train"]}}],
    "scheduling": {"timeout": "100s", "maxWaitDuration": "50s"}}})"));
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  Job job;
  job.uid = "1";
  job.project = "p";
  job.location = "l";
  job.spec = parsed->spec;
  job.create_time = kNow - 10;
  return job;
}

JobDecision Step(const Job& job, const JobInput& in, TimeMicros now = kNow) {
  return DecideJob(job, in, JobPolicy{}, now);
}

JobInput Input(JobInputKind kind, int attempt = 1, int pool = -1, int index = -1) {
  JobInput in;
  in.kind = kind;
  in.attempt = attempt;
  in.pool = pool;
  in.index = index;
  return in;
}

// A job driven into each state through the machine itself.
enum class Setup {
  kQueued,
  kPreparing,
  kRunning,
  kStopping,
  kCancelling,
  kCancellingLaunch,  // Cancelled while its launch was under way.
  kSucceeded,
  kFailed,
  kCancelled
};

Job JobIn(Setup setup) {
  Job job = Step(TwoReplicaJob(), Input(JobInputKind::kSubmitted)).job;
  if (setup == Setup::kQueued) return job;
  if (setup == Setup::kCancelled) return Step(job, Input(JobInputKind::kCancel)).job;
  job = Step(job, Input(JobInputKind::kAdmitted)).job;
  if (setup == Setup::kPreparing) return job;
  if (setup == Setup::kCancellingLaunch) return Step(job, Input(JobInputKind::kCancel)).job;
  job = Step(job, Input(JobInputKind::kAttemptStarted)).job;
  if (setup == Setup::kRunning) return job;
  if (setup == Setup::kCancelling) return Step(job, Input(JobInputKind::kCancel)).job;
  JobInput primary_ok = Input(JobInputKind::kReplicaExited, 1, 0, 0);
  job = Step(job, primary_ok).job;
  if (setup == Setup::kStopping) return job;  // Primary succeeded; worker being stopped.
  if (setup == Setup::kSucceeded)
    return Step(job, Input(JobInputKind::kReplicaExited, 1, 1, 0)).job;
  JobInput fail = Input(JobInputKind::kLaunchFailed);
  fail.message = "image pull failed";
  Job preparing = JobIn(Setup::kPreparing);
  return Step(preparing, fail).job;  // kFailed
}

std::vector<JobActionKind> Kinds(const JobDecision& d) {
  std::vector<JobActionKind> out;
  for (const auto& a : d.actions) out.push_back(a.kind);
  return out;
}

TEST(JobMachineSetupTest, EachSetupIsTheStateItNames) {
  EXPECT_EQ(JobIn(Setup::kQueued).state, JobState::kQueued);
  EXPECT_EQ(JobIn(Setup::kPreparing).state, JobState::kPreparing);
  EXPECT_EQ(JobIn(Setup::kRunning).state, JobState::kRunning);
  Job stopping = JobIn(Setup::kStopping);
  EXPECT_EQ(stopping.state, JobState::kRunning);
  ASSERT_TRUE(stopping.ending.has_value());
  EXPECT_EQ(stopping.ending->kind, EndingKind::kSucceed);
  EXPECT_EQ(JobIn(Setup::kCancelling).state, JobState::kCancelling);
  EXPECT_EQ(JobIn(Setup::kCancellingLaunch).state, JobState::kCancelling);
  EXPECT_EQ(JobIn(Setup::kSucceeded).state, JobState::kSucceeded);
  EXPECT_EQ(JobIn(Setup::kFailed).state, JobState::kFailed);
  EXPECT_EQ(JobIn(Setup::kCancelled).state, JobState::kCancelled);
}

struct Row {
  Setup setup;
  JobInput input;
  JobState want_state;
  std::optional<EndingKind> want_ending;
  std::vector<JobActionKind> want_actions;
};

const char* SetupName(Setup s) {
  switch (s) {
    case Setup::kQueued:
      return "QUEUED";
    case Setup::kPreparing:
      return "PREPARING";
    case Setup::kRunning:
      return "RUNNING";
    case Setup::kStopping:
      return "RUNNING+ending";
    case Setup::kCancelling:
      return "CANCELLING";
    case Setup::kCancellingLaunch:
      return "CANCELLING+launching";
    case Setup::kSucceeded:
      return "SUCCEEDED";
    case Setup::kFailed:
      return "FAILED";
    case Setup::kCancelled:
      return "CANCELLED";
  }
  return "?";
}

JobInput Exit(int pool, int code, std::optional<int> signal = std::nullopt) {
  JobInput in = Input(JobInputKind::kReplicaExited, 1, pool, 0);
  in.exit_code = code;
  in.signal = signal;
  return in;
}
JobInput Timer(TimerKind t) {
  JobInput in = Input(JobInputKind::kTimerFired);
  in.timer = t;
  return in;
}
JobInput Observed(bool primary_running, bool worker_running) {
  JobInput in = Input(JobInputKind::kRecovered);
  in.observed = {{.pool = 0, .running = primary_running, .exit_code = primary_running ? 0 : 137},
                 {.pool = 1, .running = worker_running, .exit_code = worker_running ? 0 : 137}};
  if (!worker_running) in.observed[1].signal = 9;
  return in;
}
// A launch the daemon's stop interrupted between the gang's create and start: the
// worker created and never started; the primary started (running) or not.
JobInput Unstarted(bool primary_started) {
  JobInput in = Observed(primary_started, false);
  in.observed[0].exit_code = primary_started ? 0 : -1;
  in.observed[1].exit_code = -1;
  in.observed[1].signal.reset();
  return in;
}

using A = JobActionKind;
using S = JobState;
using E = EndingKind;

// The whole table: every setup x every input kind.
std::vector<Row> Table() {
  const JobInput submitted = Input(JobInputKind::kSubmitted);
  const JobInput admitted = Input(JobInputKind::kAdmitted);
  const JobInput started = Input(JobInputKind::kAttemptStarted);
  const JobInput launch_failed = Input(JobInputKind::kLaunchFailed);
  const JobInput primary_ok = Exit(0, 0);
  const JobInput worker_exit1 = Exit(1, 1);
  const JobInput worker_killed = Exit(1, 137, 9);
  const JobInput restarted = Input(JobInputKind::kReplicaRestarted, 1, 1, 0);
  const JobInput restart_failed = Input(JobInputKind::kRestartFailed, 1, 1, 0);
  const JobInput cancel = Input(JobInputKind::kCancel);
  const JobInput max_wait = Timer(TimerKind::kMaxWait);
  const JobInput timeout = Timer(TimerKind::kTimeout);
  const JobInput all_running = Observed(true, true);
  JobInput unrunnable = Input(JobInputKind::kUnrunnable);
  unrunnable.message = "its spec cannot be read";
  const JobInput worker_gone = Observed(true, false);
  JobInput backend_preempted = Input(JobInputKind::kBackendPreempted, 1);
  backend_preempted.message = "Slurm preempted job 12";
  const JobInput preempt = Input(JobInputKind::kPreempt);
  std::vector<Row> t = {
      // QUEUED
      {Setup::kQueued, submitted, S::kQueued, {}, {}},
      {Setup::kQueued, admitted, S::kPreparing, {}, {A::kLaunch}},
      {Setup::kQueued, started, S::kQueued, {}, {}},
      {Setup::kQueued, launch_failed, S::kQueued, {}, {}},
      {Setup::kQueued, primary_ok, S::kQueued, {}, {}},
      {Setup::kQueued, restarted, S::kQueued, {}, {}},
      {Setup::kQueued, restart_failed, S::kQueued, {}, {}},
      {Setup::kQueued, cancel, S::kCancelled, {}, {}},
      {Setup::kQueued, max_wait, S::kQueued, {}, {}},  // Not due yet (kNow < create + 50 s).
      {Setup::kQueued, timeout, S::kQueued, {}, {}},
      {Setup::kQueued, all_running, S::kQueued, {}, {A::kArmTimer, A::kRequestAdmission}},
      {Setup::kQueued, unrunnable, S::kFailed, {}, {}},
      {Setup::kQueued, backend_preempted, S::kQueued, {}, {}},  // No attempt: stale.
      {Setup::kQueued, preempt, S::kQueued, {}, {}},  // Admission preempts running jobs only.
      // PREPARING
      {Setup::kPreparing, submitted, S::kPreparing, {}, {}},
      {Setup::kPreparing, admitted, S::kPreparing, {}, {}},
      {Setup::kPreparing, started, S::kRunning, {}, {A::kArmTimer}},
      {Setup::kPreparing, launch_failed, S::kFailed, {}, {A::kCleanup}},
      {Setup::kPreparing, primary_ok, S::kPreparing, E::kSucceed, {}},
      {Setup::kPreparing, restarted, S::kPreparing, {}, {}},
      {Setup::kPreparing, cancel, S::kCancelling, E::kCancel, {}},
      {Setup::kPreparing, backend_preempted, S::kPreparing, E::kPreempt, {}},
      {Setup::kPreparing, preempt, S::kPreparing, E::kPreempt, {}},  // Stopped once started.
      {Setup::kPreparing, restart_failed, S::kPreparing, {}, {}},
      {Setup::kPreparing, unrunnable, S::kFailed, {}, {A::kCleanup}},
      {Setup::kPreparing, max_wait, S::kPreparing, {}, {}},
      {Setup::kPreparing, timeout, S::kPreparing, {}, {}},
      {Setup::kPreparing, all_running, S::kRunning, {}, {A::kArmTimer, A::kArmTimer}},
      // Issue 31 item 4: a gang that had started is taken over, never launched over
      // (its training would run twice); the worker killed meanwhile restarts in place.
      {Setup::kPreparing,
       worker_gone,
       S::kRunning,
       {},
       {A::kArmTimer, A::kArmTimer, A::kRestartReplica}},
      // Started in part: the primary runs on, the worker is started in place.
      {Setup::kPreparing,
       Unstarted(true),
       S::kRunning,
       {},
       {A::kArmTimer, A::kArmTimer, A::kRestartReplica}},
      // Created, none started: nothing ran, so a new attempt launches.
      {Setup::kPreparing,
       Unstarted(false),
       S::kPreparing,
       {},
       {A::kArmTimer, A::kStop, A::kCleanup, A::kLaunch}},
      // RUNNING
      {Setup::kRunning, submitted, S::kRunning, {}, {}},
      {Setup::kRunning, admitted, S::kRunning, {}, {}},
      {Setup::kRunning, started, S::kRunning, {}, {}},
      {Setup::kRunning, launch_failed, S::kFailed, {}, {A::kCleanup}},
      {Setup::kRunning, primary_ok, S::kRunning, E::kSucceed, {A::kStop}},
      {Setup::kRunning, worker_exit1, S::kRunning, E::kFail, {A::kStop}},
      {Setup::kRunning, worker_killed, S::kRunning, {}, {A::kRestartReplica}},
      {Setup::kRunning, restarted, S::kRunning, {}, {}},
      {Setup::kRunning, restart_failed, S::kRunning, {}, {}},
      {Setup::kRunning, cancel, S::kCancelling, E::kCancel, {A::kStop}},
      {Setup::kRunning, backend_preempted, S::kRunning, E::kPreempt, {A::kStop}},
      {Setup::kRunning, preempt, S::kRunning, E::kPreempt, {A::kStop}},
      {Setup::kRunning, max_wait, S::kRunning, {}, {}},
      {Setup::kRunning, timeout, S::kRunning, {}, {}},
      {Setup::kRunning, all_running, S::kRunning, {}, {A::kArmTimer}},
      {Setup::kRunning, worker_gone, S::kRunning, {}, {A::kArmTimer, A::kRestartReplica}},
      {Setup::kRunning, unrunnable, S::kFailed, {}, {A::kCleanup}},
      {Setup::kStopping, unrunnable, S::kFailed, {}, {A::kCleanup}},
      {Setup::kCancelling, unrunnable, S::kFailed, {}, {A::kCleanup}},
      // RUNNING with a pending ending (primary succeeded, worker being stopped)
      {Setup::kStopping, submitted, S::kRunning, E::kSucceed, {}},
      {Setup::kStopping, admitted, S::kRunning, E::kSucceed, {}},
      {Setup::kStopping, started, S::kRunning, E::kSucceed, {}},
      {Setup::kStopping, restart_failed, S::kRunning, E::kSucceed, {}},
      {Setup::kStopping, preempt, S::kRunning, E::kSucceed, {}},  // Decided already.
      {Setup::kStopping, launch_failed, S::kRunning, E::kSucceed, {}},
      {Setup::kStopping, worker_killed, S::kSucceeded, {}, {A::kCleanup}},
      {Setup::kStopping, worker_exit1, S::kSucceeded, {}, {A::kCleanup}},
      {Setup::kStopping, restarted, S::kRunning, E::kSucceed, {}},
      {Setup::kStopping, cancel, S::kRunning, E::kSucceed, {}},
      {Setup::kStopping, backend_preempted, S::kRunning, E::kSucceed, {}},  // Decided.
      {Setup::kStopping, timeout, S::kRunning, E::kSucceed, {}},
      {Setup::kStopping, all_running, S::kRunning, E::kSucceed, {A::kArmTimer, A::kStop}},
      {Setup::kStopping, worker_gone, S::kSucceeded, {}, {A::kArmTimer, A::kCleanup}},
      // CANCELLING
      {Setup::kCancelling, submitted, S::kCancelling, E::kCancel, {}},
      {Setup::kCancelling, admitted, S::kCancelling, E::kCancel, {}},
      {Setup::kCancelling, started, S::kCancelling, E::kCancel, {}},        // Stale: started.
      {Setup::kCancelling, launch_failed, S::kCancelling, E::kCancel, {}},  // Stale.
      {Setup::kCancelling, restarted, S::kCancelling, E::kCancel, {}},
      {Setup::kCancelling, restart_failed, S::kCancelling, E::kCancel, {}},
      {Setup::kCancelling, preempt, S::kCancelling, E::kCancel, {}},
      {Setup::kCancelling, primary_ok, S::kCancelling, E::kCancel, {}},
      {Setup::kCancelling, worker_killed, S::kCancelling, E::kCancel, {}},
      {Setup::kCancelling, cancel, S::kCancelling, E::kCancel, {}},
      {Setup::kCancelling, backend_preempted, S::kCancelling, E::kCancel, {}},
      {Setup::kCancelling, timeout, S::kCancelling, E::kCancel, {}},
      {Setup::kCancelling, all_running, S::kCancelling, E::kCancel, {A::kArmTimer, A::kStop}},
      {Setup::kCancelling, worker_gone, S::kCancelling, E::kCancel, {A::kArmTimer, A::kStop}},
      // CANCELLING while the launch is under way: its outcome decides.
      {Setup::kCancellingLaunch, submitted, S::kCancelling, E::kCancel, {}},
      {Setup::kCancellingLaunch, admitted, S::kCancelling, E::kCancel, {}},
      {Setup::kCancellingLaunch, started, S::kCancelling, E::kCancel, {A::kStop}},
      {Setup::kCancellingLaunch, launch_failed, S::kCancelled, {}, {A::kCleanup}},
      {Setup::kCancellingLaunch, primary_ok, S::kCancelling, E::kCancel, {}},
      {Setup::kCancellingLaunch, restarted, S::kCancelling, E::kCancel, {}},
      {Setup::kCancellingLaunch, restart_failed, S::kCancelling, E::kCancel, {}},
      {Setup::kCancellingLaunch, cancel, S::kCancelling, E::kCancel, {}},
      {Setup::kCancellingLaunch, max_wait, S::kCancelling, E::kCancel, {}},
      {Setup::kCancellingLaunch, timeout, S::kCancelling, E::kCancel, {}},
      {Setup::kCancellingLaunch, all_running, S::kCancelling, E::kCancel, {A::kArmTimer, A::kStop}},
      {Setup::kCancellingLaunch, unrunnable, S::kFailed, {}, {A::kCleanup}},
      {Setup::kCancellingLaunch, preempt, S::kCancelling, E::kCancel, {}},
      {Setup::kCancellingLaunch, backend_preempted, S::kCancelling, E::kCancel, {}},
  };
  // Terminal states ignore every input.
  for (Setup terminal : {Setup::kSucceeded, Setup::kFailed, Setup::kCancelled}) {
    S state = terminal == Setup::kSucceeded ? S::kSucceeded
              : terminal == Setup::kFailed  ? S::kFailed
                                            : S::kCancelled;
    for (const JobInput& in : {submitted, admitted, started, launch_failed, primary_ok,
                               worker_killed, restarted, restart_failed, cancel, max_wait, timeout,
                               all_running, unrunnable, backend_preempted, preempt}) {
      t.push_back({terminal, in, state, {}, {}});
    }
  }
  return t;
}

TEST(JobMachineTableTest, EveryStateAgainstEveryInput) {
  for (const Row& row : Table()) {
    Job job = JobIn(row.setup);
    JobDecision d = Step(job, row.input);
    std::string where = std::string(SetupName(row.setup)) + " + input " +
                        std::to_string(static_cast<int>(row.input.kind)) + " (pool " +
                        std::to_string(row.input.pool) + ")";
    EXPECT_EQ(JobStateName(d.job.state), std::string(JobStateName(row.want_state))) << where;
    EXPECT_EQ(d.job.ending.has_value(), row.want_ending.has_value()) << where;
    if (d.job.ending && row.want_ending) {
      EXPECT_EQ(d.job.ending->kind, *row.want_ending) << where;
    }
    EXPECT_EQ(Kinds(d), row.want_actions) << where;
    // A decision that acts on the world has changed the record first.
    if (!row.want_actions.empty() && row.want_actions != std::vector<A>{A::kArmTimer}) {
      bool only_recovery = row.input.kind == JobInputKind::kRecovered;
      if (!only_recovery) {
        EXPECT_TRUE(d.changed) << where;
      }
    }
  }
}

// gtest's Test::Setup hides the enum inside a TEST body.
using AnySetup = Setup;

// Every state (each setup, and each JobState through some setup) against every input
// kind, both enumerated from the enums themselves: a new state or input kind without
// rows in Table() fails here.
TEST(JobMachineTableTest, TheTableHasRowsForEveryStateAndEveryInputKind) {
  const std::vector<AnySetup> setups = {
      AnySetup::kQueued,    AnySetup::kPreparing,  AnySetup::kRunning,
      AnySetup::kStopping,  AnySetup::kCancelling, AnySetup::kCancellingLaunch,
      AnySetup::kSucceeded, AnySetup::kFailed,     AnySetup::kCancelled};
  std::set<std::string> states_set_up;
  for (AnySetup s : setups) states_set_up.insert(JobStateName(JobIn(s).state));
  for (int i = 1; std::string(JobStateName(static_cast<JobState>(i))) != "STATE_UNSPECIFIED"; ++i) {
    EXPECT_TRUE(states_set_up.count(JobStateName(static_cast<JobState>(i))))
        << "no setup is in state " << JobStateName(static_cast<JobState>(i));
  }
  std::set<std::pair<int, int>> rows;
  for (const Row& row : Table()) {
    rows.insert({static_cast<int>(row.setup), static_cast<int>(row.input.kind)});
  }
  int kinds = 0;
  for (int k = 0; JobInputKindName(static_cast<JobInputKind>(k)) != nullptr; ++k, ++kinds) {
    for (AnySetup s : setups) {
      EXPECT_TRUE(rows.count({static_cast<int>(s), k}))
          << "no row for " << SetupName(s) << " + "
          << JobInputKindName(static_cast<JobInputKind>(k));
    }
  }
  EXPECT_EQ(kinds, static_cast<int>(JobInputKind::kBackendPreempted) + 1);
}

TEST(JobMachineTest, StaleAttemptInputsAreIgnored) {
  Job job = JobIn(Setup::kRunning);
  JobDecision d = Step(job, Input(JobInputKind::kReplicaExited, /*attempt=*/7, 0, 0));
  EXPECT_FALSE(d.changed);
  EXPECT_TRUE(d.actions.empty());
}

TEST(JobMachineTest, FailureMessageNamesTheReplicaAndQuotesItsLastLines) {
  JobInput exit = Exit(1, 3);
  exit.log_tail = {"Traceback", "ValueError: bad"};
  JobDecision d = Step(JobIn(Setup::kRunning), exit);
  ASSERT_TRUE(d.job.ending && d.job.ending->error);
  EXPECT_EQ(d.job.ending->error->code, kErrorCodeUserFailure);
  EXPECT_EQ(d.job.ending->error->message,
            "The replica workerpool1-0 exited with a non-zero status of 3. Termination reason: "
            "Error.\nLast log lines of workerpool1-0:\nTraceback\nValueError: bad");
}

// Issue 33: a TensorFlow trainer on an AI Platform runtimeVersion (which runs on a
// runtime without TensorFlow here) failed with the traceback alone.
TEST(JobMachineTest, AMissingTensorflowSaysWhy) {
  JobInput exit = Exit(1, 1);
  exit.log_tail = {"Traceback (most recent call last):",
                   "ModuleNotFoundError: No module named 'tensorflow'"};
  JobDecision d = Step(JobIn(Setup::kRunning), exit);
  ASSERT_TRUE(d.job.ending && d.job.ending->error);
  EXPECT_NE(d.job.ending->error->message.find("The image has no TensorFlow"), std::string::npos)
      << d.job.ending->error->message;
}

TEST(JobMachineTest, RestartInPlaceIsCommittedAsRestartingBeforeItRuns) {
  JobDecision d = Step(JobIn(Setup::kRunning), Exit(1, 137, 9));
  ASSERT_TRUE(d.changed);
  EXPECT_EQ(d.job.replicas[1].state, ReplicaState::kRestarting);
  EXPECT_EQ(d.job.replicas[1].restarts, 1);
  JobDecision back = Step(d.job, Input(JobInputKind::kReplicaRestarted, 1, 1, 0));
  EXPECT_EQ(back.job.replicas[1].state, ReplicaState::kRunning);
  // Recovery of a restart that may not have run: it is issued again, not counted again.
  JobDecision replay = Step(d.job, Observed(true, false));
  EXPECT_EQ(Kinds(replay), (std::vector<A>{A::kArmTimer, A::kRestartReplica}));
  EXPECT_EQ(replay.job.replicas[1].restarts, 1);
}

TEST(JobMachineTest, RetryEndingStartsTheNextAttemptOnceAllAreDown) {
  Job job = JobIn(Setup::kRunning);
  job.spec.scheduling.restart_job_on_worker_restart = true;
  JobDecision d = Step(job, Exit(1, 137, 9));
  ASSERT_TRUE(d.job.ending);
  EXPECT_EQ(d.job.ending->kind, EndingKind::kRetry);
  EXPECT_EQ(Kinds(d), std::vector<A>{A::kStop});
  JobInput primary_stopped = Exit(0, 143, 15);
  JobDecision next = Step(d.job, primary_stopped);
  EXPECT_EQ(next.job.attempt, 2);
  EXPECT_FALSE(next.job.ending);
  EXPECT_EQ(Kinds(next), (std::vector<A>{A::kCleanup, A::kLaunch}));
  EXPECT_EQ(next.actions.front().attempt, 1);  // Cleanup names the attempt that ended.
}

// Issue 30 item 2: the record says what the current attempt's image names stood for;
// the next attempt says nothing until its own launch resolved them again.
TEST(JobMachineTest, EachAttemptRecordsTheImagesItsLaunchResolved) {
  Job job = JobIn(Setup::kPreparing);
  JobInput started = Input(JobInputKind::kAttemptStarted);
  started.images = {{"gcr.io/p/t:v1", "sha256:first", "sha256:id1"}};
  job = Step(job, started).job;
  ASSERT_EQ(job.images.size(), 1u);
  EXPECT_EQ(job.images[0].digest, "sha256:first");
  job.spec.scheduling.restart_job_on_worker_restart = true;
  job = Step(job, Exit(1, 137, 9)).job;
  job = Step(job, Exit(0, 143, 15)).job;
  ASSERT_EQ(job.attempt, 2);
  EXPECT_TRUE(job.images.empty()) << "attempt 2 has not launched yet";
  started.attempt = 2;
  started.images = {{"gcr.io/p/t:v1", "sha256:second", "sha256:id2"}};
  job = Step(job, started).job;
  ASSERT_EQ(job.images.size(), 1u);
  EXPECT_EQ(job.images[0].digest, "sha256:second");
}

// Slurm preempting a job (the executor's kAttemptPreempted): the replicas' deaths that
// follow are the preemption's, not failures or restarts; once all are down the job is
// queued again as after an admission preemption, its retries untouched.
TEST(JobMachineTest, ABackendPreemptionQueuesTheJobAgainOnceItsReplicasAreDown) {
  JobInput preempted = Input(JobInputKind::kBackendPreempted, 1);
  preempted.message = "Slurm preempted job 12 (a job of a higher priority needed its resources)";
  JobDecision d = Step(JobIn(Setup::kRunning), preempted);
  ASSERT_TRUE(d.job.ending);
  EXPECT_EQ(d.job.ending->kind, EndingKind::kPreempt);
  EXPECT_EQ(Kinds(d), std::vector<A>{A::kStop});
  JobDecision one = Step(d.job, Exit(1, 137, 9));
  EXPECT_EQ(one.job.state, JobState::kRunning);
  EXPECT_TRUE(Kinds(one).empty());  // No restart in place.
  JobDecision all = Step(one.job, Exit(0, 143, 15));
  EXPECT_EQ(all.job.state, JobState::kQueued);
  EXPECT_EQ(all.job.preemptions, 1);
  EXPECT_FALSE(all.job.error);
  EXPECT_EQ(Kinds(all), (std::vector<A>{A::kCleanup, A::kRequestAdmission}));
  bool said = false;
  for (const model::OutboxLine& l : d.job.outbox.lines) {
    said = said || l.message.find("Slurm preempted") == 0;
  }
  for (const JobEvent& e : d.history) said = said || e.message.find("Slurm preempted") == 0;
  EXPECT_TRUE(said);
}

TEST(JobMachineTest, LastAttemptFailsInsteadOfRetrying) {
  Job job = JobIn(Setup::kRunning);
  job.spec.scheduling.restart_job_on_worker_restart = true;
  job.attempt = 3;
  for (auto& r : job.replicas) r.attempt = 3;
  JobInput killed = Exit(1, 137, 9);
  killed.attempt = 3;
  JobDecision d = Step(job, killed);
  ASSERT_TRUE(d.job.ending);
  EXPECT_EQ(d.job.ending->kind, EndingKind::kFail);
}

TEST(JobMachineTest, TimersFireOnlyWhenDue) {
  Job preparing = JobIn(Setup::kPreparing);
  TimeMicros due = preparing.create_time + 50'000'000;
  EXPECT_FALSE(Step(preparing, Timer(TimerKind::kMaxWait), due - 1).changed);
  JobDecision d = Step(preparing, Timer(TimerKind::kMaxWait), due);
  EXPECT_EQ(d.job.state, JobState::kCancelling);
  Job running = JobIn(Setup::kRunning);
  EXPECT_FALSE(
      Step(running, Timer(TimerKind::kTimeout), running.start_time + 100'000'000 - 1).changed);
  JobDecision t = Step(running, Timer(TimerKind::kTimeout), running.start_time + 100'000'000);
  EXPECT_EQ(t.job.state, JobState::kCancelling);
  EXPECT_NE(t.job.ending->error->message.find("timeout of 100s"), std::string::npos);
}

TEST(JobMachineTest, RecoveringAStoppingJobStopsAgainAndNeverRestarts) {
  // The original hole: a restart during the stop grace after the primary succeeded.
  Job stopping = JobIn(Setup::kStopping);
  JobDecision d = Step(stopping, Observed(false, true));
  EXPECT_EQ(d.job.state, JobState::kRunning);
  EXPECT_EQ(Kinds(d), (std::vector<A>{A::kArmTimer, A::kStop}));
  JobDecision killed = Step(d.job, Exit(1, 137, 9));
  EXPECT_EQ(killed.job.state, JobState::kSucceeded);
  EXPECT_EQ(killed.job.replicas[1].restarts, 0);
}

TEST(JobMachineTest, RecordsWrittenBeforeEndingsRecoverACancelAsAUserCancel) {
  Job old = JobIn(Setup::kCancelling);
  old.ending.reset();  // Schema v1 had no ending column.
  JobDecision d = Step(old, Observed(true, true));
  ASSERT_TRUE(d.job.ending);
  EXPECT_EQ(d.job.ending->kind, EndingKind::kCancel);
  EXPECT_EQ(Kinds(d), (std::vector<A>{A::kArmTimer, A::kStop}));
}

}  // namespace
}  // namespace ty::machines

namespace ty::machines {
namespace {

// Found after a kill -9 (issue 19): jobs whose replicas exited while the daemon was
// down got the restart time as endTime. The engine's finish times are kept.
TEST(JobMachineTest, ExitsReplayedAtRecoveryKeepTheirOwnTimes) {
  Job running = JobIn(Setup::kRunning);
  JobInput in = Input(JobInputKind::kRecovered);
  in.observed = {{.pool = 0, .finished_at = kNow + 10'000'000},
                 {.pool = 1, .finished_at = kNow + 20'000'000}};
  JobDecision d = Step(running, in, kNow + 100'000'000);
  ASSERT_EQ(d.job.state, JobState::kSucceeded);
  EXPECT_EQ(d.job.end_time, kNow + 20'000'000);
  EXPECT_EQ(d.job.replicas[0].end_time, kNow + 10'000'000);
  EXPECT_EQ(d.job.replicas[1].end_time, kNow + 20'000'000);
  // Unknown (0) or in the future (a skewed clock): the recovery's own time.
  in.observed[0].finished_at = 0;
  in.observed[1].finished_at = kNow + 500'000'000;
  d = Step(running, in, kNow + 100'000'000);
  EXPECT_EQ(d.job.end_time, kNow + 100'000'000);
}

}  // namespace
}  // namespace ty::machines
