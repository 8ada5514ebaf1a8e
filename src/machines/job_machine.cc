#include "machines/job_machine.h"

#include <algorithm>

namespace ty::machines {

// The records this machine decides over.
using model::Ending;
using model::EndingKind;
using model::IsTerminal;
using model::Job;
using model::JobError;
using model::JobEvent;
using model::JobState;
using model::JobStateName;
using model::ObservedReplica;
using model::ReplicaDisplayName;
using model::ReplicaRecord;
using model::ReplicaState;
using model::Scheduling;
using model::TaskName;

const char* JobInputKindName(JobInputKind kind) {
  switch (kind) {
    case JobInputKind::kSubmitted:
      return "SUBMITTED";
    case JobInputKind::kAdmitted:
      return "ADMITTED";
    case JobInputKind::kAttemptStarted:
      return "ATTEMPT_STARTED";
    case JobInputKind::kLaunchFailed:
      return "LAUNCH_FAILED";
    case JobInputKind::kReplicaExited:
      return "REPLICA_EXITED";
    case JobInputKind::kReplicaRestarted:
      return "REPLICA_RESTARTED";
    case JobInputKind::kRestartFailed:
      return "RESTART_FAILED";
    case JobInputKind::kCancel:
      return "CANCEL";
    case JobInputKind::kTimerFired:
      return "TIMER_FIRED";
    case JobInputKind::kRecovered:
      return "RECOVERED";
    case JobInputKind::kUnrunnable:
      return "UNRUNNABLE";
    case JobInputKind::kPreempt:
      return "PREEMPT";
    case JobInputKind::kBackendPreempted:
      return "BACKEND_PREEMPTED";
  }
  return nullptr;  // Not a kind (every kind has its case: -Werror=switch).
}
namespace {

const char* SignalName(int sig) {
  switch (sig) {
    case 1:
      return "SIGHUP";
    case 2:
      return "SIGINT";
    case 6:
      return "SIGABRT";
    case 9:
      return "SIGKILL";
    case 11:
      return "SIGSEGV";
    case 15:
      return "SIGTERM";
    default:
      return "signal";
  }
}

bool IsPrimary(const ReplicaRecord& r) { return r.pool == 0 && r.index == 0; }

bool ReplicaDone(const ReplicaRecord& r) {
  return r.state == ReplicaState::kSucceeded || r.state == ReplicaState::kFailed ||
         r.state == ReplicaState::kStopped;
}

bool ReplicaLive(const ReplicaRecord& r) {
  return r.state == ReplicaState::kRunning || r.state == ReplicaState::kRestarting;
}

bool IsExecutorInput(JobInputKind k) {
  return k == JobInputKind::kAttemptStarted || k == JobInputKind::kLaunchFailed ||
         k == JobInputKind::kReplicaExited || k == JobInputKind::kReplicaRestarted ||
         k == JobInputKind::kRestartFailed || k == JobInputKind::kBackendPreempted;
}

std::vector<ReplicaRecord> NewReplicaRecords(const Job& job, int attempt) {
  std::vector<ReplicaRecord> out;
  for (int p = 0; p < static_cast<int>(job.spec.pools.size()); ++p) {
    for (int i = 0; i < job.spec.pools[p].replica_count; ++i) {
      ReplicaRecord r;
      r.pool = p;
      r.index = i;
      r.attempt = attempt;
      r.task_name = TaskName(job.dialect, p, i);
      r.state = ReplicaState::kPending;
      out.push_back(std::move(r));
    }
  }
  return out;
}

// One decision under construction. Each handler mutates the record, notes history
// and appends actions; `JobDecision::changed` is set by every mutation that must be
// committed before the actions run.
class JobMachine {
 public:
  JobMachine(const Job& job, const JobPolicy& policy, TimeMicros now) : policy_(policy), now_(now) {
    d_.job = job;
    // The lines of the record's last commit were written after it: this decision's
    // commit carries its own.
    d_.job.outbox.lines.clear();
  }
  JobDecision Take() { return std::move(d_); }

  void Apply(const JobInput& in);

 private:
  Job& job() { return d_.job; }

  void Changed(const std::string& kind = "", const std::string& message = "") {
    d_.changed = true;
    job().update_time = now_;
    if (!message.empty()) d_.history.push_back(JobEvent{now_, kind, message});
  }
  // A service line, committed in the record's outbox (model/outbox.h) and written to
  // the job's log after the commit.
  void Log(std::string message, std::string severity = "INFO") {
    d_.changed = true;
    job().outbox.Add(std::move(message), std::move(severity));
  }
  void Act(JobActionKind kind, int pool = -1, int index = -1) {
    JobAction a;
    a.kind = kind;
    a.attempt = job().attempt;
    a.pool = pool;
    a.index = index;
    if (kind == JobActionKind::kStop) {
      if (stop_requested_) return;  // One stop per decision is enough.
      stop_requested_ = true;
    }
    d_.actions.push_back(std::move(a));
  }
  void ArmTimer(TimerKind timer, TimeMicros at) {
    JobAction a;
    a.kind = JobActionKind::kArmTimer;
    a.timer = timer;
    a.at = at;
    d_.actions.push_back(std::move(a));
  }

  ReplicaRecord* FindReplica(int pool, int index) {
    for (auto& r : job().replicas) {
      if (r.pool == pool && r.index == index) return &r;
    }
    return nullptr;
  }
  bool AnyLive() { return std::any_of(job().replicas.begin(), job().replicas.end(), ReplicaLive); }
  bool AnyPending() {
    return std::any_of(job().replicas.begin(), job().replicas.end(),
                       [](const ReplicaRecord& r) { return r.state == ReplicaState::kPending; });
  }

  void Submitted();
  void Admitted(const JobInput& in);
  void StartAttempt(int attempt);
  void AttemptStarted(const JobInput& in);
  void LaunchFailed(const JobInput& in);
  void ReplicaExited(const JobInput& in);
  void ReplicaRestarted(const JobInput& in);
  void RestartFailed(const JobInput& in);
  void Cancel(const std::string& reason);
  void Unrunnable(const std::string& why);
  void Preempt(const std::string& why);
  void TimerFired(TimerKind timer);
  void Recovered(const std::vector<ObservedReplica>& observed);
  void RecoverPendingLaunch(const std::vector<ObservedReplica>& observed);
  // A launch found partly or wholly started: RUNNING with what the backend holds.
  void AdoptInterruptedLaunch(const std::vector<ObservedReplica>& observed, size_t started);
  // Each live replica's fate while no daemon watched: exits replayed, restarts redone.
  void ReplayObserved(const std::vector<ObservedReplica>& observed);

  void RestartInPlace(ReplicaRecord& rec);
  void RetryOrFail(JobError error);
  void BeginEnding(Ending ending, const std::string& why);
  void MaybeFinish();
  void Requeue();
  void Finish(JobState state, std::optional<JobError> error);
  void ArmTimers();
  std::string FailureMessage(const ReplicaRecord& r, const JobInput& in);

  JobDecision d_;
  const JobPolicy& policy_;
  const TimeMicros now_;
  bool stop_requested_ = false;
  TimeMicros end_time_ = 0;  // When the last replica exit of this input happened.
};

void JobMachine::Apply(const JobInput& in) {
  if (IsTerminal(job().state)) return;
  if (IsExecutorInput(in.kind) && in.attempt != job().attempt) return;  // A stale attempt.
  switch (in.kind) {
    case JobInputKind::kSubmitted:
      return Submitted();
    case JobInputKind::kAdmitted:
      return Admitted(in);
    case JobInputKind::kAttemptStarted:
      return AttemptStarted(in);
    case JobInputKind::kLaunchFailed:
      return LaunchFailed(in);
    case JobInputKind::kReplicaExited:
      return ReplicaExited(in);
    case JobInputKind::kReplicaRestarted:
      return ReplicaRestarted(in);
    case JobInputKind::kRestartFailed:
      return RestartFailed(in);
    case JobInputKind::kCancel:
      return Cancel(in.message);
    case JobInputKind::kTimerFired:
      return TimerFired(in.timer);
    case JobInputKind::kUnrunnable:
      return Unrunnable(in.message);
    case JobInputKind::kRecovered:
      return Recovered(in.observed);
    case JobInputKind::kPreempt:
      return Preempt("Preempting this spot job: a job that is not spot needs its resources.");
    case JobInputKind::kBackendPreempted:
      return Preempt(in.message.empty() ? "The cluster preempted this job." : in.message);
  }
}

void JobMachine::Submitted() {
  // Once only: a record that was queued already is not queued again.
  if (job().state != JobState::kQueued || job().phases.queued != 0) return;
  job().create_time = job().phases.queued = now_;
  Changed("state", "Job is queued.");
  Log("Validating job requirements...");
  Log("Job creation request has been successfully validated.");
  Log("Job " + job().public_id() + " is queued.");
  ArmTimers();
  Act(JobActionKind::kRequestAdmission);
}

void JobMachine::Admitted(const JobInput& in) {
  if (job().state != JobState::kQueued) return;
  job().state = JobState::kPreparing;
  job().phases.admitted = now_;
  job().grants = in.grants;
  Changed("state", "Job is preparing.");
  Log("Waiting for job to be provisioned.");
  // After a preemption the next attempt starts; otherwise the first.
  StartAttempt(job().attempt + 1);
}

void JobMachine::Preempt(const std::string& why) {
  const JobState s = job().state;
  if (s != JobState::kPreparing && s != JobState::kRunning) return;
  if (job().ending && job().ending->kind != EndingKind::kRetry) return;  // Already decided.
  Log(why, "WARNING");
  BeginEnding(Ending{EndingKind::kPreempt, std::nullopt}, "preempted");
}

void JobMachine::StartAttempt(int attempt) {
  job().attempt = attempt;
  job().replicas = NewReplicaRecords(job(), attempt);
  job().images.clear();  // What the new attempt runs is known once it starts.
  job().ending.reset();
  stop_requested_ = false;  // Stops named the previous attempt.
  Changed("attempt", "Attempt " + std::to_string(attempt) + " is starting.");
  Log("Waiting for training program to start.");
  Act(JobActionKind::kLaunch);
}

void JobMachine::AttemptStarted(const JobInput& in) {
  if (!AnyPending()) return;  // Already started (e.g. replayed after a restart).
  for (auto& r : job().replicas) {
    if (r.state != ReplicaState::kPending) continue;
    r.state = ReplicaState::kRunning;
    r.start_time = now_;
  }
  job().phases.image_ready = in.image_ready_time ? in.image_ready_time : now_;
  job().images = in.images;
  job().phases.all_running = now_;
  if (job().ending) {
    // Cancelled while the launch was in flight: stop what just started.
    Changed("state", "Replicas started while stopping.");
    Act(JobActionKind::kStop);
    return;
  }
  job().state = JobState::kRunning;
  const bool first_start = job().start_time == 0;
  if (first_start) job().start_time = now_;
  // The executor may say how it started them (e.g. from warm sandboxes).
  const std::string running =
      in.message.empty() ? "Job is running." : "Job is running (replicas " + in.message + ").";
  Changed("state", running);
  Log(running);
  if (first_start) ArmTimers();
}

void JobMachine::LaunchFailed(const JobInput& in) {
  for (auto& r : job().replicas) {
    if (r.state == ReplicaState::kPending) r.state = ReplicaState::kStopped;
  }
  if (job().ending) {
    Changed();
    MaybeFinish();
    return;
  }
  Log("Could not start the training program: " + in.message, "ERROR");
  Finish(JobState::kFailed, JobError{kErrorCodeLaunchFailed, in.message});
}

std::string JobMachine::FailureMessage(const ReplicaRecord& r, const JobInput& in) {
  std::string name =
      ReplicaDisplayName(job().dialect, r.pool, r.index, job().spec.use_chief_in_tf_config);
  std::string code = std::to_string(in.exit_code);
  std::string msg;
  if (in.oom_killed) {
    msg = "The replica " + name + " ran out of memory and exited with a non-zero status of " +
          code + ".";
  } else {
    msg = "The replica " + name + " exited with a non-zero status of " + code + ".";
    if (in.signal) {
      msg += " Termination reason: killed by signal " + std::to_string(*in.signal) + " (" +
             SignalName(*in.signal) + ").";
    } else {
      msg += " Termination reason: Error.";
    }
  }
  bool no_tensorflow = false;
  if (!in.log_tail.empty()) {
    msg += "\nLast log lines of " + r.task_name + ":";
    for (const std::string& line : in.log_tail) {
      msg += "\n" + line;
      no_tensorflow |= line.find("No module named 'tensorflow'") != std::string::npos;
    }
  }
  if (no_tensorflow) {
    // An AI Platform runtimeVersion or a Google base image ran here on a runtime that,
    // unlike Google's, has no TensorFlow (images/runtimes.h): say why.
    msg +=
        "\nThe image has no TensorFlow: this server's prebuilt runtimes have none (Debian "
        "packages none). Run the trainer in a container image of your own that has it.";
  }
  return msg;
}

void JobMachine::ReplicaExited(const JobInput& in) {
  ReplicaRecord* rec = FindReplica(in.pool, in.index);
  if (rec == nullptr || ReplicaDone(*rec)) return;
  rec->exit_code = in.exit_code;
  rec->signal = in.signal;
  // An exit replayed at recovery happened while no daemon watched: its time is the
  // backend's, and the job ends then if this exit ends it (not at the restart).
  rec->end_time =
      in.exit_time > 0 && in.exit_time <= now_ ? std::max(in.exit_time, rec->start_time) : now_;
  end_time_ = std::max(end_time_, rec->end_time);
  const bool stopping = job().ending.has_value();
  if (in.exit_code == 0) {
    rec->state = ReplicaState::kSucceeded;
  } else {
    rec->state = stopping ? ReplicaState::kStopped : ReplicaState::kFailed;
  }
  Changed("replica", rec->task_name + " exited with status " + std::to_string(in.exit_code));
  if (stopping) return MaybeFinish();
  if (in.exit_code == 0) {
    // The primary's success is the job's success; the others are shut down.
    if (IsPrimary(*rec))
      return BeginEnding(Ending{EndingKind::kSucceed, std::nullopt},
                         "the primary replica succeeded");
    return MaybeFinish();
  }
  // docs/contracts/runtime.md §9: exits 1-127 are the user's code failing: permanent. A death by a
  // signal the service did not send (128+N, covering 134/139) may be transient: restart the replica
  // in place, then retry the whole job. restartJobOnWorkerRestart turns every restart into a
  // whole-job restart; disableRetries fails at once.
  const std::string message = FailureMessage(*rec, in);
  Log(message, "ERROR");
  const bool retryable = in.signal.has_value() && !in.oom_killed;
  const Scheduling& sched = job().spec.scheduling;
  if (retryable && !sched.disable_retries && !sched.restart_job_on_worker_restart &&
      rec->restarts < policy_.max_replica_restarts) {
    return RestartInPlace(*rec);
  }
  JobError error{kErrorCodeUserFailure, message};
  if (retryable) return RetryOrFail(std::move(error));
  BeginEnding(Ending{EndingKind::kFail, std::move(error)}, rec->task_name + " failed");
}

void JobMachine::RestartInPlace(ReplicaRecord& rec) {
  rec.restarts += 1;
  rec.state = ReplicaState::kRestarting;
  const std::string count = "(restart " + std::to_string(rec.restarts) + " of " +
                            std::to_string(policy_.max_replica_restarts) + ").";
  Changed("restart", rec.task_name + " restarted in place " + count);
  Log("Restarting replica " + rec.task_name + " " + count);
  Act(JobActionKind::kRestartReplica, rec.pool, rec.index);
}

void JobMachine::ReplicaRestarted(const JobInput& in) {
  ReplicaRecord* rec = FindReplica(in.pool, in.index);
  if (rec == nullptr || rec->state != ReplicaState::kRestarting) return;
  rec->state = ReplicaState::kRunning;
  rec->start_time = now_;
  rec->end_time = 0;
  rec->exit_code.reset();
  rec->signal.reset();
  Changed();
  // An ending decided while it was coming back: it must go down with the others.
  if (job().ending) Act(JobActionKind::kStop);
}

void JobMachine::RestartFailed(const JobInput& in) {
  ReplicaRecord* rec = FindReplica(in.pool, in.index);
  if (rec == nullptr || rec->state != ReplicaState::kRestarting) return;
  rec->state = ReplicaState::kFailed;  // It is not coming back in place.
  rec->end_time = now_;
  Changed("replica", rec->task_name + " could not be restarted in place: " + in.message);
  if (job().ending) return MaybeFinish();
  Log("Could not restart the replica in place: " + in.message, "ERROR");
  RetryOrFail(JobError{kErrorCodeInternal, in.message});
}

void JobMachine::RetryOrFail(JobError error) {
  // Preempted attempts are not failures: they do not use up retries.
  const int failed_attempts = job().attempt - job().preemptions;
  if (job().spec.scheduling.disable_retries || failed_attempts >= policy_.max_attempts) {
    return BeginEnding(Ending{EndingKind::kFail, std::move(error)}, "the job failed");
  }
  Log("Retrying the job (attempt " + std::to_string(failed_attempts + 1) + " of " +
      std::to_string(policy_.max_attempts) + ").");
  BeginEnding(Ending{EndingKind::kRetry, std::move(error)}, "the job is retried");
}

void JobMachine::BeginEnding(Ending ending, const std::string& why) {
  job().ending = std::move(ending);
  Changed("ending", "Stopping attempt " + std::to_string(job().attempt) + ": " + why + ".");
  if (AnyLive()) Act(JobActionKind::kStop);
  MaybeFinish();
}

void JobMachine::MaybeFinish() {
  if (IsTerminal(job().state)) return;
  for (const auto& r : job().replicas) {
    if (!ReplicaDone(r)) return;
  }
  if (!job().ending) {
    // Every replica ended but none decided the outcome. Unreachable with a primary in
    // pool 0; guarded so a job never hangs.
    return Finish(
        JobState::kFailed,
        JobError{kErrorCodeInternal, "All replicas exited without the primary replica finishing."});
  }
  Ending ending = *job().ending;
  switch (ending.kind) {
    case EndingKind::kRetry:
      Act(JobActionKind::kCleanup);  // Names the attempt that ended.
      return StartAttempt(job().attempt + 1);
    case EndingKind::kPreempt:
      return Requeue();
    case EndingKind::kSucceed:
      return Finish(JobState::kSucceeded, std::nullopt);
    case EndingKind::kFail:
      return Finish(JobState::kFailed, ending.error);
    case EndingKind::kCancel:
      return Finish(JobState::kCancelled, ending.error);
  }
}

void JobMachine::Finish(JobState state, std::optional<JobError> error) {
  job().state = state;
  job().error = std::move(error);
  job().end_time = job().phases.finished = end_time_ > 0 ? end_time_ : now_;
  for (auto& r : job().replicas) {
    if (!ReplicaDone(r)) r.state = ReplicaState::kStopped;
  }
  job().ending.reset();
  Changed("state", std::string("Job ") + JobStateName(state) + ".");
  Log("Tearing down training program.");
  if (state == JobState::kSucceeded) {
    Log("Job completed successfully.");
  } else if (state == JobState::kCancelled) {
    Log("Job was cancelled.");
  } else {
    Log("Job failed.", "ERROR");
  }
  if (job().attempt > 0) Act(JobActionKind::kCleanup);
}

void JobMachine::Requeue() {
  Act(JobActionKind::kCleanup);  // Names the attempt that ended.
  job().state = JobState::kQueued;
  job().ending.reset();
  job().grants.clear();
  job().preemptions += 1;
  // Back of the queue: ahead of the job it made room for, it would take the room back.
  job().phases.queued = now_;
  for (auto& r : job().replicas) {
    if (!ReplicaDone(r)) r.state = ReplicaState::kStopped;
  }
  Changed("state", "Job was preempted and is queued again.");
  Log("Job was preempted; it is queued again and restarts as attempt " +
      std::to_string(job().attempt + 1) + ".");
  Act(JobActionKind::kRequestAdmission);
}

void JobMachine::Cancel(const std::string& reason) {
  const std::string why = reason.empty() ? "Job was cancelled by a user request." : reason;
  const bool undecided = !job().ending || job().ending->kind == EndingKind::kRetry ||
                         job().ending->kind == EndingKind::kPreempt;
  if (!undecided) return;  // Already decided.
  job().cancel_requested = true;
  if (job().state == JobState::kQueued) {
    return Finish(JobState::kCancelled, JobError{kErrorCodeCancelled, why});
  }
  job().state = JobState::kCancelling;
  job().ending = Ending{EndingKind::kCancel, JobError{kErrorCodeCancelled, why}};
  Changed("state", "Job is cancelling: " + why);
  Log(why);
  // A launch still in flight is stopped when its kAttemptStarted arrives.
  if (AnyLive()) Act(JobActionKind::kStop);
  MaybeFinish();
}

void JobMachine::Unrunnable(const std::string& why) {
  const std::string message = "Internal error: the stored job can no longer be run: " + why;
  Log(message, "ERROR");
  Finish(JobState::kFailed, JobError{kErrorCodeInternal, message});
}

void JobMachine::TimerFired(TimerKind timer) {
  const Job& j = job();
  const Scheduling& s = j.spec.scheduling;
  if (timer == TimerKind::kMaxWait) {
    bool waiting = j.state == JobState::kQueued || j.state == JobState::kPreparing;
    if (waiting && j.start_time == 0 && s.max_wait > 0 && now_ >= j.create_time + s.max_wait) {
      Cancel("Job was cancelled: it did not start within its maximum wait time.");
    }
    return;
  }
  if (j.start_time > 0 && s.timeout > 0 && now_ >= j.start_time + s.timeout) {
    // Counted from entering RUNNING (ml v1 maxRunningTime; Vertex timeout); a job past
    // it is cancelled, as Vertex was observed to do.
    Cancel("Job was cancelled: it exceeded its timeout of " + FormatDuration(s.timeout) + ".");
  }
}

void JobMachine::ArmTimers() {
  const Job& j = job();
  const Scheduling& s = j.spec.scheduling;
  if (s.max_wait > 0 && j.start_time == 0)
    ArmTimer(TimerKind::kMaxWait, j.create_time + s.max_wait);
  if (s.timeout > 0 && j.start_time > 0) ArmTimer(TimerKind::kTimeout, j.start_time + s.timeout);
}

const ObservedReplica* FindObserved(const std::vector<ObservedReplica>& observed,
                                    const ReplicaRecord& r) {
  for (const auto& o : observed) {
    if (o.pool == r.pool && o.index == r.index) return &o;
  }
  return nullptr;
}

void JobMachine::Recovered(const std::vector<ObservedReplica>& observed) {
  if (job().state == JobState::kQueued) {
    ArmTimers();
    return Act(JobActionKind::kRequestAdmission);
  }
  if (job().state == JobState::kCancelling && !job().ending) {
    // A record written before endings were stored: CANCELLING meant a user cancel.
    job().ending = Ending{EndingKind::kCancel,
                          JobError{kErrorCodeCancelled, "Job was cancelled by a user request."}};
    Changed();
  }
  ArmTimers();
  if (AnyPending()) return RecoverPendingLaunch(observed);
  Log("Trainyard restarted; re-attached to the running job.");
  ReplayObserved(observed);
}

void JobMachine::ReplayObserved(const std::vector<ObservedReplica>& observed) {
  // Replay what happened to each replica while no daemon watched.
  for (size_t i = 0; i < job().replicas.size(); ++i) {
    ReplicaRecord r = job().replicas[i];
    if (!ReplicaLive(r)) continue;
    const ObservedReplica* o = FindObserved(observed, r);
    if (o != nullptr && o->running) {
      if (r.state == ReplicaState::kRestarting) {
        JobInput back;
        back.pool = r.pool;
        back.index = r.index;
        ReplicaRestarted(back);
      }
      continue;
    }
    if (r.state == ReplicaState::kRestarting && !job().ending) {
      // The restart was decided and committed; whether it ran is unknown: do it (again).
      Act(JobActionKind::kRestartReplica, r.pool, r.index);
      continue;
    }
    JobInput exited;
    exited.kind = JobInputKind::kReplicaExited;
    exited.pool = r.pool;
    exited.index = r.index;
    if (r.state == ReplicaState::kRestarting) job().replicas[i].state = ReplicaState::kRunning;
    if (o != nullptr) {
      exited.exit_code = o->exit_code;
      exited.signal = o->signal;
      exited.oom_killed = o->oom_killed;
      exited.exit_time = o->finished_at;
    } else {
      exited.exit_code = 137;  // Gone without a trace while we were down: killed.
      exited.signal = 9;
    }
    ReplicaExited(exited);
    if (IsTerminal(job().state) || AnyPending()) return;  // Finished, or a new attempt.
  }
  if (job().ending && AnyLive()) Act(JobActionKind::kStop);
  MaybeFinish();
}

void JobMachine::RecoverPendingLaunch(const std::vector<ObservedReplica>& observed) {
  // A gang start creates every replica, then starts them: one found started (running,
  // or exited with its own code) means the program ran, so the attempt is taken over
  // as it is, never launched again over it (the training would run twice).
  size_t started = 0;
  for (const auto& r : job().replicas) {
    const ObservedReplica* o = FindObserved(observed, r);
    if (o != nullptr && !o->never_started()) ++started;
  }
  if (started > 0) return AdoptInterruptedLaunch(observed, started);
  if (job().ending) {
    // Cancelled while launching and the launch never completed: nothing to stop.
    if (!observed.empty()) Act(JobActionKind::kCleanup);
    for (auto& r : job().replicas) {
      if (r.state == ReplicaState::kPending) r.state = ReplicaState::kStopped;
    }
    Changed();
    return MaybeFinish();
  }
  if (observed.empty()) {
    // Nothing of the attempt exists: its launch never ran. Run it now.
    Log("The launch of attempt " + std::to_string(job().attempt) +
        " was interrupted by a restart; launching it.");
    return Act(JobActionKind::kLaunch);
  }
  // Created, none started: remove it and start afresh under a new attempt (new names).
  Log("The launch of attempt " + std::to_string(job().attempt) +
      " was interrupted by a restart before any replica started; relaunching.");
  Act(JobActionKind::kStop);
  Act(JobActionKind::kCleanup);
  StartAttempt(job().attempt + 1);
}

void JobMachine::AdoptInterruptedLaunch(const std::vector<ObservedReplica>& observed,
                                        size_t started) {
  const size_t total = job().replicas.size();
  bool all_running = started == total;
  for (const auto& r : job().replicas) {
    const ObservedReplica* o = FindObserved(observed, r);
    all_running = all_running && o != nullptr && o->running;
  }
  if (!all_running) {
    Log("The launch of attempt " + std::to_string(job().attempt) + " had started " +
        std::to_string(started) + " of " + std::to_string(total) +
        " replicas when Trainyard stopped; taking them over" +
        (started < total ? ", and starting the rest in place." : "."));
  }
  JobInput in;
  in.kind = JobInputKind::kAttemptStarted;
  in.attempt = job().attempt;
  AttemptStarted(in);
  for (auto& r : job().replicas) {
    const ObservedReplica* o = FindObserved(observed, r);
    if (o != nullptr && o->started_at > 0 && o->started_at <= now_) r.start_time = o->started_at;
    // Never started: started now, in place (its peers know its name and address);
    // once stopping, it never runs.
    if (o != nullptr && o->never_started()) {
      r.state = job().ending ? ReplicaState::kStopped : ReplicaState::kRestarting;
    }
  }
  if (all_running) return;
  ReplayObserved(observed);
}

}  // namespace

JobDecision DecideJob(const Job& job, const JobInput& input, const JobPolicy& policy,
                      TimeMicros now) {
  JobMachine machine(job, policy, now);
  machine.Apply(input);
  return machine.Take();
}

}  // namespace ty::machines
