#include "service/study_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>

#include "model/spec_record.h"
#include "service/trial_jobs.h"
#include "tuning/early_stopping.h"
#include "tuning/tuner.h"

namespace ty::service {

namespace {

bool Active(const model::Trial& t) { return !model::IsTrialDone(t.state); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// A tuner seed of its own per study, stable across restarts.
uint64_t SeedOf(const std::string& uid) { return std::hash<std::string>{}(uid); }

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

}  // namespace

StudyController::StudyController(LoopCore* core, jobstore::JobStore* store, JobController* jobs,
                                 std::string trial_root,
                                 std::function<AfterCommit()> after_commit_for_test)
    : core_(core),
      store_(store),
      jobs_(jobs),
      trial_root_(std::move(trial_root)),
      after_commit_for_test_(std::move(after_commit_for_test)) {}

StudyController::~StudyController() = default;

StudyController::Study* StudyController::Find(const std::string& uid) {
  auto it = studies_.find(uid);
  return it == studies_.end() ? nullptr : &it->second;
}

model::Trial* StudyController::FindTrial(Study& st, int64_t trial_id) {
  for (model::Trial& t : st.job.trials) {
    if (t.id == trial_id) return &t;
  }
  return nullptr;
}

bool StudyController::IsLive(const std::string& uid) const { return studies_.count(uid) > 0; }

// ---------------------------------------------------------------------------
// Start-up

Status StudyController::Adopt(model::Job job) {
  if (!job.spec.study.has_value()) return InvalidArgument("job " + job.uid + " is not a study");
  Study st;
  st.spec = *job.spec.study;
  auto space = tuning::SearchSpace::Create(st.spec.params);
  if (!space.ok()) return space.status();
  tuning::StudyOptions options;
  options.goal = st.spec.goal;
  options.algorithm = st.spec.algorithm;
  options.max_trials = st.spec.max_trials;
  options.parallel = st.spec.parallel_trials;
  options.seed = SeedOf(job.uid);
  auto tuner = tuning::Tuner::Create(std::move(*space), options);
  if (!tuner.ok()) return tuner.status();
  st.tuner = std::make_unique<tuning::Tuner>(std::move(*tuner));
  ObservePreviousStudy(st, job);
  // The tuner relearns the study from its finished trials, in the order they were run.
  for (const model::Trial& t : job.trials) {
    if (!t.job_uid.empty()) jobs_->ReserveUid(t.job_uid);
    if (Active(t) || t.state == model::TrialState::kCancelled) continue;
    st.tuner->Observe({t.params, model::ObjectiveOf(t)});
  }
  st.job = std::move(job);
  const std::string uid = st.job.uid;
  Publish(st.job);
  studies_[uid] = std::move(st);
  return Status::Ok();
}

// ml v1 resumePreviousJobId. Google documents only that the earlier job's study is
// continued; here its finished trials inform the suggestions (a grid continues where
// it stopped, the optimiser starts from what it learnt) while this job runs maxTrials
// trials of its own and lists only those. Trials whose parameters do not fit this
// job's space are left out.
Result<model::Job> StudyController::PreviousStudy(const model::Job& job) const {
  const std::string& id = job.spec.study->resume_previous_job_id;
  Result<model::Job> previous = store_->FindMlJob(job.project, id);
  if (previous.ok()) {
    Result<model::JobSpec> spec = RestoreSpec(*previous);
    if (spec.ok() && spec->study.has_value()) return previous;
  }
  return InvalidArgument(
             "Field: trainingInput.hyperparameters.resumePreviousJobId Error: "
             "no hyperparameter tuning job '" +
             id + "' in project " + job.project)
      .WithField("trainingInput.hyperparameters.resumePreviousJobId");
}

void StudyController::ObservePreviousStudy(Study& st, const model::Job& job) {
  if (st.spec.resume_previous_job_id.empty()) return;
  Result<model::Job> previous = PreviousStudy(job);
  if (!previous.ok()) return;  // Checked at submit; deleted since: start afresh.
  for (const model::Trial& t : previous->trials) {
    if (Active(t) || t.state == model::TrialState::kCancelled) continue;
    if (!st.tuner->space().Check(t.params).ok()) continue;
    st.tuner->Observe({t.params, model::ObjectiveOf(t)});
    ++st.prior_trials;
  }
}

Status StudyController::Load() {
  ASSIGN_OR_RETURN(std::vector<model::Job> stored, store_->ListLiveJobs());
  for (model::Job& job : stored) {
    Result<model::JobSpec> spec = RestoreSpec(job);
    if (!spec.ok() || !spec->study.has_value()) continue;
    job.spec = std::move(*spec);
    model::Job kept = job;
    Status s = Adopt(std::move(job));
    if (!s.ok()) SetAside(std::move(kept), s.message());
  }
  return Status::Ok();
}

void StudyController::SetAside(model::Job job, const std::string& why) {
  spdlog::error("study {}: the stored study can no longer be run: {}", job.uid, why);
  {
    std::lock_guard<std::mutex> lock(problems_mu_);
    problems_.push_back("study " + job.uid + ": " + why);
  }
  // Its trial jobs are jobs of their own: the job controller recovers or fails them.
  const TimeMicros now = core_->clock()->Now();
  job.state = model::JobState::kFailed;
  job.error = model::JobError{model::kErrorCodeInternal,
                              "Internal error: the stored study can no longer be run: " + why};
  job.end_time = job.update_time = job.phases.finished = now;
  Status s = store_->UpdateJob(job);
  if (!s.ok()) spdlog::error("study {}: cannot record its failure: {}", job.uid, s.ToString());
  jobs_->ServiceLog(job.uid, job.error->message, "ERROR");
}

std::vector<std::string> StudyController::problems() const {
  std::lock_guard<std::mutex> lock(problems_mu_);
  return problems_;
}

void StudyController::Start() {
  std::vector<std::string> uids;
  for (const auto& [uid, st] : studies_) uids.push_back(uid);
  for (const std::string& uid : uids) {
    Study* st = Find(uid);
    AnnounceUnannouncedStarts(*st);
    // Trials whose job ended while the daemon was down (or before the study recorded
    // it): end them now from the job's record.
    // A trial recorded just before a crash whose job was never created: create it now
    // under the uid the record holds (never a second job for one trial).
    for (model::Trial& t : st->job.trials) {
      if (!Active(t) || t.job_uid.empty()) continue;
      std::optional<model::Job> live = jobs_->GetLive(t.job_uid);
      if (live.has_value()) continue;
      Result<model::Job> stored = store_->GetJob(t.job_uid);
      if (stored.ok() && model::IsTerminal(stored->state)) {
        EndTrial(*st, t, *stored);
      } else if (!stored.ok() && stored.status().code() == StatusCode::kNotFound &&
                 !st->job.cancel_requested) {
        SubmitTrialJob(*st, t);
      }
    }
    Step(uid);
  }
}

// ---------------------------------------------------------------------------
// Requests

Result<model::Job> StudyController::Submit(model::Job job) {
  if (!job.spec.study->resume_previous_job_id.empty()) RETURN_IF_ERROR(PreviousStudy(job).status());
  job.uid = jobs_->AllocateUid();
  job.state = model::JobState::kQueued;
  if (job.create_time == 0) job.create_time = core_->clock()->Now();
  job.update_time = job.create_time;
  job.phases.queued = job.create_time;
  job.spec_record = model::EncodeSpecRecord(job.spec);
  if (core_->dead()) return Unavailable("the service is shutting down");
  Status s = store_->CreateJob(job);
  if (s.code() == StatusCode::kAlreadyExists && job.dialect == model::Dialect::kMlV1) {
    return AlreadyExists("Field: job.job_id Error: A job with this id already exists.")
        .WithField("job.job_id");
  }
  RETURN_IF_ERROR(s);
  model::Job created = job;
  RETURN_IF_ERROR(Adopt(std::move(job)));
  RETURN_IF_ERROR(AfterWrite());
  if (Study* st = Find(created.uid); !st->spec.resume_previous_job_id.empty()) {
    Log(*st, "Resuming the study of job " + st->spec.resume_previous_job_id + ": its " +
                 std::to_string(st->prior_trials) + " finished trials inform the suggestions.");
  }
  core_->Post([this, uid = created.uid] { Step(uid); });
  return created;
}

Status StudyController::Cancel(const std::string& uid) {
  Study* st = Find(uid);
  if (st == nullptr) return NotFound("study " + uid + " is not running");
  if (st->job.cancel_requested) return Status::Ok();
  st->job.cancel_requested = true;
  if (st->job.state != model::JobState::kQueued) st->job.state = model::JobState::kCancelling;
  RETURN_IF_ERROR(Commit(*st));
  Log(*st, "Cancelling the study and every running trial.");
  core_->Post([this, uid] { Step(uid); });
  return Status::Ok();
}

void StudyController::OnJobCommitted(const model::Job& job) {
  if (job.study_uid.empty() || !model::IsTerminal(job.state)) return;
  // Deferred: the job controller is in the middle of its own commit.
  core_->Post([this, job] {
    Study* st = Find(job.study_uid);
    if (st == nullptr) return;
    model::Trial* t = FindTrial(*st, job.trial_id);
    if (t == nullptr || !Active(*t)) return;
    EndTrial(*st, *t, job);
    Step(job.study_uid);
  });
}

// ---------------------------------------------------------------------------
// Decisions

void StudyController::Step(const std::string& uid) {
  Study* st = Find(uid);
  if (st == nullptr) return;
  model::Job& job = st->job;
  int active = 0, succeeded = 0, failed = 0;
  for (const model::Trial& t : job.trials) {
    active += Active(t);
    succeeded += t.state == model::TrialState::kSucceeded;
    failed += t.state == model::TrialState::kFailed;
  }
  const bool stopping = job.cancel_requested || !st->failing.empty();
  if (stopping) {
    bool dropped = false;
    for (model::Trial& t : job.trials) {
      if (!Active(t)) continue;
      Status s = jobs_->Cancel(
          t.job_uid, job.cancel_requested ? "The study was cancelled." : "The study failed.");
      if (s.code() == StatusCode::kNotFound) {  // Recorded, its job never created.
        t.state = model::TrialState::kCancelled;
        t.end_time = core_->clock()->Now();
        --active;
        dropped = true;
      }
    }
    if (dropped) Commit(*st).IgnoreError();
    if (active > 0) return;  // Their ends come back through OnJobCommitted.
    if (job.cancel_requested) {
      Finish(*st, model::JobState::kCancelled,
             model::JobError{model::kErrorCodeCancelled, "Job was cancelled."});
    } else {
      Finish(*st, model::JobState::kFailed,
             model::JobError{model::kErrorCodeInternal, st->failing});
    }
    return;
  }
  // maxFailedTrials; 0: the service decides, and here the first trial failing ends
  // the study (what Vertex documents), later failures only once all are done.
  const model::StudySpec& spec = st->spec;
  if ((spec.max_failed_trials > 0 && failed >= spec.max_failed_trials) ||
      (spec.max_failed_trials == 0 && !job.trials.empty() &&
       job.trials.front().state == model::TrialState::kFailed && succeeded == 0)) {
    const model::Trial* last = nullptr;
    for (const model::Trial& t : job.trials) {
      if (t.state == model::TrialState::kFailed) last = &t;
    }
    st->failing = std::to_string(failed) + " of " + std::to_string(job.trials.size()) +
                  " trials failed (maxFailedTrials " + std::to_string(spec.max_failed_trials) +
                  "); the last, trial " + std::to_string(last->id) + ": " + last->infeasible_reason;
    Log(*st, "The study fails: " + st->failing);
    Step(uid);
    return;
  }
  StartTrials(*st);
  active = static_cast<int>(std::count_if(job.trials.begin(), job.trials.end(), Active));
  const bool budget_spent = static_cast<int>(job.trials.size()) >= spec.max_trials || st->exhausted;
  if (active > 0 || !budget_spent) return;
  if (succeeded > 0) {
    Finish(*st, model::JobState::kSucceeded, std::nullopt);
  } else {
    Finish(*st, model::JobState::kFailed,
           model::JobError{model::kErrorCodeInternal,
                           "No trial reported the metric '" + spec.tag() +
                               "': " + std::to_string(job.trials.size()) +
                               " trials ended infeasible, failed or cancelled."});
  }
}

void StudyController::StartTrials(Study& st) {
  const model::StudySpec& spec = st.spec;
  std::vector<model::Assignment> pending;
  for (const model::Trial& t : st.job.trials) {
    if (Active(t)) pending.push_back(t.params);
  }
  const int room = std::min(spec.parallel_trials - static_cast<int>(pending.size()),
                            spec.max_trials - static_cast<int>(st.job.trials.size()));
  if (room <= 0 || st.exhausted || st.suggesting) return;
  st.suggesting = true;
  // A copy: observations arriving meanwhile go to the study's own tuner. The copy's
  // answer is what the study's would have been now (seeded from the history).
  auto tuner = std::make_shared<tuning::Tuner>(*st.tuner);
  core_->Blocking([this, uid = st.job.uid, tuner, room, pending = std::move(pending)] {
    std::vector<model::Assignment> next;
    std::string error;
    try {
      next = tuner->Suggest(room, pending);
    } catch (const std::exception& e) {
      error = e.what();
    }
    core_->Post([this, uid, next = std::move(next), room, error]() mutable {
      AddTrials(uid, std::move(next), room, error);
    });
  });
}

void StudyController::AddTrials(const std::string& uid, std::vector<model::Assignment> next,
                                int asked, const std::string& tuner_error) {
  Study* st = Find(uid);
  if (st == nullptr) return;  // Finished (cancelled) meanwhile.
  st->suggesting = false;
  model::Job& job = st->job;
  if (job.cancel_requested || !st->failing.empty()) return Step(uid);
  if (!tuner_error.empty()) {
    st->failing = "the tuner failed: " + tuner_error;
    Log(*st, "The study fails: " + st->failing);
    return Step(uid);
  }
  if (static_cast<int>(next.size()) < asked) st->exhausted = true;
  const TimeMicros now = core_->clock()->Now();
  for (model::Assignment& params : next) {
    model::Trial t;
    t.id = static_cast<int64_t>(job.trials.size()) + 1;
    t.params = std::move(params);
    t.start_time = now;
    t.job_uid = jobs_->AllocateUid();  // Recorded before the job exists (see Start).
    job.trials.push_back(std::move(t));
  }
  if (job.state == model::JobState::kQueued && !job.trials.empty()) {
    job.state = model::JobState::kRunning;
    job.start_time = now;
    job.phases.admitted = now;
  }
  // Recorded first: a crash from here on finds them and submits their jobs.
  const size_t first_new = job.trials.size() - next.size();
  if (!Commit(*st).ok()) return;
  for (size_t i = first_new; i < job.trials.size(); ++i) SubmitTrialJob(*st, job.trials[i]);
  Step(uid);  // Room may have opened meanwhile, or the space run out.
}

void StudyController::SubmitTrialJob(Study& st, model::Trial& trial) {
  model::Job trial_job = TrialJob(st.job, st.spec, trial.id, trial.params);
  trial_job.uid = trial.job_uid;
  trial_job.create_time = core_->clock()->Now();
  trial_job.update_time = trial_job.create_time;
  trial_job.spec_json = st.job.spec_json;
  Result<model::Job> created = jobs_->Submit(std::move(trial_job));
  if (!created.ok()) {
    // The trial cannot run at all (a trial job id taken by a user's job...): it fails.
    trial.state = model::TrialState::kFailed;
    trial.infeasible_reason = "its job could not be created: " + created.status().message();
    trial.end_time = core_->clock()->Now();
    st.tuner->Observe({trial.params, std::nullopt});
    Commit(st).IgnoreError();
    Log(st, "Trial " + std::to_string(trial.id) + " failed: " + trial.infeasible_reason);
    return;
  }
  AnnounceStart(st, trial);
}

void StudyController::AnnounceStart(const Study& st, const model::Trial& trial) {
  Log(st, StartedLinePrefix(trial) + " (job " + trial.job_uid +
              "): " + DescribeParams(st.spec, trial.params) + ".");
}

std::string StudyController::StartedLinePrefix(const model::Trial& trial) {
  return "Trial " + std::to_string(trial.id) + " started";
}

// A crash between creating a trial's job and logging its start leaves the job without
// its line: write the ones missing (each trial's start is announced exactly once).
void StudyController::AnnounceUnannouncedStarts(Study& st) {
  std::vector<std::string> lines = jobs_->ServiceMessages(st.job.uid);
  for (const model::Trial& t : st.job.trials) {
    if (t.job_uid.empty()) continue;
    const std::string prefix = StartedLinePrefix(t) + " ";
    bool announced = std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.compare(0, prefix.size(), prefix) == 0;
    });
    if (announced) continue;
    if (jobs_->GetLive(t.job_uid).has_value() || store_->GetJob(t.job_uid).ok()) {
      AnnounceStart(st, t);
    }
  }
}

bool StudyController::ReadMetrics(Study& st, model::Trial& trial) {
  if (trial_root_.empty() || trial.job_uid.empty()) return false;
  std::string text =
      ReadFile(TrialMetricsDir(trial_root_, trial.job_uid) + "/" + kTrialMetricsFile);
  if (text.empty()) return false;
  MergedMetrics merged = MergeMeasurements(text, st.spec.tag(), trial.start_time, &trial);
  const std::string id = "Trial " + std::to_string(trial.id);
  for (const model::TrialMeasurement& m : merged.added) {
    Log(st, id + " reported " + st.spec.tag() + " " + Num(m.value) + " at step " +
                std::to_string(m.step) + ".");
  }
  int64_t& logged = st.skipped_logged[trial.id];
  if (merged.skipped > logged) {
    Log(st, id + ": " + std::to_string(merged.skipped) +
                " line(s) of its metrics file were skipped (malformed, or not a report of '" +
                st.spec.tag() + "').");
    logged = merged.skipped;
  }
  return !merged.added.empty();
}

void StudyController::EndTrial(Study& st, model::Trial& trial, const model::Job& trial_job) {
  ReadMetrics(st, trial);
  trial.final_measurement = FinalMeasurement(st.spec, trial);
  trial.end_time = trial_job.end_time != 0 ? trial_job.end_time : core_->clock()->Now();
  const std::string id = "Trial " + std::to_string(trial.id);
  switch (trial_job.state) {
    case model::JobState::kSucceeded:
    case model::JobState::kCancelled:
      if (trial_job.state == model::JobState::kCancelled && !trial.stopped_early) {
        trial.state = model::TrialState::kCancelled;
        Log(st, id + " was cancelled.");
        break;
      }
      if (trial.final_measurement) {
        trial.state = model::TrialState::kSucceeded;
        Log(st, id + (trial.stopped_early ? " stopped early" : " succeeded") + ": " +
                    st.spec.tag() + " " + Num(trial.final_measurement->value) + " at step " +
                    std::to_string(trial.final_measurement->step) + ".");
      } else {
        trial.state = model::TrialState::kInfeasible;
        trial.infeasible_reason = "the trial ended without reporting the metric '" + st.spec.tag() +
                                  "' (cloudml-hypertune writes it to " +
                                  std::string(kReplicaMetricsDir) + "/" + kTrialMetricsFile + ")";
        Log(st, id + " is infeasible: " + trial.infeasible_reason + ".");
      }
      break;
    default:
      trial.state = model::TrialState::kFailed;
      trial.infeasible_reason =
          trial_job.error ? trial_job.error->message : std::string("the trial job failed");
      Log(st, id + " failed: " + trial.infeasible_reason);
      break;
  }
  if (trial.state != model::TrialState::kCancelled) {
    st.tuner->Observe({trial.params, model::ObjectiveOf(trial)});
  }
  Commit(st).IgnoreError();
}

void StudyController::Finish(Study& st, model::JobState state,
                             std::optional<model::JobError> error) {
  const TimeMicros now = core_->clock()->Now();
  st.job.state = state;
  st.job.error = std::move(error);
  st.job.end_time = now;
  st.job.phases.finished = now;
  int succeeded = 0;
  for (const model::Trial& t : st.job.trials) succeeded += t.state == model::TrialState::kSucceeded;
  // Logged before the commit, as a trial's end is: a crash in between repeats the line
  // after the restart rather than lose it.
  Log(st, std::string("Study ") + model::JobStateName(state) + ": " + std::to_string(succeeded) +
              " of " + std::to_string(st.job.trials.size()) + " trials succeeded.");
  if (!Commit(st).ok()) return;
  const std::string uid = st.job.uid;
  studies_.erase(uid);
  published_.Drop(uid);
}

// ---------------------------------------------------------------------------
// Intermediate measurements and early stopping

void StudyController::Poll() {
  if (studies_.empty()) {
    polling_ = false;  // The next commit of a study starts it again.
    return;
  }
  for (auto& [uid, st] : studies_) {
    bool changed = false;
    for (model::Trial& t : st.job.trials) {
      if (t.state != model::TrialState::kActive) continue;
      if (!ReadMetrics(st, t)) continue;
      changed = true;
      ConsiderStopping(st, t);
    }
    if (changed) Commit(st).IgnoreError();
  }
  core_->At(core_->clock()->Now() + kTrialPollInterval, [this] { Poll(); });
}

void StudyController::ConsiderStopping(Study& st, model::Trial& trial) {
  if (st.spec.stopping == model::StoppingRule::kNone || trial.job_uid.empty()) return;
  std::vector<tuning::TrialCurve> done;
  for (const model::Trial& t : st.job.trials) {
    if (t.state == model::TrialState::kSucceeded && !t.measurements.empty()) {
      done.push_back(CurveOf(st.spec, t));
    }
  }
  tuning::StopDecision d =
      tuning::ShouldStop(st.spec.stopping, st.spec.goal, CurveOf(st.spec, trial), done);
  if (!d.stop) return;
  trial.state = model::TrialState::kStopping;
  trial.stopped_early = true;
  Log(st, "Trial " + std::to_string(trial.id) + " is stopped early: " + d.reason + ".");
  jobs_->Cancel(trial.job_uid, "Stopped early: " + d.reason + ".").IgnoreError();
}

// ---------------------------------------------------------------------------
// Records

Status StudyController::Commit(Study& st) {
  if (core_->dead()) return Unavailable("the service is shutting down");
  st.job.update_time = core_->clock()->Now();
  Status s = store_->UpdateJob(st.job);
  if (!s.ok()) {
    spdlog::error("study {}: store write failed: {}", st.job.uid, s.ToString());
    return s;
  }
  Publish(st.job);
  RETURN_IF_ERROR(AfterWrite());
  if (!polling_) {
    polling_ = true;
    core_->At(core_->clock()->Now() + kTrialPollInterval, [this] { Poll(); });
  }
  return Status::Ok();
}

Status StudyController::AfterWrite() {
  if (!after_commit_for_test_) return Status::Ok();
  switch (after_commit_for_test_()) {
    case AfterCommit::kContinue:
      return Status::Ok();
    case AfterCommit::kCrashBeforeActions:
      core_->Halt();
      return Aborted("the daemon died (test)");
    case AfterCommit::kCrashAfterActions:
      core_->HaltAfterQueuedBlockingWork();  // This task goes on; nothing it commits lands.
      return Status::Ok();
  }
  return Status::Ok();
}

void StudyController::Publish(const model::Job& job) { published_.Put(job); }

void StudyController::Log(const Study& st, const std::string& message) {
  if (core_->dead()) return;
  jobs_->ServiceLog(st.job.uid, message, "INFO");
}

std::optional<model::Job> StudyController::GetLive(const std::string& uid) const {
  return published_.Get(uid);
}

std::optional<std::string> StudyController::FindLiveMl(const std::string& project,
                                                       const std::string& job_id) const {
  return published_.FindMl(project, job_id);
}

}  // namespace ty::service
