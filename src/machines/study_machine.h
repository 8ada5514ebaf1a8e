// The study state machine as one pure function, beside the job machine
// (machines/job_machine.h):
//
//   DecideStudy(study record, input, policy, now) -> (new record, actions)
//
// Inputs are what can happen to a tuning job: a tick (decide what comes next), a
// user's cancel, the tuner's suggestions, a trial job that ended, was never created
// or could not be created, and a read of a trial's metrics file; and the study's own
// life: its submission, a trial job created (wanted or not), a stored study that can no
// longer run. Actions are what the study controller (service/study_controller.h)
// performs, in order: commit the record, ask the tuner, submit / stop a trial job,
// tell the tuner a trial's result, forget the finished study.
//
// What the study says goes into its record's outbox (model/outbox.h), and each commit
// carries the lines decided since the one before: the controller commits, then writes
// them. A decision never ends with lines outside a commit.
//
//   QUEUED --first trials suggested--> RUNNING --maxTrials done (or the grid)--> SUCCEEDED
//     |                                  |  --no trial reported the metric----> FAILED
//     |                                  |  --maxFailedTrials / tuner error--> FAILING
//     |                                  |        (its trials are stopped) --all down--> FAILED
//     +--cancel---> CANCELLED (no trial) +--cancel--> CANCELLING --all trials down--> CANCELLED
//
// Everything the controller remembers lives in the record: the trials (with how many
// skipped metric lines were already reported) and the study's progress (failing and
// why, search space exhausted), stored with the study's row. The one thing that is
// not stored is a suggestion in flight (`suggesting`): a restarted daemon asks again.
// A commit action comes before the actions that depend on it (a trial is recorded
// before its job is submitted), so the daemon can die anywhere and resume from the
// record without running a trial twice or losing one
// (tests/service/study_crash_points_test.cc).
//
// It lives in service/, not model/, because it decides with the tuning module's
// early-stopping rules. Pure: no I/O, no clock, no threads; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "machines/trial_jobs.h"
#include "model/job.h"
#include "model/study_spec.h"

namespace ty::machines {

struct StudyRecord {
  model::Job job;  // The study's row: state, times, error, trials, progress.
  // job.spec.study: shared with the record (never copied per decision).
  std::shared_ptr<const model::StudySpec> spec;
  bool suggesting = false;  // Not stored: the tuner works on the next trials.
};

// The study's state as the machine sees it (table tests enumerate it).
enum class StudyPhase {
  kQueued,      // No trial yet.
  kRunning,     // Trials run; more may be suggested.
  kFailing,     // progress.failing set: its trials are being stopped.
  kCancelling,  // A user cancelled: its trials are being stopped.
  kSucceeded,
  kFailed,
  kCancelled,
};
StudyPhase PhaseOf(const StudyRecord& record);
// "QUEUED", ...; nullptr for a value that is no StudyPhase.
const char* StudyPhaseName(StudyPhase phase);

enum class StudyInputKind {
  kTick,             // Decide what comes next (after submit, start-up, a suggestion).
  kCancel,           // A user cancelled the study.
  kSuggested,        // The tuner answered (`suggestions` with `job_uids`, or `error`).
  kTrialJobEnded,    // Trial `trial_id`'s job is terminal (`job_state`, `job_error`).
  kTrialJobMissing,  // Its job does not exist (recorded just before a crash).
  kTrialJobRefused,  // Its job could not be created (`message`).
  kMetricsRead,      // Its metrics file read (`metrics_text`) while it runs.
  kSubmitted,        // A new study, to be created (`message`: a line to say, or "").
  kTrialJobCreated,  // Trial `trial_id`'s job `job_uid` exists (`job_state`): stop it if
                     // the study no longer runs that trial.
  kSetAside,         // A stored study that can no longer run (`message`: why): it fails.
};
// "TICK", ...; nullptr for a value that is no StudyInputKind.
const char* StudyInputKindName(StudyInputKind kind);

struct StudyInput {
  StudyInputKind kind = StudyInputKind::kTick;
  int64_t trial_id = 0;
  // kSuggested: the points, each with the uid its trial job will have (allocated by
  // the controller, recorded before the job exists); `asked` how many were asked for.
  std::vector<model::Assignment> suggestions;
  std::vector<std::string> job_uids;
  int asked = 0;
  std::string error;                                        // kSuggested: the tuner failed.
  model::JobState job_state = model::JobState::kSucceeded;  // kTrialJobEnded.
  std::optional<model::JobError> job_error;                 // kTrialJobEnded.
  TimeMicros job_end_time = 0;                              // kTrialJobEnded; 0 = now.
  // kTrialJobEnded, kMetricsRead: the trial's cloudml-hypertune file ("" = none).
  std::string metrics_text;
  std::string message;  // kTrialJobRefused, kSetAside.
  // kSubmitted: finished trials of the study it resumes (resumePreviousJobId) observed.
  int prior_trials = 0;
  std::string job_uid;  // kTrialJobCreated.
};

enum class StudyActionKind {
  kCommit,       // Write `record` (`create`: a new row), then its outbox's lines to the
                 // study's log; on failure perform nothing more.
  kSuggest,      // Ask the tuner for `count` points beside `pending` (a kSuggested follows).
  kSubmitTrial,  // Create trial `trial_id`'s job (kTrialJobRefused if it cannot be).
  kStopTrial,    // Cancel the job `job_uid` (`message`: why); kTrialJobMissing if absent.
  kObserve,      // Tell the tuner trial `trial_id`'s result.
  kForget,       // The study is finished and committed: drop it from memory.
};

struct StudyAction {
  StudyActionKind kind = StudyActionKind::kCommit;
  std::string message;
  int64_t trial_id = 0;
  std::string job_uid;
  int count = 0;
  std::vector<model::Assignment> pending;
  // kCommit: the study's row as it stands at this point of the decision (one input
  // may commit more than once: a trial's end, then the study's), its outbox holding
  // the lines decided since the commit before.
  model::Job record;
  bool create = false;
};

struct StudyPolicy {
  // The tag's metrics file as a replica sees it, for the infeasible reason.
  std::string metrics_file_hint = std::string(kReplicaMetricsDir) + "/" + kTrialMetricsFile;
};

struct StudyDecision {
  StudyRecord record;
  std::vector<StudyAction> actions;  // In order.
};

// `record` by value: a controller moves its study's record in (a study's record holds
// every trial's parameters; a copy per decision was most of a 1,000-trial study's time).
StudyDecision DecideStudy(StudyRecord record, const StudyInput& input, const StudyPolicy& policy,
                          TimeMicros now);

// Inputs that arrive together (trial jobs ending in one burst: a cancelled study's) as
// one decision with one commit: each input decided in turn, their commits merged into
// the last one, which carries every commit's lines in order. A commit that ends the
// study carries no lines (the end follows its last lines); it stays an action of its
// own, after the merged one, in order with the other actions. One commit per input
// wrote the whole study (every trial's parameters) each time: 1,000 trials took minutes
// to cancel.
StudyDecision DecideStudyBatch(StudyRecord record, const std::vector<StudyInput>& inputs,
                               const StudyPolicy& policy, TimeMicros now);

}  // namespace ty::machines
