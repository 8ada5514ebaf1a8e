#include "machines/study_machine.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "machines/job_machine.h"
#include "machines/trial_jobs.h"
#include "tuning/early_stopping.h"

namespace ty::machines {

namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string TrialName(const model::Trial& t) { return "Trial " + std::to_string(t.id); }

tuning::TrialCurve CurveOf(const model::StudySpec& spec, const model::Trial& t) {
  tuning::TrialCurve c;
  for (const auto& m : t.measurements) {
    c.points.push_back(
        {spec.stopping_use_elapsed ? m.elapsed_seconds : static_cast<double>(m.step), m.value});
  }
  std::stable_sort(c.points.begin(), c.points.end(),
                   [](const auto& a, const auto& b) { return a.x < b.x; });
  if (t.final_measurement) c.final_value = t.final_measurement->value;
  return c;
}

struct Counts {
  int active = 0, succeeded = 0, failed = 0;
};

Counts CountTrials(const model::Job& job) {
  Counts c;
  for (const model::Trial& t : job.trials) {
    c.active += model::IsTrialActive(t);
    c.succeeded += t.state == model::TrialState::kSucceeded;
    c.failed += t.state == model::TrialState::kFailed;
  }
  return c;
}

// One decision: the record being changed and the actions so far.
class StudyMachine {
 public:
  StudyMachine(StudyRecord record, const StudyPolicy& policy, TimeMicros now)
      : out_{std::move(record), {}}, policy_(policy), now_(now) {
    job().outbox.lines.clear();  // The last commit's: written before this decision.
  }

  StudyDecision Take() {
    if (!job().outbox.lines.empty()) Commit();  // Every line travels in a commit.
    return std::move(out_);
  }

  void Run(const StudyInput& in) {
    if (model::IsTerminal(job().state)) return;  // Finished: nothing applies any more.
    switch (in.kind) {
      case StudyInputKind::kTick:
        return Step();
      case StudyInputKind::kCancel:
        return Cancel();
      case StudyInputKind::kSuggested:
        return Suggested(in);
      case StudyInputKind::kTrialJobEnded:
        return TrialJobEnded(in);
      case StudyInputKind::kTrialJobMissing:
        return TrialJobMissing(in.trial_id);
      case StudyInputKind::kTrialJobRefused:
        return TrialJobRefused(in);
      case StudyInputKind::kMetricsRead:
        return MetricsRead(in);
      case StudyInputKind::kSubmitted:
        return Submitted(in);
      case StudyInputKind::kTrialJobCreated:
        return TrialJobCreated(in);
      case StudyInputKind::kSetAside:
        return SetAside(in.message);
    }
  }

 private:
  model::Job& job() { return out_.record.job; }
  const model::StudySpec& spec() const { return *out_.record.spec; }
  model::StudyProgress& progress() { return out_.record.job.study_progress; }
  bool Stopping() { return job().cancel_requested || !progress().failing.empty(); }

  model::Trial* FindActive(int64_t trial_id) {
    for (model::Trial& t : job().trials) {
      if (t.id == trial_id) return model::IsTrialActive(t) ? &t : nullptr;
    }
    return nullptr;
  }

  void Act(StudyActionKind kind, std::string message = "", int64_t trial_id = 0) {
    StudyAction a;
    a.kind = kind;
    a.message = std::move(message);
    a.trial_id = trial_id;
    out_.actions.push_back(std::move(a));
  }
  void Log(std::string message, std::string severity = "INFO") {
    job().outbox.Add(std::move(message), std::move(severity));
  }
  // The record as it stands, with the lines said since the last commit.
  void Commit(bool create = false) {
    job().update_time = create ? job().create_time : now_;
    Act(StudyActionKind::kCommit);
    out_.actions.back().record = job();
    out_.actions.back().create = create;
    job().outbox.lines.clear();
  }

  // The controller says it once, of a record not yet stored: a study with trials, or
  // stopping, was submitted long ago.
  void Submitted(const StudyInput& in) {
    if (PhaseOf(out_.record) != StudyPhase::kQueued) return;
    job().state = model::JobState::kQueued;
    if (job().create_time == 0) job().create_time = now_;
    job().phases.queued = job().create_time;
    if (const std::string& previous = spec().resume_previous_job_id; !previous.empty()) {
      Log("Resuming the study of job " + previous + ": its " + std::to_string(in.prior_trials) +
          " finished trials inform the suggestions.");
    }
    Commit(/*create=*/true);
  }

  // A trial's job was created. One the study stopped while its job was on its way
  // (cancelled, or the study finished) must not run.
  void TrialJobCreated(const StudyInput& in) {
    const model::Trial* t = FindActive(in.trial_id);
    if (t != nullptr && t->job_uid == in.job_uid) return;
    if (model::IsTerminal(in.job_state)) return;
    StopJob(in.trial_id, in.job_uid, "The study no longer runs this trial.");
  }

  // Its search space or tuner no longer builds: failed with why, never left unfinished.
  void SetAside(const std::string& why) {
    model::JobError error{machines::kErrorCodeInternal,
                          "Internal error: the stored study can no longer be run: " + why};
    SayLast(error.message, "ERROR");
    End(model::JobState::kFailed, std::move(error));
  }

  // A finished record carries no lines (model/outbox.h: nothing reads finished records
  // at start-up), so the last ones are committed first. A daemon that dies between the
  // two commits finds `finishing` stored and ends the study without saying them again.
  void SayLast(std::string message, std::string severity = "INFO") {
    if (progress().finishing) return;
    progress().finishing = true;
    Log(std::move(message), std::move(severity));
    Commit();
  }

  void End(model::JobState state, std::optional<model::JobError> error) {
    job().state = state;
    job().error = std::move(error);
    job().end_time = now_;
    job().phases.finished = now_;
    Commit();
    Act(StudyActionKind::kForget);
  }

  void Cancel() {
    if (job().cancel_requested) return;
    job().cancel_requested = true;
    if (job().state != model::JobState::kQueued) job().state = model::JobState::kCancelling;
    Log("Cancelling the study and every running trial.");
    Commit();
    Step();
  }

  void Suggested(const StudyInput& in) {
    out_.record.suggesting = false;
    if (Stopping()) return Step();
    if (!in.error.empty()) return Fail("the tuner failed: " + in.error);
    if (static_cast<int>(in.suggestions.size()) < in.asked) progress().exhausted = true;
    const size_t first_new = job().trials.size();
    for (size_t i = 0; i < in.suggestions.size() && i < in.job_uids.size(); ++i) {
      model::Trial t;
      t.id = static_cast<int64_t>(job().trials.size()) + 1;
      t.params = in.suggestions[i];
      t.start_time = now_;
      t.job_uid = in.job_uids[i];
      job().trials.push_back(std::move(t));
    }
    if (job().state == model::JobState::kQueued && !job().trials.empty()) {
      job().state = model::JobState::kRunning;
      job().start_time = now_;
      job().phases.admitted = now_;
    }
    for (size_t i = first_new; i < job().trials.size(); ++i) {
      const model::Trial& t = job().trials[i];
      Log(TrialName(t) + " started (job " + t.job_uid + "): " + DescribeParams(spec(), t.params) +
          ".");
    }
    Commit();  // Recorded first: a crash from here on finds them and submits their jobs.
    for (size_t i = first_new; i < job().trials.size(); ++i) {
      Act(StudyActionKind::kSubmitTrial, "", job().trials[i].id);
    }
    Step();  // Room may have opened meanwhile, or the space run out.
  }

  void TrialJobEnded(const StudyInput& in) {
    model::Trial* t = FindActive(in.trial_id);
    if (t == nullptr) return;
    MergeMetrics(*t, in.metrics_text);
    EndTrial(*t, in);
    Commit();
    Step();
  }

  // A trial recorded just before a crash whose job was never created: created now
  // under the uid the record holds (never a second job for one trial), or, when the
  // study is being stopped, the trial is cancelled.
  void TrialJobMissing(int64_t trial_id) {
    model::Trial* t = FindActive(trial_id);
    if (t == nullptr) return;
    if (!Stopping()) return Act(StudyActionKind::kSubmitTrial, "", t->id);
    t->state = model::TrialState::kCancelled;
    t->end_time = now_;
    Commit();
    Step();
  }

  // The trial cannot run at all (a trial job id taken by a user's job...): it fails.
  void TrialJobRefused(const StudyInput& in) {
    model::Trial* t = FindActive(in.trial_id);
    if (t == nullptr) return;
    t->state = model::TrialState::kFailed;
    t->infeasible_reason = "its job could not be created: " + in.message;
    t->end_time = now_;
    Act(StudyActionKind::kObserve, "", t->id);
    Log(TrialName(*t) + " failed: " + t->infeasible_reason);
    Commit();
    Step();
  }

  void MetricsRead(const StudyInput& in) {
    model::Trial* t = FindActive(in.trial_id);
    if (t == nullptr || t->stopped_early) return;
    const int64_t skipped_before = t->skipped_lines_logged;
    const bool added = MergeMetrics(*t, in.metrics_text);
    // A trial the study is stopping still reports; it is not stopped early again.
    const bool active = t->state == model::TrialState::kActive;
    std::optional<std::string> stop = added && active ? StopReason(*t) : std::nullopt;
    if (stop) {
      t->state = model::TrialState::kStopping;
      t->stopped_early = true;
      Log(TrialName(*t) + " is stopped early: " + *stop + ".");
    }
    if (added || t->skipped_lines_logged != skipped_before) Commit();
    if (stop) StopTrial(*t, "Stopped early: " + *stop + ".");
  }

  // Merges the trial's new reports and logs them; true when any arrived.
  bool MergeMetrics(model::Trial& t, const std::string& text) {
    if (text.empty()) return false;
    MergedMetrics merged = MergeMeasurements(text, spec().tag(), t.start_time, &t);
    for (const model::TrialMeasurement& m : merged.added) {
      Log(TrialName(t) + " reported " + spec().tag() + " " + Num(m.value) + " at step " +
          std::to_string(m.step) + ".");
    }
    if (merged.skipped > t.skipped_lines_logged) {
      Log(TrialName(t) + ": " + std::to_string(merged.skipped) +
          " line(s) of its metrics file were skipped (malformed, or not a report of '" +
          spec().tag() + "').");
      t.skipped_lines_logged = merged.skipped;
    }
    return !merged.added.empty();
  }

  // Why the study's early-stopping rule stops `trial` now, if it does.
  std::optional<std::string> StopReason(const model::Trial& trial) {
    if (spec().stopping == model::StoppingRule::kNone || trial.job_uid.empty()) {
      return std::nullopt;
    }
    std::vector<tuning::TrialCurve> done;
    for (const model::Trial& t : job().trials) {
      if (t.state == model::TrialState::kSucceeded && !t.measurements.empty()) {
        done.push_back(CurveOf(spec(), t));
      }
    }
    tuning::StopDecision d =
        tuning::ShouldStop(spec().stopping, spec().goal, CurveOf(spec(), trial), done);
    if (!d.stop) return std::nullopt;
    return d.reason;
  }

  void StopTrial(const model::Trial& t, std::string why) {
    StopJob(t.id, t.job_uid, std::move(why));
  }
  void StopJob(int64_t trial_id, const std::string& job_uid, std::string why) {
    StudyAction a;
    a.kind = StudyActionKind::kStopTrial;
    a.trial_id = trial_id;
    a.job_uid = job_uid;
    a.message = std::move(why);
    out_.actions.push_back(std::move(a));
  }

  void EndTrial(model::Trial& trial, const StudyInput& in) {
    trial.final_measurement = FinalMeasurement(spec(), trial);
    trial.end_time = in.job_end_time != 0 ? in.job_end_time : now_;
    const std::string id = TrialName(trial);
    const bool cancelled = in.job_state == model::JobState::kCancelled;
    if (cancelled && !trial.stopped_early) {
      trial.state = model::TrialState::kCancelled;
      Log(id + " was cancelled.");
      return;  // A cancelled trial tells the tuner nothing.
    }
    if (in.job_state == model::JobState::kSucceeded || cancelled) {
      if (trial.final_measurement) {
        trial.state = model::TrialState::kSucceeded;
        Log(id + (trial.stopped_early ? " stopped early" : " succeeded") + ": " + spec().tag() +
            " " + Num(trial.final_measurement->value) + " at step " +
            std::to_string(trial.final_measurement->step) + ".");
      } else {
        trial.state = model::TrialState::kInfeasible;
        trial.infeasible_reason = "the trial ended without reporting the metric '" + spec().tag() +
                                  "' (cloudml-hypertune writes it to " + policy_.metrics_file_hint +
                                  ")";
        Log(id + " is infeasible: " + trial.infeasible_reason + ".");
      }
    } else {
      trial.state = model::TrialState::kFailed;
      trial.infeasible_reason =
          in.job_error ? in.job_error->message : std::string("the trial job failed");
      Log(id + " failed: " + trial.infeasible_reason);
    }
    Act(StudyActionKind::kObserve, "", trial.id);
  }

  void Fail(const std::string& why) {
    progress().failing = why;
    Log("The study fails: " + why);
    Commit();  // Stored: a restarted daemon goes on stopping the trials, then fails it.
    Step();
  }

  // maxFailedTrials; 0: the service decides, and here the first trial failing ends
  // the study (what Vertex documents), later failures only once all are done.
  bool TooManyFailed(const Counts& c) {
    const int max_failed = spec().max_failed_trials;
    if (max_failed > 0) return c.failed >= max_failed;
    return !job().trials.empty() && job().trials.front().state == model::TrialState::kFailed &&
           c.succeeded == 0;
  }

  std::string FailedTrialsReason(const Counts& c) {
    const model::Trial* last = nullptr;
    for (const model::Trial& t : job().trials) {
      if (t.state == model::TrialState::kFailed) last = &t;
    }
    return std::to_string(c.failed) + " of " + std::to_string(job().trials.size()) +
           " trials failed (maxFailedTrials " + std::to_string(spec().max_failed_trials) +
           "); the last, trial " + std::to_string(last->id) + ": " + last->infeasible_reason;
  }

  void Step() {
    if (model::IsTerminal(job().state)) return;
    const Counts c = CountTrials(job());
    if (Stopping()) return StopAll(c);
    if (TooManyFailed(c)) return Fail(FailedTrialsReason(c));
    AskForTrials(c);
    const bool budget_spent =
        static_cast<int>(job().trials.size()) >= spec().max_trials || progress().exhausted;
    if (c.active > 0 || !budget_spent) return;
    if (c.succeeded > 0) return FinishStudy(model::JobState::kSucceeded, std::nullopt);
    FinishStudy(model::JobState::kFailed,
                model::JobError{machines::kErrorCodeInternal,
                                "No trial reported the metric '" + spec().tag() +
                                    "': " + std::to_string(job().trials.size()) +
                                    " trials ended infeasible, failed or cancelled."});
  }

  // Their ends come back as kTrialJobEnded (or kTrialJobMissing for a job never
  // created); the study ends once none is active. Each trial is stopped once: it is
  // STOPPING from then on, committed before its stop (a restarted daemon stops the
  // jobs of STOPPING trials again). Stopping every active trial again at every trial's
  // end sent a cancelled 1,000-trial study's jobs half a million cancels.
  void StopAll(const Counts& c) {
    const bool cancelled = job().cancel_requested;
    std::vector<const model::Trial*> stopping;
    for (model::Trial& t : job().trials) {
      if (t.state != model::TrialState::kActive) continue;
      t.state = model::TrialState::kStopping;
      stopping.push_back(&t);
    }
    if (!stopping.empty()) Commit();
    for (const model::Trial* t : stopping) {
      StopTrial(*t, cancelled ? "The study was cancelled." : "The study failed.");
    }
    if (c.active > 0) return;
    if (cancelled) {
      return FinishStudy(model::JobState::kCancelled,
                         model::JobError{machines::kErrorCodeCancelled, "Job was cancelled."});
    }
    FinishStudy(model::JobState::kFailed,
                model::JobError{machines::kErrorCodeInternal, progress().failing});
  }

  // Asks the tuner for the trials there is room for (one question at a time).
  void AskForTrials(const Counts& c) {
    const int room = std::min(spec().parallel_trials - c.active,
                              spec().max_trials - static_cast<int>(job().trials.size()));
    if (room <= 0 || progress().exhausted || out_.record.suggesting) return;
    out_.record.suggesting = true;
    StudyAction a;
    a.kind = StudyActionKind::kSuggest;
    a.count = room;
    for (const model::Trial& t : job().trials) {
      if (model::IsTrialActive(t)) a.pending.push_back(t.params);
    }
    out_.actions.push_back(std::move(a));
  }

  void FinishStudy(model::JobState state, std::optional<model::JobError> error) {
    const Counts c = CountTrials(job());
    SayLast(std::string("Study ") + model::JobStateName(state) + ": " +
            std::to_string(c.succeeded) + " of " + std::to_string(job().trials.size()) +
            " trials succeeded.");
    End(state, std::move(error));
  }

  StudyDecision out_;
  const StudyPolicy& policy_;
  const TimeMicros now_;
};

}  // namespace

StudyPhase PhaseOf(const StudyRecord& record) {
  const model::Job& job = record.job;
  switch (job.state) {
    case model::JobState::kSucceeded:
      return StudyPhase::kSucceeded;
    case model::JobState::kFailed:
      return StudyPhase::kFailed;
    case model::JobState::kCancelled:
      return StudyPhase::kCancelled;
    default:
      break;
  }
  if (job.cancel_requested) return StudyPhase::kCancelling;
  if (!job.study_progress.failing.empty()) return StudyPhase::kFailing;
  return job.trials.empty() ? StudyPhase::kQueued : StudyPhase::kRunning;
}

const char* StudyPhaseName(StudyPhase phase) {
  switch (phase) {
    case StudyPhase::kQueued:
      return "QUEUED";
    case StudyPhase::kRunning:
      return "RUNNING";
    case StudyPhase::kFailing:
      return "FAILING";
    case StudyPhase::kCancelling:
      return "CANCELLING";
    case StudyPhase::kSucceeded:
      return "SUCCEEDED";
    case StudyPhase::kFailed:
      return "FAILED";
    case StudyPhase::kCancelled:
      return "CANCELLED";
  }
  return nullptr;
}

const char* StudyInputKindName(StudyInputKind kind) {
  switch (kind) {
    case StudyInputKind::kTick:
      return "TICK";
    case StudyInputKind::kCancel:
      return "CANCEL";
    case StudyInputKind::kSuggested:
      return "SUGGESTED";
    case StudyInputKind::kTrialJobEnded:
      return "TRIAL_JOB_ENDED";
    case StudyInputKind::kTrialJobMissing:
      return "TRIAL_JOB_MISSING";
    case StudyInputKind::kTrialJobRefused:
      return "TRIAL_JOB_REFUSED";
    case StudyInputKind::kMetricsRead:
      return "METRICS_READ";
    case StudyInputKind::kSubmitted:
      return "SUBMITTED";
    case StudyInputKind::kTrialJobCreated:
      return "TRIAL_JOB_CREATED";
    case StudyInputKind::kSetAside:
      return "SET_ASIDE";
  }
  return nullptr;
}

StudyDecision DecideStudy(StudyRecord record, const StudyInput& input, const StudyPolicy& policy,
                          TimeMicros now) {
  StudyMachine d(std::move(record), policy, now);
  d.Run(input);
  return d.Take();
}

StudyDecision DecideStudyBatch(StudyRecord record, const std::vector<StudyInput>& inputs,
                               const StudyPolicy& policy, TimeMicros now) {
  StudyDecision batch;
  batch.record = std::move(record);
  std::optional<StudyAction> merged;
  std::vector<model::OutboxLine> lines;
  std::vector<StudyAction> after;
  for (const StudyInput& in : inputs) {
    StudyDecision d = DecideStudy(std::move(batch.record), in, policy, now);
    batch.record = std::move(d.record);
    for (StudyAction& a : d.actions) {
      if (a.kind != StudyActionKind::kCommit || model::IsTerminal(a.record.state)) {
        after.push_back(std::move(a));
        continue;
      }
      for (model::OutboxLine& l : a.record.outbox.lines) lines.push_back(std::move(l));
      merged = std::move(a);  // Only the last commit's record is kept: each is the whole study.
    }
  }
  if (merged) {
    merged->record.outbox.lines = std::move(lines);
    batch.actions.push_back(std::move(*merged));
  }
  for (StudyAction& a : after) batch.actions.push_back(std::move(a));
  return batch;
}

}  // namespace ty::machines
