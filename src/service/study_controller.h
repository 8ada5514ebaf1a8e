// Internal to service/: the study controller runs tuning jobs (DESIGN.md §6). A study
// is a job record with a StudySpec; its trials are jobs of their own ("trial jobs",
// Job::study_uid set), submitted to the job controller, so they are admitted, run,
// logged and recovered like every job. This controller decides which trials to run
// (tuning/, pure), reads what they report (the cloudml-hypertune file of each trial
// job's primary replica), stops hopeless ones early and ends the study:
//
//   QUEUED --first trial created--> RUNNING --maxTrials done (or the grid)--> SUCCEEDED
//     |                               |  --too many failed trials------------> FAILED
//     +--cancel--> CANCELLING --every trial job down--> CANCELLED
//
// Every decision is committed to the study's record before it acts (a trial is
// recorded before its job is submitted), so a restarted daemon resumes the study
// without running a trial twice or losing one: Load() takes the stored studies,
// Start() reconciles each recorded trial with its job.
//
// Loop thread only, but for the published state (GetLive, FindLiveMl).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "jobstore/job_store.h"
#include "model/job.h"
#include "service/job_controller.h"
#include "service/loop_core.h"
#include "service/published_jobs.h"

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
  // lives (service/trial_jobs.h); "" = trials cannot report (every trial infeasible).
  // `after_commit_for_test`: as JobServiceOptions', for the study's own commits.
  StudyController(LoopCore* core, jobstore::JobStore* store, JobController* jobs,
                  std::string trial_root,
                  std::function<AfterCommit()> after_commit_for_test = nullptr);
  ~StudyController();

  // Before the loop runs, after JobController::Load: the stored studies not finished.
  // One that cannot be resumed (its search space or tuner no longer builds) is failed
  // with why and listed in problems(), never left unfinished for ever.
  Status Load();
  // Any thread: why stored studies were failed at start-up (for /healthz).
  std::vector<std::string> problems() const;
  // Loop thread, once, after recovery: reconciles trials with their jobs and resumes.
  void Start();

  // Loop thread. The job carries a parsed spec with `study` set.
  Result<model::Job> Submit(model::Job job);
  // Loop thread. NotFound when `uid` is not a live study.
  Status Cancel(const std::string& uid);
  bool IsLive(const std::string& uid) const;  // Loop thread.
  // Loop thread: every commit of any job (trial jobs end here).
  void OnJobCommitted(const model::Job& job);

  // Any thread: a study that is not finished.
  std::optional<model::Job> GetLive(const std::string& uid) const;
  std::optional<std::string> FindLiveMl(const std::string& project,
                                        const std::string& job_id) const;

 private:
  struct Study {
    model::Job job;
    model::StudySpec spec;
    std::unique_ptr<tuning::Tuner> tuner;
    bool exhausted = false;   // The search space has no unseen point left.
    bool suggesting = false;  // The tuner works on the next trials (off the loop).
    std::string failing;      // Set when the study fails once its trials are down.
    int prior_trials = 0;     // Finished trials of resumePreviousJobId's study observed.
    std::map<int64_t, int64_t> skipped_logged;  // Per trial: skipped lines already logged.
  };

  Status Adopt(model::Job job);  // Builds the in-memory study (tuner from trials).
  void SetAside(model::Job job, const std::string& why);  // Load: fails it, says why.
  // InvalidArgument naming resumePreviousJobId when it names no tuning job here.
  Result<model::Job> PreviousStudy(const model::Job& job) const;
  void ObservePreviousStudy(Study& st, const model::Job& job);
  void Step(const std::string& uid);
  // Asks the tuner for the trials there is room for, on a worker: a suggestion may
  // take seconds (bench/tuner_latency --widest), which the loop must not wait for.
  void StartTrials(Study& st);
  // Back on the loop: records and submits the suggested trials (or fails the study
  // with the tuner's error), then steps the study again.
  void AddTrials(const std::string& uid, std::vector<model::Assignment> next, int asked,
                 const std::string& tuner_error);
  void SubmitTrialJob(Study& st, model::Trial& trial);
  void AnnounceStart(const Study& st, const model::Trial& trial);
  void AnnounceUnannouncedStarts(Study& st);
  static std::string StartedLinePrefix(const model::Trial& trial);
  void EndTrial(Study& st, model::Trial& trial, const model::Job& trial_job);
  void Finish(Study& st, model::JobState state, std::optional<model::JobError> error);
  void Poll();
  // Merges the trial's new reports and logs them; true when any arrived.
  bool ReadMetrics(Study& st, model::Trial& trial);
  void ConsiderStopping(Study& st, model::Trial& trial);
  Status Commit(Study& st);
  // After a study record is written: a crash-point test may "kill" the daemon here
  // (Aborted: the caller must do nothing more).
  Status AfterWrite();
  void Publish(const model::Job& job);
  void Log(const Study& st, const std::string& message);
  Study* Find(const std::string& uid);
  model::Trial* FindTrial(Study& st, int64_t trial_id);

  LoopCore* const core_;
  jobstore::JobStore* const store_;
  JobController* const jobs_;
  const std::string trial_root_;
  const std::function<AfterCommit()> after_commit_for_test_;
  std::map<std::string, Study> studies_;  // Loop thread only.
  bool polling_ = false;

  PublishedJobs published_;  // Live studies, for API threads.
  mutable std::mutex problems_mu_;
  std::vector<std::string> problems_;  // Guarded by problems_mu_.
};

}  // namespace ty::service
