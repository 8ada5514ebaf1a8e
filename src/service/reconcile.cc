// The reconcile loop's state transitions (loop thread only). See job.h for the
// state machine and loop.h for the commit-then-act rule every function follows.
#include <spdlog/spdlog.h>

#include <filesystem>

#include "service/launch_plan.h"
#include "service/loop.h"

namespace ty::service {
namespace {

using model::Job;
using model::JobState;
using model::ReplicaRecord;
using model::ReplicaState;

constexpr int kCodeCancelled = 1;
constexpr int kCodeInvalidArgument = 3;  // Vertex reports user-code failures with code 3.
constexpr int kCodeFailedPrecondition = 9;
constexpr int kCodeInternal = 13;
constexpr size_t kErrorLogLines = 10;

const char* SignalName(int sig) {
  switch (sig) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 6: return "SIGABRT";
    case 9: return "SIGKILL";
    case 11: return "SIGSEGV";
    case 15: return "SIGTERM";
    default: return "signal";
  }
}

bool IsPrimary(const ReplicaRecord& r) { return r.pool == 0 && r.index == 0; }

bool ReplicaDone(const ReplicaRecord& r) {
  return r.state == ReplicaState::kSucceeded || r.state == ReplicaState::kFailed ||
         r.state == ReplicaState::kStopped;
}

}  // namespace

void JobService::Loop::ServiceLog(const Job& job, const std::string& message,
                                  const std::string& severity) {
  logs::LogEntry entry;
  entry.time = clock_->Now();
  entry.task = "service";
  entry.stream = logs::LogStream::kService;
  entry.severity = severity;
  entry.message = message;
  logs_->Append(job.uid, entry);
}

Status JobService::Loop::Commit(Job& job, const std::string& event_kind, const std::string& event) {
  TimeMicros now = clock_->Now();
  job.update_time = now;
  Status s = store_->UpdateJob(job);
  if (!s.ok()) {
    // The record on disk is the truth: without it no side effect may start.
    spdlog::error("job {}: store update failed: {}", job.uid, s.ToString());
    return s;
  }
  if (!event.empty()) {
    store_->AppendEvent(job.uid, {now, event_kind, event}).IgnoreError();
  }
  std::lock_guard<std::mutex> lock(mu_);
  jobs_[job.uid] = job;
  return Status::Ok();
}

void JobService::Loop::Admit(const std::string& uid) {
  Job* cur = Find(uid);
  if (!cur || cur->state != JobState::kQueued) return;
  Job job = *cur;
  job.state = JobState::kPreparing;
  job.phases.admitted = clock_->Now();
  if (!Commit(job, "state", "Job is preparing.").ok()) return;
  ServiceLog(job, "Waiting for job to be provisioned.");
  ArmTimers(job);
  StartAttempt(job);
}

void JobService::Loop::StartAttempt(Job& job) {
  job.attempt += 1;
  job.replicas = NewReplicaRecords(job, job.attempt);
  if (!Commit(job, "attempt", "Attempt " + std::to_string(job.attempt) + " is starting.").ok()) return;
  endings_.erase(job.uid);

  std::error_code ec;
  if (!options_.bucket_root.empty()) {
    std::filesystem::create_directories(options_.bucket_root, ec);
    for (const auto& bucket : BucketsOf(job.spec)) {
      std::filesystem::create_directories(std::filesystem::path(options_.bucket_root) / bucket, ec);
    }
  }
  executor::AttemptSpec spec = BuildAttemptSpec(job, LaunchPlanOptions{options_.bucket_root});
  ServiceLog(job, "Waiting for training program to start.");
  workers_->Submit([this, spec = std::move(spec)] {
    Status s = executor_->Launch(spec);
    if (!s.ok()) {
      executor::ExecutorEvent ev;
      ev.kind = executor::ExecutorEventKind::kLaunchFailed;
      ev.job_uid = spec.job_uid;
      ev.attempt = spec.attempt;
      ev.time = clock_->Now();
      ev.message = s.message();
      Post([this, ev] { OnExecutorEvent(ev); });
    }
  });
}

void JobService::Loop::OnExecutorEvent(const executor::ExecutorEvent& event) {
  Job* cur = Find(event.job_uid);
  if (!cur || cur->attempt != event.attempt || model::IsTerminal(cur->state)) return;
  Job job = *cur;
  switch (event.kind) {
    case executor::ExecutorEventKind::kAttemptStarted:
      OnAttemptStarted(job, event);
      break;
    case executor::ExecutorEventKind::kLaunchFailed:
      OnLaunchFailed(job, event.message);
      break;
    case executor::ExecutorEventKind::kReplicaExited:
      OnReplicaExited(job, event);
      break;
  }
}

void JobService::Loop::OnAttemptStarted(Job& job, const executor::ExecutorEvent& event) {
  for (auto& r : job.replicas) {
    if (r.state == ReplicaState::kPending) {
      r.state = ReplicaState::kRunning;
      r.start_time = event.time;
    }
  }
  job.phases.image_ready = event.image_ready_time ? event.image_ready_time : event.time;
  job.phases.all_running = event.time;
  bool cancelling = job.state == JobState::kCancelling || endings_.count(job.uid);
  if (!cancelling) {
    job.state = JobState::kRunning;
  }
  bool first_start = job.start_time == 0 && !cancelling;
  if (first_start) job.start_time = event.time;
  // The executor may say how it started them (e.g. from warm sandboxes).
  const std::string running =
      event.message.empty() ? "Job is running." : "Job is running (replicas " + event.message + ").";
  if (!Commit(job, "state", cancelling ? "Replicas started while cancelling." : running).ok()) return;
  if (cancelling) {
    StopAttempt(job);
    return;
  }
  ServiceLog(job, running);
  if (first_start) ArmTimers(job);
}

void JobService::Loop::OnLaunchFailed(Job& job, const std::string& message) {
  if (job.state == JobState::kCancelling) {
    Finish(job, JobState::kCancelled, model::JobError{kCodeCancelled, "Job was cancelled by a user request."});
    return;
  }
  ServiceLog(job, "Could not start the training program: " + message, "ERROR");
  Finish(job, JobState::kFailed, model::JobError{kCodeFailedPrecondition, message});
}

std::string JobService::Loop::FailureMessage(const Job& job, const ReplicaRecord& r,
                                             const executor::ExecutorEvent& event) {
  std::string name = model::ReplicaDisplayName(job.dialect, r.pool, r.index, job.spec.use_chief_in_tf_config);
  std::string msg;
  if (event.oom_killed) {
    msg = "The replica " + name + " ran out of memory and exited with a non-zero status of " +
          std::to_string(event.exit_code) + ".";
  } else {
    msg = "The replica " + name + " exited with a non-zero status of " + std::to_string(event.exit_code) + ".";
    if (event.signal) {
      msg += " Termination reason: killed by signal " + std::to_string(*event.signal) + " (" +
             SignalName(*event.signal) + ").";
    } else {
      msg += " Termination reason: Error.";
    }
  }
  std::vector<logs::LogEntry> tail = logs_->Tail(job.uid, r.task_name, kErrorLogLines);
  if (!tail.empty()) {
    msg += "\nLast log lines of " + r.task_name + ":";
    for (const auto& e : tail) msg += "\n" + e.message;
  }
  return msg;
}

void JobService::Loop::OnReplicaExited(Job& job, const executor::ExecutorEvent& event) {
  ReplicaRecord* rec = nullptr;
  for (auto& r : job.replicas) {
    if (r.pool == event.pool && r.index == event.index) rec = &r;
  }
  if (!rec || ReplicaDone(*rec)) return;
  rec->exit_code = event.exit_code;
  rec->signal = event.signal;
  rec->end_time = event.time;
  bool stopping = endings_.count(job.uid) || job.state == JobState::kCancelling;
  if (event.exit_code == 0) {
    rec->state = ReplicaState::kSucceeded;
  } else {
    rec->state = stopping ? ReplicaState::kStopped : ReplicaState::kFailed;
  }
  std::string what = rec->task_name + " exited with status " + std::to_string(event.exit_code);
  if (!Commit(job, "replica", what).ok()) return;

  if (!stopping) {
    if (event.exit_code == 0) {
      if (IsPrimary(*rec)) {
        // The primary's success is the job's success; the others are shut down.
        BeginEnding(job, Ending{JobState::kSucceeded, std::nullopt, false});
        return;
      }
    } else {
      // spec §9: user-code exits 1-127 are permanent. Deaths by a signal the
      // service did not send (128+N, which covers 134/139: SIGABRT/SIGSEGV) may be
      // transient: the replica is restarted in place (up to max_replica_restarts),
      // then the whole job is retried (up to max_attempts). With
      // restartJobOnWorkerRestart any restart is a whole-job restart.
      bool retryable = event.signal.has_value() && !event.oom_killed;
      const model::Scheduling& sched = job.spec.scheduling;
      std::string message = FailureMessage(job, *rec, event);
      ServiceLog(job, message, "ERROR");
      if (retryable && !sched.disable_retries && !sched.restart_job_on_worker_restart &&
          rec->restarts < options_.max_replica_restarts) {
        RestartReplica(job, *rec);
        return;
      }
      if (retryable) {
        RetryJobOrFail(job, model::JobError{kCodeInvalidArgument, message});
      } else {
        BeginEnding(job, Ending{JobState::kFailed, model::JobError{kCodeInvalidArgument, message}, false});
      }
      return;
    }
  }
  MaybeFinishEnding(job);
}

void JobService::Loop::RestartReplica(Job& job, ReplicaRecord& rec) {
  rec.restarts += 1;
  rec.state = ReplicaState::kRunning;
  rec.start_time = clock_->Now();
  rec.end_time = 0;
  std::string count = "(restart " + std::to_string(rec.restarts) + " of " +
                      std::to_string(options_.max_replica_restarts) + ").";
  if (!Commit(job, "restart", rec.task_name + " restarted in place " + count).ok()) return;
  ServiceLog(job, "Restarting replica " + rec.task_name + " " + count);
  std::string uid = job.uid;
  int attempt = job.attempt, pool = rec.pool, index = rec.index;
  workers_->Submit([this, uid, attempt, pool, index] {
    Status s = executor_->RestartReplica(uid, attempt, pool, index);
    if (s.ok()) return;
    // It could not come back in place: what remains is a whole-job retry.
    Post([this, uid, attempt, pool, index, s] {
      Job* cur = Find(uid);
      if (!cur || cur->attempt != attempt || model::IsTerminal(cur->state) || endings_.count(uid)) return;
      Job job = *cur;
      for (auto& r : job.replicas) {
        if (r.pool == pool && r.index == index) {
          r.state = ReplicaState::kFailed;  // It is not coming back in place.
          r.end_time = clock_->Now();
        }
      }
      ServiceLog(job, "Could not restart the replica in place: " + s.message(), "ERROR");
      RetryJobOrFail(job, model::JobError{kCodeInternal, s.message()});
    });
  });
}

void JobService::Loop::RetryJobOrFail(Job& job, model::JobError error) {
  if (job.spec.scheduling.disable_retries || job.attempt >= options_.max_attempts) {
    BeginEnding(job, Ending{JobState::kFailed, std::move(error), false});
    return;
  }
  ServiceLog(job, "Retrying the job (attempt " + std::to_string(job.attempt + 1) + " of " +
                      std::to_string(options_.max_attempts) + ").");
  BeginEnding(job, Ending{JobState::kRunning, std::nullopt, true});
}

void JobService::Loop::BeginEnding(Job& job, Ending ending) {
  endings_[job.uid] = std::move(ending);
  StopAttempt(job);
  MaybeFinishEnding(job);
}

void JobService::Loop::MaybeFinishEnding(Job& job) {
  for (const auto& r : job.replicas) {
    if (!ReplicaDone(r)) return;
  }
  auto it = endings_.find(job.uid);
  if (it == endings_.end()) {
    if (job.state != JobState::kCancelling) {
      // Every replica ended but none decided the outcome (e.g. all non-primary).
      // Unreachable with a primary in pool 0; guard anyway so a job never hangs.
      Finish(job, JobState::kFailed, model::JobError{kCodeInternal, "All replicas exited without the primary replica finishing."});
      return;
    }
    Finish(job, JobState::kCancelled, model::JobError{kCodeCancelled, "Job was cancelled by a user request."});
    return;
  }
  Ending ending = it->second;
  endings_.erase(it);
  if (ending.retry) {
    CleanupAttempt(job.uid, job.attempt);  // Before StartAttempt moves to the next one.
    StartAttempt(job);
    return;
  }
  Finish(job, ending.state, ending.error);
}

void JobService::Loop::Finish(Job& job, JobState state, std::optional<model::JobError> error) {
  TimeMicros now = clock_->Now();
  job.state = state;
  job.error = std::move(error);
  job.end_time = job.phases.finished = now;
  for (auto& r : job.replicas) {
    if (!ReplicaDone(r)) r.state = ReplicaState::kStopped;
  }
  endings_.erase(job.uid);
  std::string event = std::string("Job ") + model::JobStateName(state) + ".";
  if (!Commit(job, "state", event).ok()) return;
  ServiceLog(job, "Tearing down training program.");
  if (state == JobState::kSucceeded) {
    ServiceLog(job, "Job completed successfully.");
  } else if (state == JobState::kCancelled) {
    ServiceLog(job, "Job was cancelled.");
  } else {
    ServiceLog(job, "Job failed.", "ERROR");
  }
  if (job.attempt > 0) CleanupAttempt(job.uid, job.attempt);
}

void JobService::Loop::StopAttempt(const Job& job) {
  std::string uid = job.uid;
  int attempt = job.attempt;
  if (attempt == 0) return;
  DurationMicros grace = options_.stop_grace;
  workers_->Submit([this, uid, attempt, grace] {
    Status s = executor_->Stop(uid, attempt, grace);
    if (!s.ok()) spdlog::warn("job {} attempt {}: stop failed: {}", uid, attempt, s.ToString());
  });
}

void JobService::Loop::CleanupAttempt(const std::string& uid, int attempt) {
  workers_->Submit([this, uid, attempt] {
    Status s = executor_->Cleanup(uid, attempt);
    if (!s.ok()) spdlog::warn("job {} attempt {}: cleanup failed: {}", uid, attempt, s.ToString());
  });
}

Status JobService::Loop::CancelOnLoop(const std::string& uid, const std::string& reason) {
  Job* cur = Find(uid);
  if (!cur) return NotFound("job does not exist");
  if (model::IsTerminal(cur->state) || cur->state == JobState::kCancelling) return Status::Ok();
  Job job = *cur;
  job.cancel_requested = true;
  if (job.state == JobState::kQueued) {
    Finish(job, JobState::kCancelled, model::JobError{kCodeCancelled, reason});
    return Status::Ok();
  }
  job.state = JobState::kCancelling;
  RETURN_IF_ERROR(Commit(job, "state", "Job is cancelling: " + reason));
  ServiceLog(job, reason);
  endings_[job.uid] = Ending{JobState::kCancelled, model::JobError{kCodeCancelled, reason}, false};
  // A launch still in flight is stopped when kAttemptStarted arrives.
  bool started = false;
  for (const auto& r : job.replicas) started |= r.state != ReplicaState::kPending;
  if (started) StopAttempt(job);
  MaybeFinishEnding(job);
  return Status::Ok();
}

void JobService::Loop::ArmTimers(const Job& job) {
  std::string uid = job.uid;
  const model::Scheduling& s = job.spec.scheduling;
  if (s.max_wait > 0 && job.start_time == 0) {
    // Not running by then (still QUEUED/PREPARING): cancelled (ml v1 maxWaitTime).
    ScheduleAt(job.create_time + s.max_wait, [this, uid] {
      Job* cur = Find(uid);
      if (cur && (cur->state == JobState::kQueued || cur->state == JobState::kPreparing)) {
        CancelOnLoop(uid, "Job was cancelled: it did not start within its maximum wait time.").IgnoreError();
      }
    });
  }
  if (s.timeout > 0 && job.start_time > 0) {
    // Counted from entering RUNNING (ml v1 maxRunningTime; Vertex timeout); a job
    // past it is cancelled, as Vertex was observed to do.
    ScheduleAt(job.start_time + s.timeout, [this, uid, timeout = s.timeout] {
      Job* cur = Find(uid);
      if (cur && !model::IsTerminal(cur->state)) {
        CancelOnLoop(uid, "Job was cancelled: it exceeded its timeout of " + FormatDuration(timeout) + ".").IgnoreError();
      }
    });
  }
}

}  // namespace ty::service
