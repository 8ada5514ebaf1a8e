#include "service/job_controller.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <tuple>

#include "common/files.h"
#include "machines/trial_jobs.h"
#include "model/spec_record.h"
#include "service/job_logs.h"
#include "service/launch_plan.h"
#include "wire/dialect.h"

namespace ty::service {
namespace {

constexpr size_t kErrorLogLines = 10;

machines::JobInput InputOf(const executor::ExecutorEvent& event) {
  machines::JobInput in;
  in.attempt = event.attempt;
  in.pool = event.pool;
  in.index = event.index;
  in.message = event.message;
  switch (event.kind) {
    case executor::ExecutorEventKind::kAttemptStarted:
      in.kind = machines::JobInputKind::kAttemptStarted;
      in.image_ready_time = event.image_ready_time;
      in.images = event.images;
      break;
    case executor::ExecutorEventKind::kLaunchFailed:
    case executor::ExecutorEventKind::kLaunchWaiting:  // Not fed (OnExecutorEvent).
      in.kind = machines::JobInputKind::kLaunchFailed;
      break;
    case executor::ExecutorEventKind::kAttemptPreempted:
      in.kind = machines::JobInputKind::kBackendPreempted;
      break;
    case executor::ExecutorEventKind::kReplicaExited:
      in.kind = machines::JobInputKind::kReplicaExited;
      in.exit_code = event.exit_code;
      in.signal = event.signal;
      in.oom_killed = event.oom_killed;
      in.exit_time = event.finished_at;
      break;
  }
  return in;
}

}  // namespace

JobController::JobController(LoopCore* core, jobstore::JobStore* store, Backends* backends,
                             logs::LogStore* logs, UidSource* uids, ControllerOptions options)
    : core_(core),
      store_(store),
      backends_(backends),
      logs_(logs),
      uids_(uids),
      options_(std::move(options)) {
  core_->Receive<JobInputMessage>([this](const JobInputMessage& m) { Deliver(m.uid, m.input); });
  core_->Receive<SubmitTrialJob>([this](const SubmitTrialJob& m) { SubmitTrial(m.job, 0); });
}

void JobController::SubmitTrial(const model::Job& job, int tries) {
  Result<model::Job> created = Submit(job);
  if (core_->dead()) return;
  const bool retry = !created.ok() && MeaningOf(created.status()) == CommitFailure::kRetry;
  if (retry) {
    NoteWriteFailed(job.uid, created.status(), /*first_for_job=*/tries == 0);
    core_->At(core_->clock()->Now() + RetryDelay(tries + 1),
              [this, job, tries] { SubmitTrial(job, tries + 1); });
    return;
  }
  if (tries > 0) NoteWritesLanded(job.uid);
  if (!created.ok()) {
    core_->Send(TrialJobRefused{job.study_uid, job.trial_id, created.status().message()});
  }
}

void JobController::AssertOnLoop() const {
  if (!core_->OnLoopThread()) {
    spdlog::critical("job controller called off the loop thread");
    std::abort();
  }
}

model::Job* JobController::Find(const std::string& uid) {
  auto it = live_.find(uid);
  return it == live_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------
// Start-up

void JobController::SetAsideUnrunnable(model::Job job, const std::string& why) {
  problems_.Add("job", job.uid, why);
  unrunnable_.emplace_back(std::move(job), why);
}

Status JobController::Load() {
  // Only jobs that are not finished: the history stays in the store (bounded memory).
  ASSIGN_OR_RETURN(std::vector<model::Job> stored, store_->ListLiveJobs());
  ASSIGN_OR_RETURN(std::string last_uid, store_->LastUid());
  uids_->Reserve(last_uid);
  for (auto& job : stored) {
    // What its last commit said, if the daemon died before writing it.
    WriteMissingOutboxLines(logs_, core_->clock()->Now(), job.uid, job.outbox);
    if (model::IsTerminal(job.state)) {  // Finished: only its last lines were owed.
      ForgetWrittenLines(job);
      continue;
    }
    Result<model::JobSpec> spec = wire::RestoreSpec(job);
    if (!spec.ok()) {
      SetAsideUnrunnable(std::move(job),
                         "its spec cannot be read (" + spec.status().message() + ")");
      continue;
    }
    job.spec = std::move(spec).value();
    if (job.spec.study) continue;  // A study: the study controller's.
    Status limits = model::CheckSpecLimits(job.spec, options_.limits);
    if (!limits.ok()) {
      SetAsideUnrunnable(std::move(job),
                         "it fails this server's checks (" + limits.message() + ")");
      continue;
    }
    // Admitted before the restart: it holds its grants (queued jobs ask again when
    // Recover replays them).
    if (job.state != model::JobState::kQueued) {
      core_->Send(JobLoaded{std::make_shared<const model::Job>(job)});  // It holds its grants.
    }
    Publish(job);
    live_[job.uid] = std::move(job);
  }
  return Status::Ok();
}

void JobController::Recover(const std::vector<executor::ObservedReplica>& observed) {
  AssertOnLoop();
  // Failed first, like any outcome: decided by the machine, committed, then acted on.
  // What they left on the executor is then a stale attempt, removed below.
  for (auto& [job, why] : unrunnable_) {
    const std::string uid = job.uid;
    live_[uid] = std::move(job);
    machines::JobInput in;
    in.kind = machines::JobInputKind::kUnrunnable;
    in.message = why;
    Deliver(uid, std::move(in));
    live_.erase(uid);  // Never run, even if its failure could not be recorded.
  }
  unrunnable_.clear();
  using Attempt = std::pair<std::string, int>;
  std::map<Attempt, std::vector<model::ObservedReplica>> by_attempt;
  for (const auto& o : observed) by_attempt[{o.job_uid, o.attempt}].push_back(o);
  std::set<Attempt> in_use;
  std::vector<std::string> uids;
  for (const auto& [uid, job] : live_) {
    uids.push_back(uid);
    in_use.insert({uid, job.attempt});
  }
  // Leftovers of finished jobs or superseded attempts, on whichever backend holds
  // them (each finds nothing of the others').
  for (const auto& [attempt, replicas] : by_attempt) {
    if (in_use.count(attempt)) continue;
    const auto [uid, n] = attempt;
    for (const auto& b : backends_->all()) {
      core_->Blocking([this, ex = b->executor, uid = uid, n = n] {
        ex->Stop(uid, n, options_.stop_grace).IgnoreError();
        ex->Cleanup(uid, n).IgnoreError();
      });
    }
  }
  for (const std::string& uid : uids) {
    model::Job* job = Find(uid);
    if (job == nullptr) continue;
    machines::JobInput in;
    in.kind = machines::JobInputKind::kRecovered;
    in.attempt = job->attempt;
    in.observed = by_attempt[{uid, job->attempt}];
    Deliver(uid, std::move(in));
  }
}

// ---------------------------------------------------------------------------
// Inputs

Result<model::Job> JobController::Submit(model::Job job) {
  AssertOnLoop();
  if (job.uid.empty()) job.uid = uids_->Next();
  job.state = model::JobState::kQueued;
  job.spec_record = model::EncodeSpecRecord(job.spec);
  machines::JobInput in;
  in.kind = machines::JobInputKind::kSubmitted;
  machines::JobDecision d = machines::DecideJob(job, in, options_.policy, core_->clock()->Now());
  model::Job created = d.job;
  RETURN_IF_ERROR(SubmitOutcome(CommitThenAct(std::move(d), /*create=*/true), job.dialect));
  return created;
}

Status JobController::Cancel(const std::string& uid, const std::string& reason) {
  AssertOnLoop();
  if (Find(uid) == nullptr) {
    // Finished (cancel is then a no-op, as gcloud documents) or unknown.
    Result<model::Job> stored = store_->GetJob(uid);
    if (stored.ok()) return Status::Ok();
    return stored.status().code() == StatusCode::kNotFound
               ? NotFound("job " + uid + " does not exist.")
               : stored.status();
  }
  machines::JobInput in;
  in.kind = machines::JobInputKind::kCancel;
  in.message = reason;
  // The caller hears whether the cancel was recorded: one whose write failed is lost,
  // and the client must know to send it again.
  return Decide(uid, std::move(in));
}

Status JobController::Delete(const std::string& uid) {
  AssertOnLoop();
  if (const model::Job* job = Find(uid)) {
    return FailedPrecondition("The CustomJob " + job->ResourceName() + " is in state " +
                              wire::StateWireName(job->dialect, job->state) +
                              "; only a finished job can be deleted. Cancel it first.");
  }
  Status s = store_->DeleteJob(uid, core_->clock()->Now());
  if (s.code() == StatusCode::kNotFound) return NotFound("job " + uid + " does not exist.");
  RETURN_IF_ERROR(s);
  logs_->Delete(uid).IgnoreError();
  return Status::Ok();
}

void JobController::OnExecutorEvent(const executor::ExecutorEvent& event) {
  if (event.kind == executor::ExecutorEventKind::kLaunchWaiting) {
    // Nothing to decide: the job stays launching, and its log says why it waits (a
    // WARNING only for trouble a user may act on: ExecutorEvent::trouble).
    core_->Post([this, event] {
      if (Find(event.job_uid) != nullptr) {
        ServiceLog(event.job_uid, event.message, event.trouble ? "WARNING" : "INFO");
      }
    });
    return;
  }
  core_->Post([this, event] {
    machines::JobInput in = InputOf(event);
    if (in.kind == machines::JobInputKind::kReplicaExited && event.exit_code != 0) {
      // The failure message quotes the replica's last lines: read them here, at the
      // edge, so the decision stays pure.
      if (const model::Job* job = Find(event.job_uid)) {
        for (const auto& r : job->replicas) {
          if (r.pool != event.pool || r.index != event.index) continue;
          for (const auto& e : logs_->Tail(job->uid, r.task_name, kErrorLogLines)) {
            in.log_tail.push_back(e.message);
          }
        }
      }
    }
    Deliver(event.job_uid, std::move(in));
  });
}

Status JobController::Decide(const std::string& uid, machines::JobInput input) {
  AssertOnLoop();
  model::Job* job = Find(uid);
  if (job == nullptr) return Status::Ok();
  // A failed write is logged inside, and nothing was acted on.
  return CommitThenAct(machines::DecideJob(*job, input, options_.policy, core_->clock()->Now()),
                       /*create=*/false);
}

void JobController::Deliver(const std::string& uid, machines::JobInput input) {
  if (held_.Holding(uid)) {
    // Behind the held ones: the machine sees a job's inputs in the order they came.
    if (!held_.Add(uid, std::move(input))) {
      spdlog::error("job {}: more than {} inputs wait for the store; the oldest is lost", uid,
                    HeldInputs::kMaxPerJob);
    }
    return;
  }
  Status s = Decide(uid, input);
  // A stopping service commits nothing more: the next daemon recovers from the store.
  if (s.ok() || MeaningOf(s) == CommitFailure::kDrop || core_->dead()) return;
  held_.Add(uid, std::move(input));
  NoteWriteFailed(uid, s, /*first_for_job=*/true);
  ScheduleRetry(uid);
}

void JobController::ScheduleRetry(const std::string& uid) {
  const int tries = held_.CountTry(uid);
  core_->At(core_->clock()->Now() + RetryDelay(tries), [this, uid] { RetryHeld(uid); });
}

void JobController::RetryHeld(const std::string& uid) {
  while (std::optional<machines::JobInput> next = held_.Front(uid)) {
    Status s = Decide(uid, *next);
    if (!s.ok() && MeaningOf(s) == CommitFailure::kRetry) {
      NoteWriteFailed(uid, s, /*first_for_job=*/false);
      return ScheduleRetry(uid);
    }
    held_.Pop(uid);
  }
  NoteWritesLanded(uid);
}

void JobController::NoteWriteFailed(const std::string& uid, const Status& why, bool first_for_job) {
  writes_.Failed("job", uid, why, core_->clock()->Now(), first_for_job);
}

void JobController::NoteWritesLanded(const std::string& uid) { writes_.Landed("job", uid); }

StoreWriteHealth JobController::store_health() const { return writes_.health(); }

// ---------------------------------------------------------------------------
// Commit, then act

Status JobController::CommitThenAct(machines::JobDecision d, bool create) {
  AssertOnLoop();
  if (core_->dead()) return Unavailable("the service is shutting down");
  model::Job& job = d.job;
  if (d.changed) {
    for (auto& r : job.replicas) {
      if (r.handle.empty()) r.handle = executor::ReplicaName(job.uid, r.attempt, r.pool, r.index);
    }
    Status s = store_->CommitJob(job, create, d.history);
    if (!s.ok()) {
      // The record on disk is the truth: without it no side effect may start.
      // A submit's failure goes back to its caller; another's input waits (Deliver).
      // A store that cannot write is said once by the caller's retry (or its 429).
      if (create && s.code() != StatusCode::kAlreadyExists &&
          MeaningOf(s) == CommitFailure::kDrop && !core_->dead()) {
        spdlog::error("job {}: store write failed: {}", job.uid, s.ToString());
      }
      return s;
    }
    // The service stopped while the record was written: it acts on nothing more (the
    // next daemon recovers from the store). Crash-point tests stop it so at a write.
    if (core_->dead()) return Status::Ok();
    const model::Job* before = create ? nullptr : Find(job.uid);
    const model::JobState before_state = before ? before->state : model::JobState::kUnspecified;
    // A finished job leaves memory: from now on it is read from the store, which
    // already has this final record.
    Publish(job);
    if (model::IsTerminal(job.state)) {
      live_.erase(job.uid);
    } else {
      live_[job.uid] = job;
    }
    // Delivered after this task, so after the actions below (messages.h).
    core_->Send(JobCommitted{std::make_shared<const model::Job>(job), before_state});
    WriteOutbox(logs_, core_->clock()->Now(), job.uid, job.outbox);
    if (model::IsTerminal(job.state)) ForgetWrittenLines(job);
  }
  for (const machines::JobAction& a : d.actions) Perform(job, a);
  return Status::Ok();
}

void JobController::ForgetWrittenLines(const model::Job& finished) {
  if (finished.outbox.lines.empty()) return;
  model::Job record = finished;
  record.outbox.lines.clear();
  // A record that keeps them is read at the next start, which writes none twice.
  if (Status s = store_->UpdateJob(record); !s.ok() && !core_->dead()) {
    spdlog::warn(
        "job {}: its last lines are written; recording that failed ({}); the next "
        "start checks them again",
        finished.uid, s.message());
  }
}

void JobController::Perform(const model::Job& job, const machines::JobAction& a) {
  const std::string uid = job.uid;
  const int attempt = a.attempt;
  Backend& backend = backends_->For(job.project);
  executor::Executor* const ex = backend.executor;
  switch (a.kind) {
    case machines::JobActionKind::kRequestAdmission:
      return core_->Send(AdmissionWanted{std::make_shared<const model::Job>(job)});
    case machines::JobActionKind::kArmTimer:
      return core_->At(a.at, [this, uid, timer = a.timer] {
        machines::JobInput in;
        in.kind = machines::JobInputKind::kTimerFired;
        in.timer = timer;
        Deliver(uid, std::move(in));
      });
    case machines::JobActionKind::kLaunch:
      return Launch(job);
    case machines::JobActionKind::kStop:
      return core_->Blocking([this, ex, uid, attempt] {
        Status s = ex->Stop(uid, attempt, options_.stop_grace);
        if (!s.ok()) spdlog::warn("job {} attempt {}: stop failed: {}", uid, attempt, s.ToString());
      });
    case machines::JobActionKind::kCleanup:
      return core_->Blocking([ex, uid, attempt] {
        Status s = ex->Cleanup(uid, attempt);
        if (!s.ok())
          spdlog::warn("job {} attempt {}: cleanup failed: {}", uid, attempt, s.ToString());
      });
    case machines::JobActionKind::kRestartReplica:
      return core_->Blocking([this, ex, uid, attempt, pool = a.pool, index = a.index] {
        Status s = ex->RestartReplica(uid, attempt, pool, index);
        machines::JobInput in;
        in.kind = s.ok() ? machines::JobInputKind::kReplicaRestarted
                         : machines::JobInputKind::kRestartFailed;
        in.attempt = attempt;
        in.pool = pool;
        in.index = index;
        in.message = s.message();
        core_->Post([this, uid, in] { Deliver(uid, in); });
      });
  }
}

void JobController::Launch(const model::Job& job) {
  const Backend& backend = backends_->For(job.project);
  executor::Executor* const ex = backend.executor;
  const std::string metrics_dir = job.trial_id > 0 && !options_.trial_root.empty()
                                      ? machines::TrialMetricsDir(options_.trial_root, job.uid)
                                      : "";
  std::string endpoint = backend.storage_endpoint;
  if (replica_credential_ && ex->ReplicasNeedCredential() && !endpoint.empty()) {
    endpoint = WithUserinfo(endpoint, "replica", replica_credential_(job.uid));
  }
  executor::AttemptSpec spec =
      BuildAttemptSpec(job, ex->ReplicaBucketRoot(), endpoint, metrics_dir);
  if (options_.project_buckets) spec.visible_buckets = options_.project_buckets(job.project);
  if (job.attempt == 1) {
    if (std::string runtime = RuntimeLineOf(job); !runtime.empty()) {
      ServiceLog(job.uid, runtime, "INFO");
    }
    if (!ex->ReplicaBucketRoot().empty()) WarnOfUnmountedBuckets(job, spec);
  }
  core_->Blocking([this, ex, spec = std::move(spec), dir = metrics_dir] {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    Status s = ex->Launch(spec);
    if (s.ok()) return;
    machines::JobInput in;
    in.kind = machines::JobInputKind::kLaunchFailed;
    in.attempt = spec.attempt;
    in.message = s.message();
    core_->Post([this, uid = spec.job_uid, in] { Deliver(uid, in); });
  });
}

void JobController::WarnOfUnmountedBuckets(const model::Job& job,
                                           const executor::AttemptSpec& spec) {
  for (const std::string& bucket : UnmountedBucketsNamed(spec)) {
    ServiceLog(job.uid,
               "gs://" + bucket +
                   ", named in the job's command line or environment, is no bucket "
                   "of project " +
                   job.project + ": the replicas cannot write there (/gcs/" + bucket +
                   " does not exist for them). Create it (gcloud storage buckets create gs://" +
                   bucket + " --project=" + job.project + ") and submit the job again.",
               "WARNING");
  }
}

void JobController::ServiceLog(const std::string& uid, const std::string& message,
                               const std::string& severity) {
  WriteServiceLine(logs_, core_->clock()->Now(), uid, message, severity);
}

// ---------------------------------------------------------------------------
// Published state

void JobController::Publish(const model::Job& job) {
  const bool ends_now = model::IsTerminal(job.state) && published_.Has(job.uid);
  published_.Put(job);
  if (ends_now && options_.on_finished) options_.on_finished(job);
}

}  // namespace ty::service
