// The job state machine as one pure function (docs/design.md §2, docs/style.md §6.11):
//
//   DecideJob(job record, input, policy, now) -> (new record, history, actions)
//
// Inputs are what can happen to a job: it was submitted or admitted, the executor
// started its attempt, failed to launch it, saw a replica exit or restarted one, a
// user cancelled it, a timer fired, or the daemon restarted and observed what the
// executor still has. Actions are the side effects the caller performs *after*
// committing the new record: launch, stop, restart a replica, clean up an attempt,
// arm a timer, ask for admission. What the decision says to the job's log goes into the
// record's outbox (model/outbox.h), committed with it and written after the commit.
//
// Every pending outcome lives in the record, never in memory only: a stop in
// progress carries `model::Job::ending` (succeed / fail with this error / retry as the
// next attempt / cancel), a restart in place marks its replica RESTARTING. So the
// daemon can die between any commit and its actions, and `DecideJob(record,
// kRecovered{observed})` finishes exactly what was decided (crash-point tests in
// tests/service/crash_points_test.cc prove it for every commit).
//
//   QUEUED --admitted--> PREPARING --attempt started--> RUNNING --primary exits 0------+
//     |                     |  launch failed -> FAILED    |  replica exits 1-127 ----+ |
//     |                     |                             |  signal death: restart   | |
//     |                     |                             |  in place, then retry    | |
//     |  cancel / maxWait   |  cancel / maxWait           |  cancel / timeout        v v
//     +--> CANCELLED        +--> CANCELLING <-------------+            (ending set: stop
//                                   | all replicas down                 the attempt; when
//                                   v                                   all are down:)
//                                CANCELLED              SUCCEEDED | FAILED | next attempt
//
// Pure: no I/O, no clock, no threads; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "model/job.h"

namespace ty::machines {

struct JobPolicy {
  int max_attempts = 3;  // Whole-job attempts (docs/contracts/runtime.md §9).
  int max_replica_restarts =
      5;  // In-place restarts of one replica per attempt (docs/contracts/runtime.md §9).
};

enum class TimerKind {
  kMaxWait,  // Not RUNNING by create_time + maxWaitTime: cancelled.
  kTimeout,  // Still running at start_time + timeout: cancelled.
};

enum class JobInputKind {
  kSubmitted,         // Just created, QUEUED: log it, arm maxWait, ask for admission.
  kAdmitted,          // Start attempt 1.
  kAttemptStarted,    // Executor: every replica of `attempt` runs.
  kLaunchFailed,      // Executor: `attempt` could not start (`message`); nothing left.
  kReplicaExited,     // Executor: replica (pool, index) of `attempt` ended.
  kReplicaRestarted,  // Executor: the restart in place of (pool, index) succeeded.
  kRestartFailed,     // Executor: it could not (`message`).
  kCancel,            // A user asked (`message`: the reason logged and returned).
  kTimerFired,        // `timer` is due.
  kRecovered,         // Daemon start: `observed` = what exists of the current attempt.
  kUnrunnable,        // Daemon start: the stored job cannot run any more (`message`).
  kPreempt,           // Admission: stop this spot job's attempt and queue it again.
  kBackendPreempted,  // Executor: the backend took `attempt` back (`message` says why);
                      // its replicas' ends follow; the job is queued again.
};

// "SUBMITTED", "ADMITTED", ...; nullptr for a value that is no JobInputKind (the table
// test enumerates the kinds this way, so a new kind without rows fails it).
const char* JobInputKindName(JobInputKind kind);

struct JobInput {
  JobInputKind kind = JobInputKind::kSubmitted;
  int attempt = 0;  // Executor inputs: the attempt they concern.
  int pool = -1;    // Replica inputs.
  int index = -1;
  int exit_code = 0;          // kReplicaExited.
  std::optional<int> signal;  // kReplicaExited: died of this signal.
  bool oom_killed = false;    // kReplicaExited.
  // kReplicaExited: when the backend says it ended, if not now (recovery, an exit
  // learnt late); never before the replica's start.
  TimeMicros exit_time = 0;
  TimeMicros image_ready_time = 0;        // kAttemptStarted.
  std::vector<model::ImageRan> images;    // kAttemptStarted: what its image names stood for.
  std::string message;                    // Launch/restart failure, how it started, cancel reason.
  std::vector<std::string> log_tail;      // kReplicaExited: the replica's last log lines.
  TimerKind timer = TimerKind::kTimeout;  // kTimerFired.
  std::vector<model::ObservedReplica> observed;  // kRecovered.
  std::vector<model::ReplicaGrant> grants;       // kAdmitted: where and with what it runs.
};

enum class JobActionKind {
  kRequestAdmission,  // Queue the job for admission (a kAdmitted input follows).
                      // Its grants are released whenever a committed record is
                      // terminal or queued (the controller does it, not an action).
  kLaunch,            // Launch `attempt` (every replica of the record, gang start).
  kStop,              // Stop every replica of `attempt` (SIGTERM, SIGKILL after grace).
  kRestartReplica,    // Restart (pool, index) of `attempt` in place.
  kCleanup,           // Remove what is left of `attempt`.
  kArmTimer,          // Deliver kTimerFired{timer} at `at`.
};

struct JobAction {
  JobActionKind kind = JobActionKind::kRequestAdmission;
  int attempt = 0;
  int pool = -1;
  int index = -1;
  TimerKind timer = TimerKind::kTimeout;
  TimeMicros at = 0;
};

struct JobDecision {
  model::Job job;        // The new record; `job.outbox` holds this decision's service lines.
  bool changed = false;  // Commit `job` (and `history`) before any action.
  std::vector<model::JobEvent> history;  // Lines for the job's event history.
  std::vector<JobAction> actions;        // In order.
};

// REQUIRES: job.spec is the job's parsed spec (pool sizes drive replica records).
// Inputs that no longer apply (a stale attempt, a terminal job, a timer whose
// condition passed) return `changed == false` and no actions.
JobDecision DecideJob(const model::Job& job, const JobInput& input, const JobPolicy& policy,
                      TimeMicros now);

// Error codes the machine sets (google.rpc.Code numbers).
inline constexpr int kErrorCodeCancelled = 1;
inline constexpr int kErrorCodeUserFailure = 3;  // Vertex reports user-code failures so.
inline constexpr int kErrorCodeLaunchFailed = 9;
inline constexpr int kErrorCodeInternal = 13;

}  // namespace ty::machines
