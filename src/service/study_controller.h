// Internal to service/: the study controller runs tuning jobs (docs/design.md §6). A study
// is a record with a StudySpec; its trials are jobs of their own ("trial jobs",
// Job::study_uid set), submitted to the job controller, so they are admitted, run,
// logged and recovered like every job.
//
// What to do is decided by the pure study machine (machines/study_machine.h): this
// controller only feeds it inputs (a submission, a trial job created or ended as seen
// among the job controller's commits, a read of a running trial's cloudml-hypertune
// file, the tuner's answer, a user's cancel, a stored study that no longer builds) and
// performs its actions: commit the record and then write the lines it carries
// (model/outbox.h), ask the tuner off the loop (service/study_tuner.h), create or stop
// trial jobs (service/trial_job_link.h). Load() takes
// the stored studies (what their last commits said and a dying daemon did not write,
// JobController::Load writes, as for every stored record), and Start() reconciles each
// recorded trial with its job.
//
// Loop thread only, but for the published state (published()).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jobstore/job_store.h"
#include "logs/log_store.h"
#include "machines/study_machine.h"
#include "model/job.h"
#include "service/loop_core.h"
#include "service/messages.h"
#include "service/published_jobs.h"
#include "service/set_aside_list.h"
#include "service/study_stalls.h"
#include "service/trial_job_link.h"
#include "service/uid_source.h"

namespace ty::tuning {
class Tuner;  // tuning/tuner.h; Eigen stays out of this header.
}  // namespace ty::tuning

namespace ty::service {

// How often running trials' metrics files are read (intermediate measurements and
// early stopping).
inline constexpr DurationMicros kTrialPollInterval = 2 * 1000000;

class StudyController {
 public:
  // `trial_root`: the host directory under which each trial job's metrics directory
  // lives (machines/trial_jobs.h); "" = trials cannot report (every trial infeasible).
  // Registers its receivers on `core`: construct it before the loop starts.
  // `live_jobs`: the job controller's published jobs (is a trial job running?).
  StudyController(LoopCore* core, jobstore::JobStore* store, logs::LogStore* logs, UidSource* uids,
                  const PublishedJobs* live_jobs, std::string trial_root);
  ~StudyController();

  // Before the loop runs, after JobController::Load: the stored studies not finished.
  // One that cannot be resumed (its search space or tuner no longer builds) is failed
  // with why and listed in problems(), never left unfinished for ever.
  Status Load();
  // Any thread: why stored studies were failed at start-up (for /healthz).
  std::vector<std::string> problems() const { return problems_.lines(); }
  // Any thread: studies whose decisions wait for a store that cannot write.
  StoreWriteHealth store_health() const { return stalls_.health(); }
  // Loop thread, once, after recovery: reconciles trials with their jobs and resumes.
  void Start();

  // Loop thread. The job carries a parsed spec with `study` set.
  Result<model::Job> Submit(model::Job job);
  // Loop thread. NotFound when `uid` is not a live study.
  Status Cancel(const std::string& uid);
  bool IsLive(const std::string& uid) const;  // Loop thread.

  // Any thread: the studies that are not finished, as API threads read them (and the
  // memory budget counts them).
  const PublishedJobs& published() const { return published_; }

 private:
  struct Study {
    machines::StudyRecord record;  // What the study machine decides on (machines/study_machine.h).
    std::unique_ptr<tuning::Tuner> tuner;
    int prior_trials = 0;  // Finished trials of resumePreviousJobId's study observed.
  };

  // The in-memory study of a record: its tuner (service/study_tuner.h).
  Result<Study> MakeStudy(model::Job job);
  void SetAside(model::Job job, const std::string& why);  // Load: fails it, says why.

  // The study's inbox: decides each input with the study machine and performs the
  // decision's actions, in order; inputs the actions produce (a trial job that cannot
  // be created or is gone) are decided after. Trial jobs that end together (a
  // cancelled study's, a burst) are decided as one batch with one commit
  // (machines::DecideStudyBatch). Behind a stalled commit the inputs wait their turn.
  // Returns the first input's outcome (a failed commit), for Cancel.
  Status Deliver(const std::string& uid, std::vector<machines::StudyInput> inbox);
  Status Deliver(const std::string& uid, machines::StudyInput input);
  // Trial ends are gathered until the loop is free, then delivered together.
  void QueueTrialEnd(const std::string& study_uid, machines::StudyInput input);
  Status Perform(Study& st, const std::vector<machines::StudyAction>& actions,
                 std::vector<machines::StudyInput>* follow_ups);
  // A stalled commit landed (service/study_stalls.h): what waited behind it is done.
  void OnCommitLanded(const std::string& uid, StalledStudyCommit done);
  // Messages: a trial job created (announced) or ended (the trial ends), a trial
  // job that could not be created.
  void OnJobCommitted(const JobCommitted& m);
  void OnTrialJobRefused(const TrialJobRefused& m);
  void Poll();  // Running trials' metrics files: intermediate measurements, early stops.
  // Writes the study's record as a commit action carries it, then its outbox's lines
  // (model/outbox.h).
  Status Commit(const std::string& uid, const model::Job& record, bool create = false);
  Study* Find(const std::string& uid);

  LoopCore* const core_;
  jobstore::JobStore* const store_;
  logs::LogStore* const logs_;
  UidSource* const uids_;
  const TrialJobLink trials_;
  const machines::StudyPolicy
      policy_;  // The defaults: a replica's metrics file where containers see it.
  std::map<std::string, Study> studies_;  // Loop thread only.
  // Trial ends waiting for their study's batch (QueueTrialEnd). Loop thread only.
  std::map<std::string, std::vector<machines::StudyInput>> ended_;
  bool polling_ = false;

  PublishedJobs published_;  // Live studies, for API threads.
  StudyStalls stalls_;       // Commits the store could not write yet.
  SetAsideList problems_;    // Stored studies Load found unrunnable.
};

}  // namespace ty::service
