// Internal to service/: a study's side of its trial jobs. The job controller owns them
// (they are jobs like any other); the study controller creates and stops them by LoopCore
// message, reads what their replicas reported, and learns what became of them while the
// daemon was down. Each answer is an input of the study machine (machines/study_machine.h),
// so the controller only feeds it on.
//
// Loop thread only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jobstore/job_store.h"
#include "machines/study_machine.h"
#include "model/job.h"
#include "service/loop_core.h"
#include "service/published_jobs.h"

namespace ty::service {

// The study machine's input of `kind` about trial `trial_id`.
machines::StudyInput TrialInput(machines::StudyInputKind kind, int64_t trial_id);

// Trial `trial_id` of `study`'s record; nullptr when it has none.
const model::Trial* FindTrial(const model::Job& study, int64_t trial_id);

class TrialJobLink {
 public:
  // `trial_root`: the host directory under which each trial job's metrics directory
  // lives (machines/trial_jobs.h); "" = trials cannot report. `live_jobs`: the job
  // controller's published jobs (is a trial job running?).
  TrialJobLink(LoopCore* core, jobstore::JobStore* store, const PublishedJobs* live_jobs,
               std::string trial_root);

  // Asks the job controller for trial `trial_id`'s job under the uid its record holds.
  // Its creation comes back as a JobCommitted (announced then) or a TrialJobRefused.
  void Create(const machines::StudyRecord& study, int64_t trial_id) const;
  // Asks the job controller to cancel it; false when no such job exists.
  bool Stop(const std::string& job_uid, const std::string& why) const;
  // kTrialJobEnded for `trial`'s job, ended, with what its replica reported.
  machines::StudyInput Ended(const model::Job& trial_job, const model::Trial& trial) const;
  // What a commit of trial job `job` means to its study, whose record is `study`
  // (nullptr when the study is no longer live): kTrialJobCreated for its first commit,
  // kTrialJobEnded when the trial's job ended; nothing otherwise. The job of a study that
  // finished before it was created is stopped.
  std::optional<machines::StudyInput> OnCommitted(const model::Job& job, model::JobState before,
                                                  const machines::StudyRecord* study) const;
  // Start-up: trials whose job ended while the daemon was down (or before the study
  // recorded it) end from the job's record; a trial recorded just before a crash whose
  // job was never created is missing. A stop committed but maybe never sent is sent again.
  std::vector<machines::StudyInput> Reconcile(const machines::StudyRecord& study) const;
  // kMetricsRead for each running trial whose cloudml-hypertune file has something.
  std::vector<machines::StudyInput> ReadMetrics(const machines::StudyRecord& study) const;

 private:
  // The trial's cloudml-hypertune file as written so far ("" when there is none).
  std::string MetricsText(const model::Trial& trial) const;

  LoopCore* const core_;
  jobstore::JobStore* const store_;
  const PublishedJobs* const live_jobs_;
  const std::string trial_root_;
};

}  // namespace ty::service
