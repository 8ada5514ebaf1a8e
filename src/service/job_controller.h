// Internal to service/: the job controller, the one place that turns what happens
// to a job into committed records and side effects (docs/design.md §2):
//
//   input -> machines::DecideJob (pure) -> commit record + history + lines -> publish
//         -> write the lines -> actions
//
// It runs on the LoopCore's loop (every method below "loop thread" asserts it);
// executor calls run as blocking work and come back as inputs. Admission and
// studies are controllers beside it on the same core; they talk by messages
// (service/messages.h): it announces every commit (JobCommitted) and asks for
// admission (AdmissionWanted); it receives job inputs (JobInputMessage) and trial
// jobs to create (SubmitTrialJob).
//
// Published state (the jobs API threads read) keeps its own locks.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "jobstore/job_store.h"
#include "logs/log_store.h"
#include "machines/job_machine.h"
#include "model/job.h"
#include "model/spec_limits.h"
#include "service/admission_controller.h"
#include "service/backends.h"
#include "service/commit_retry.h"
#include "service/loop_core.h"
#include "service/messages.h"
#include "service/published_jobs.h"
#include "service/set_aside_list.h"
#include "service/uid_source.h"

namespace ty::service {

// How jobs run: JobServiceOptions::jobs, handed to the job controller as it is.
struct ControllerOptions {
  DurationMicros stop_grace = 10LL * 1000000;  // SIGTERM -> SIGKILL.
  // Whole-job attempts and in-place restarts (docs/contracts/runtime.md §9: 3 and 5).
  machines::JobPolicy policy;
  // Bounds on accepted specs (400 at submit; stored jobs past them fail at start-up).
  model::SpecLimits limits;
  // Where trial jobs' cloudml-hypertune files live on this host, one directory per
  // trial job (machines/trial_jobs.h); their primary replica reports there
  // (executor::ReplicaLaunch::metrics_host_dir). "" = trials cannot report metrics.
  std::string trial_root;
  // Every bucket a project's replicas may see, at launch (gcs::ObjectStore's owners,
  // wired by the daemon); unset = replicas see only the buckets their job names.
  std::function<std::vector<std::string>(const std::string& project)> project_buckets;
  // Called on the loop thread once per job whose finished record was just committed
  // (the TensorBoard indexer's last pass over what it wrote). Must not block.
  std::function<void(const model::Job& job)> on_finished;
};

class JobController {
 public:
  // `backends`: where each project's jobs run and are admitted (not owned).
  // Registers its receivers on `core`: construct it before the loop starts.
  JobController(LoopCore* core, jobstore::JobStore* store, Backends* backends, logs::LogStore* logs,
                UidSource* uids, ControllerOptions options);

  // Start-up, before the loop runs: reads the stored jobs that are not finished (the
  // history stays in the store). For every record read (studies and finished jobs that
  // still carry lines included) it first writes the lines its last commit carried that
  // the log lacks (model/outbox.h). A job whose spec cannot be read or exceeds today's
  // limits is failed (never run) and listed in problems(); it never stops the
  // daemon. Errors only when the store cannot be read.
  Status Load();
  // Before the loop runs, for replicas the replica listener cannot know by their
  // address (Executor::ReplicasNeedCredential: Slurm's host networking): each job's
  // credential, which its replicas' endpoint (Backend::storage_endpoint) carries as
  // userinfo (http://replica:CREDENTIAL@host:port).
  void SetReplicaCredentials(std::function<std::string(const std::string& job_uid)> credential) {
    replica_credential_ = std::move(credential);
  }
  // Loop thread: reconcile records with what the executor still has.
  void Recover(const std::vector<executor::ObservedReplica>& observed);

  // Loop thread. AlreadyExists for a duplicate ml v1 job id, or for a uid given in
  // `job.uid` (from the UidSource) that a job already has; empty uid: a new one.
  Result<model::Job> Submit(model::Job job);
  // Loop thread. NotFound for an unknown uid; OK for a finished job.
  Status Cancel(const std::string& uid, const std::string& reason);
  // Loop thread. FailedPrecondition unless finished.
  Status Delete(const std::string& uid);
  // Any thread: posts the event to the loop.
  void OnExecutorEvent(const executor::ExecutorEvent& event);
  // Any thread: a line in the job's service log.
  void ServiceLog(const std::string& uid, const std::string& message, const std::string& severity);

  // --- Published state (any thread): jobs that are not finished. A finished job is
  // removed once its final record is committed; readers then find it in the store.
  const PublishedJobs& published() const { return published_; }
  std::vector<std::string> problems() const { return problems_.lines(); }
  StoreWriteHealth store_health() const;

 private:
  // The names of the steps are the study controller's too: an input is delivered, the
  // machine decides, the controller commits, then performs each action.
  // Decides `input` with the job machine, then CommitThenAct; the commit's outcome.
  Status Decide(const std::string& uid, machines::JobInput input);
  // Decide, for inputs nobody waits on (executor events, timers, recovery, admission):
  // an input whose commit failed for want of a store that writes is held and committed
  // again, in order with the job's later inputs, until it lands (service/commit_retry.h).
  void Deliver(const std::string& uid, machines::JobInput input);
  // Commits the job's held inputs in order; on a failure again, tries later.
  void RetryHeld(const std::string& uid);
  void ScheduleRetry(const std::string& uid);
  // Creates a study's trial job; one the store could not write is created again later
  // (its study recorded the trial: refusing it would fail the trial for a full disk).
  // `tries`: the creates that failed so far.
  void SubmitTrial(const model::Job& job, int tries);
  // The store's writes as /healthz tells them (writes_).
  void NoteWriteFailed(const std::string& uid, const Status& why, bool first_for_job);
  void NoteWritesLanded(const std::string& uid);
  // Commits the decision's record (its history and its outbox's lines with it), writes
  // those lines to the job's log, then performs the actions.
  Status CommitThenAct(machines::JobDecision decision, bool create);
  // A finished record's lines are written: commits it without them, so start-up no
  // longer reads it (jobstore::JobStore::ListLiveJobs).
  void ForgetWrittenLines(const model::Job& finished);
  void Perform(const model::Job& job, const machines::JobAction& action);
  void Launch(const model::Job& job);
  // One WARNING line per gs:// bucket the replicas' command lines or environments name
  // that they will not see (issue 33: such writes vanished).
  void WarnOfUnmountedBuckets(const model::Job& job, const executor::AttemptSpec& spec);
  void Publish(const model::Job& job);
  // Start-up: keeps `job` to be failed by Recover (through the machine) and reports it.
  void SetAsideUnrunnable(model::Job job, const std::string& why);
  model::Job* Find(const std::string& uid);  // Loop thread; null if absent.
  void AssertOnLoop() const;

  LoopCore* const core_;
  jobstore::JobStore* const store_;
  Backends* const backends_;
  logs::LogStore* const logs_;
  UidSource* const uids_;
  const ControllerOptions options_;
  std::function<std::string(const std::string& job_uid)> replica_credential_;  // Null: none.

  // Loop-thread only: every job that is not finished, with its parsed spec.
  std::map<std::string, model::Job> live_;
  // Stored jobs Load found unrunnable, with why; failed by Recover. Loop-thread only.
  std::vector<std::pair<model::Job, std::string>> unrunnable_;
  // Inputs whose commit failed, waiting to be committed again. Loop-thread only.
  HeldInputs held_;

  // Published: written on the loop after each commit, read by API threads.
  PublishedJobs published_;  // Live jobs, for API threads.
  SetAsideList problems_;    // Stored jobs Load found unrunnable.
  StoreWriteWatch writes_;   // Its own lock.
};

}  // namespace ty::service
