#include "service/study_controller.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "machines/trial_jobs.h"
#include "model/spec_record.h"
#include "service/job_logs.h"
#include "service/study_tuner.h"
#include "tuning/tuner.h"
#include "wire/dialect.h"

namespace ty::service {

namespace {

machines::StudyInput EndedInput(const model::Job& trial_job, std::string metrics_text) {
  machines::StudyInput in;
  in.kind = machines::StudyInputKind::kTrialJobEnded;
  in.trial_id = trial_job.trial_id;
  in.job_state = trial_job.state;
  in.job_error = trial_job.error;
  in.job_end_time = trial_job.end_time;
  in.metrics_text = std::move(metrics_text);
  return in;
}

machines::StudyInput TrialInput(machines::StudyInputKind kind, int64_t trial_id) {
  machines::StudyInput in;
  in.kind = kind;
  in.trial_id = trial_id;
  return in;
}

}  // namespace

StudyController::StudyController(LoopCore* core, jobstore::JobStore* store, logs::LogStore* logs,
                                 UidSource* uids, const PublishedJobs* live_jobs,
                                 std::string trial_root)
    : core_(core),
      store_(store),
      logs_(logs),
      uids_(uids),
      live_jobs_(live_jobs),
      trial_root_(std::move(trial_root)) {
  core_->Receive<JobCommitted>([this](const JobCommitted& m) { OnJobCommitted(m); });
  core_->Receive<TrialJobRefused>([this](const TrialJobRefused& m) { OnTrialJobRefused(m); });
}

StudyController::~StudyController() = default;

StudyController::Study* StudyController::Find(const std::string& uid) {
  auto it = studies_.find(uid);
  return it == studies_.end() ? nullptr : &it->second;
}

const model::Trial* StudyController::FindTrial(const Study& st, int64_t trial_id) {
  for (const model::Trial& t : st.record.job.trials) {
    if (t.id == trial_id) return &t;
  }
  return nullptr;
}

bool StudyController::IsLive(const std::string& uid) const { return studies_.count(uid) > 0; }

// ---------------------------------------------------------------------------
// Start-up

Status StudyController::Adopt(model::Job job) {
  ASSIGN_OR_RETURN(Study st, MakeStudy(std::move(job)));
  const std::string uid = st.record.job.uid;
  Publish(st.record.job);
  studies_[uid] = std::move(st);
  return Status::Ok();
}

Result<StudyController::Study> StudyController::MakeStudy(model::Job job) {
  ASSIGN_OR_RETURN(StudyTuner tuning, OpenStudyTuner(job, store_));
  for (const model::Trial& t : job.trials) uids_->Reserve(t.job_uid);
  Study st;
  st.tuner = std::move(tuning.tuner);
  st.prior_trials = tuning.prior_trials;
  st.record.spec = job.spec.study;
  st.record.job = std::move(job);
  return st;
}

Status StudyController::Load() {
  ASSIGN_OR_RETURN(std::vector<model::Job> stored, store_->ListLiveJobs());
  for (model::Job& job : stored) {
    if (model::IsTerminal(job.state)) continue;  // Its last lines: the job controller's.
    Result<model::JobSpec> spec = wire::RestoreSpec(job);
    if (!spec.ok() || !spec->study) continue;
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
  machines::StudyRecord record;
  record.spec = job.spec.study;
  record.job = std::move(job);
  machines::StudyInput in;
  in.kind = machines::StudyInputKind::kSetAside;
  in.message = why;
  machines::StudyDecision d =
      machines::DecideStudy(std::move(record), in, policy_, core_->clock()->Now());
  for (const machines::StudyAction& a : d.actions) {
    if (a.kind != machines::StudyActionKind::kCommit) continue;
    if (Status s = Commit(a.record.uid, a.record); !s.ok()) {
      spdlog::error("study {}: cannot record its failure: {}", a.record.uid, s.ToString());
    }
  }
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
    for (machines::StudyInput& in : ReconcileTrials(*st)) {
      if (Find(uid) == nullptr) break;
      Deliver(uid, std::move(in)).IgnoreError();
    }
    if (Find(uid) != nullptr) Deliver(uid, machines::StudyInput{}).IgnoreError();
  }
}

// Trials whose job ended while the daemon was down (or before the study recorded it)
// end from the job's record; a trial recorded just before a crash whose job was never
// created is missing (the machine creates it, or cancels it in a stopping study).
std::vector<machines::StudyInput> StudyController::ReconcileTrials(Study& st) {
  std::vector<machines::StudyInput> inputs;
  for (const model::Trial& t : st.record.job.trials) {
    if (!model::IsTrialActive(t) || t.job_uid.empty()) continue;
    if (live_jobs_->Get(t.job_uid).has_value()) {
      // Its stop was decided and committed; the daemon may have died before sending it.
      if (t.state == model::TrialState::kStopping) {
        StopTrialJob(t.job_uid, t.stopped_early ? "Stopped early." : "The study stopped it.");
      }
      continue;
    }
    Result<model::Job> stored = store_->GetJob(t.job_uid);
    if (stored.ok() && model::IsTerminal(stored->state)) {
      inputs.push_back(EndedInput(*stored, MetricsText(t)));
    } else if (!stored.ok() && stored.status().code() == StatusCode::kNotFound) {
      inputs.push_back(TrialInput(machines::StudyInputKind::kTrialJobMissing, t.id));
    }
  }
  return inputs;
}

// ---------------------------------------------------------------------------
// Requests

Result<model::Job> StudyController::Submit(model::Job job) {
  if (!job.spec.study->resume_previous_job_id.empty()) {
    RETURN_IF_ERROR(PreviousStudy(job, store_).status());
  }
  job.uid = uids_->Next();
  job.spec_record = model::EncodeSpecRecord(job.spec);
  ASSIGN_OR_RETURN(Study st, MakeStudy(std::move(job)));
  machines::StudyInput in;
  in.kind = machines::StudyInputKind::kSubmitted;
  if (const std::string& previous = st.record.spec->resume_previous_job_id; !previous.empty()) {
    in.message = "Resuming the study of job " + previous + ": its " +
                 std::to_string(st.prior_trials) + " finished trials inform the suggestions.";
  }
  machines::StudyDecision d =
      machines::DecideStudy(std::move(st.record), in, policy_, core_->clock()->Now());
  st.record = std::move(d.record);
  for (const machines::StudyAction& a : d.actions) {
    if (a.kind != machines::StudyActionKind::kCommit) continue;
    Status s = Commit(a.record.uid, a.record, a.create);
    if (s.code() == StatusCode::kAlreadyExists && a.record.dialect == model::Dialect::kMlV1) {
      return AlreadyExists("Field: job.job_id Error: A job with this id already exists.")
          .WithField("job.job_id");
    }
    RETURN_IF_ERROR(s);
  }
  model::Job created = st.record.job;  // Commit published it.
  studies_[created.uid] = std::move(st);
  core_->Post([this, uid = created.uid] {
    if (Find(uid) != nullptr) Deliver(uid, machines::StudyInput{}).IgnoreError();
  });
  return created;
}

Status StudyController::Cancel(const std::string& uid) {
  if (Find(uid) == nullptr) return NotFound("study " + uid + " is not running");
  machines::StudyInput in;
  in.kind = machines::StudyInputKind::kCancel;
  Status s = Deliver(uid, std::move(in));
  if (Study* st = Find(uid); !s.ok() && st != nullptr && st->stalled) {
    return Unavailable("the store cannot write now (" + s.message() +
                       "); the cancel is kept and takes effect once it can");
  }
  return s;
}

void StudyController::OnJobCommitted(const JobCommitted& m) {
  const model::Job& job = *m.job;
  if (job.study_uid.empty()) return;
  Study* st = Find(job.study_uid);
  const model::Trial* t = st == nullptr ? nullptr : FindTrial(*st, job.trial_id);
  const bool wanted = t != nullptr && model::IsTrialActive(*t) && t->job_uid == job.uid;
  if (m.before == model::JobState::kUnspecified) {
    if (st != nullptr) {
      machines::StudyInput in =
          TrialInput(machines::StudyInputKind::kTrialJobCreated, job.trial_id);
      in.job_uid = job.uid;
      in.job_state = job.state;
      Deliver(job.study_uid, std::move(in)).IgnoreError();
    } else if (!model::IsTerminal(job.state)) {
      StopTrialJob(job.uid, "The study no longer runs this trial.");  // The study finished.
    }
    return;
  }
  if (!wanted || !model::IsTerminal(job.state)) return;
  QueueTrialEnd(job.study_uid, EndedInput(job, MetricsText(*t)));
}

void StudyController::QueueTrialEnd(const std::string& study_uid, machines::StudyInput input) {
  std::vector<machines::StudyInput>& waiting = ended_[study_uid];
  waiting.push_back(std::move(input));
  if (waiting.size() == 1) core_->Post([this, study_uid] { DeliverEnds(study_uid); });
}

void StudyController::DeliverEnds(const std::string& uid) {
  auto it = ended_.find(uid);
  if (it == ended_.end()) return;
  std::vector<machines::StudyInput> inputs = std::move(it->second);
  ended_.erase(it);
  Study* st = Find(uid);
  if (st == nullptr || core_->dead()) return;
  // Behind a commit the store refused, the ends wait their turn like any input.
  if (st->stalled) return Keep(*st, std::move(inputs));
  machines::StudyDecision d =
      machines::DecideStudyBatch(std::move(st->record), inputs, policy_, core_->clock()->Now());
  st->record = std::move(d.record);
  std::vector<machines::StudyInput> follow_ups;
  if (!Perform(*st, d.actions, &follow_ups).ok()) {
    if (st = Find(uid); st != nullptr && st->stalled) Keep(*st, std::move(follow_ups));
    return;
  }
  for (machines::StudyInput& f : follow_ups) {
    if (Find(uid) == nullptr) break;
    Deliver(uid, std::move(f)).IgnoreError();
  }
}

void StudyController::OnTrialJobRefused(const TrialJobRefused& m) {
  if (Find(m.study_uid) == nullptr) return;
  machines::StudyInput in = TrialInput(machines::StudyInputKind::kTrialJobRefused, m.trial_id);
  in.message = m.message;
  Deliver(m.study_uid, std::move(in)).IgnoreError();
}

// ---------------------------------------------------------------------------
// The inbox: decide, commit, act

Status StudyController::Deliver(const std::string& uid, machines::StudyInput input) {
  if (Study* st = Find(uid); st != nullptr && st->stalled) return Keep(*st, std::move(input));
  std::vector<machines::StudyInput> inbox;
  inbox.push_back(std::move(input));
  Status first = Status::Ok();
  for (size_t i = 0; i < inbox.size(); ++i) {
    Study* st = Find(uid);
    if (st == nullptr || core_->dead()) break;
    machines::StudyDecision d =
        machines::DecideStudy(std::move(st->record), inbox[i], policy_, core_->clock()->Now());
    st->record = std::move(d.record);
    std::vector<machines::StudyInput> follow_ups;
    Status s = Perform(*st, d.actions, &follow_ups);
    for (machines::StudyInput& f : follow_ups) inbox.push_back(std::move(f));
    if (i == 0) first = s;
    if (s.ok()) continue;
    // The inputs not yet decided wait behind the stalled commit, in order.
    if (st = Find(uid); st != nullptr && st->stalled) {
      Keep(*st, std::vector<machines::StudyInput>(std::make_move_iterator(inbox.begin() + i + 1),
                                                  std::make_move_iterator(inbox.end())));
    }
    break;
  }
  return first;
}

void StudyController::Stall(Study& st, const model::Job& record,
                            std::vector<machines::StudyAction> after, const Status& why) {
  if (core_->dead()) return;  // A stopping service: the next daemon decides again.
  const std::string uid = st.record.job.uid;
  if (MeaningOf(why) == CommitFailure::kDrop) {
    spdlog::error("study {}: store write failed: {}", uid, why.ToString());
    return;
  }
  st.stalled = Study::Stalled{record, std::move(after), {}, 1};
  writes_.Failed("study", uid, why, core_->clock()->Now(), /*first=*/true);
  ScheduleRetry(uid, 1);
}

Status StudyController::Keep(Study& st, machines::StudyInput input) {
  if (input.kind != machines::StudyInputKind::kMetricsRead) {
    std::deque<machines::StudyInput>& inputs = st.stalled->inputs;
    if (inputs.size() >= HeldInputs::kMaxPerJob) {
      spdlog::error("study {}: more than {} inputs wait for the store; the oldest is lost",
                    st.record.job.uid, HeldInputs::kMaxPerJob);
      inputs.pop_front();
    }
    inputs.push_back(std::move(input));
  }
  return Unavailable("the study's earlier decisions wait for the store; kept until it writes");
}

void StudyController::Keep(Study& st, std::vector<machines::StudyInput> inputs) {
  for (machines::StudyInput& in : inputs) Keep(st, std::move(in)).IgnoreError();
}

void StudyController::ScheduleRetry(const std::string& uid, int tries) {
  core_->At(core_->clock()->Now() + RetryDelay(tries), [this, uid] { RetryStalled(uid); });
}

void StudyController::RetryStalled(const std::string& uid) {
  Study* st = Find(uid);
  if (st == nullptr || !st->stalled || core_->dead()) return;
  Status s = Commit(uid, st->stalled->record);
  if (!s.ok() && MeaningOf(s) == CommitFailure::kRetry && !core_->dead()) {
    writes_.Failed("study", uid, s, core_->clock()->Now(), /*first=*/false);
    return ScheduleRetry(uid, ++st->stalled->tries);
  }
  Study::Stalled done = std::move(*st->stalled);
  st->stalled.reset();
  writes_.Landed("study", uid);
  if (!s.ok()) {
    spdlog::error("study {}: store write failed: {}", uid, s.ToString());
    return;
  }
  std::vector<machines::StudyInput> next;
  if (!Perform(*st, done.after, &next).ok() && (st = Find(uid)) != nullptr && st->stalled) {
    Keep(*st, std::move(next));
    Keep(*st, std::vector<machines::StudyInput>(std::make_move_iterator(done.inputs.begin()),
                                                std::make_move_iterator(done.inputs.end())));
    return;
  }
  next.insert(next.end(), std::make_move_iterator(done.inputs.begin()),
              std::make_move_iterator(done.inputs.end()));
  for (machines::StudyInput& in : next) {
    if (Find(uid) == nullptr) break;
    Deliver(uid, std::move(in)).IgnoreError();  // Kept again if the store fails again.
  }
}

Status StudyController::Perform(Study& st, const std::vector<machines::StudyAction>& actions,
                                std::vector<machines::StudyInput>* follow_ups) {
  for (auto it = actions.begin(); it != actions.end(); ++it) {
    const machines::StudyAction& a = *it;
    switch (a.kind) {
      case machines::StudyActionKind::kCommit:
        if (Status s = Commit(st.record.job.uid, a.record, a.create); !s.ok()) {
          Stall(st, a.record, std::vector<machines::StudyAction>(it + 1, actions.end()), s);
          return s;
        }
        break;
      case machines::StudyActionKind::kSuggest:
        Suggest(st, a.count, a.pending);
        break;
      case machines::StudyActionKind::kSubmitTrial:
        CreateTrialJob(st, a.trial_id);
        break;
      case machines::StudyActionKind::kStopTrial:
        if (!StopTrialJob(a.job_uid, a.message)) {
          follow_ups->push_back(TrialInput(machines::StudyInputKind::kTrialJobMissing, a.trial_id));
        }
        break;
      case machines::StudyActionKind::kObserve:
        if (const model::Trial* t = FindTrial(st, a.trial_id)) {
          st.tuner->Observe({t->params, model::ObjectiveOf(*t)});
        }
        break;
      case machines::StudyActionKind::kForget: {
        const std::string uid = st.record.job.uid;
        studies_.erase(uid);  // `st` is gone: nothing may follow.
        published_.Drop(uid);
        return Status::Ok();
      }
    }
  }
  return Status::Ok();
}

void StudyController::Suggest(const Study& st, int count, std::vector<model::Assignment> pending) {
  // A copy: observations arriving meanwhile go to the study's own tuner. The copy's
  // answer is what the study's would have been now (seeded from the history).
  auto tuner = std::make_shared<tuning::Tuner>(*st.tuner);
  core_->Blocking([this, uid = st.record.job.uid, tuner, count, pending = std::move(pending)] {
    machines::StudyInput in;
    in.kind = machines::StudyInputKind::kSuggested;
    in.asked = count;
    try {
      in.suggestions = tuner->Suggest(count, pending);
    } catch (const std::exception& e) {
      in.error = e.what();
    }
    core_->Post([this, uid, in = std::move(in)]() mutable {
      if (Find(uid) == nullptr) return;  // Finished (cancelled) meanwhile.
      // Recorded with the trials before their jobs exist (see ReconcileTrials).
      for (size_t i = 0; i < in.suggestions.size(); ++i) in.job_uids.push_back(uids_->Next());
      Deliver(uid, std::move(in)).IgnoreError();
    });
  });
}

void StudyController::CreateTrialJob(const Study& st, int64_t trial_id) {
  const model::Trial* trial = FindTrial(st, trial_id);
  if (trial == nullptr) return;
  model::Job trial_job =
      machines::TrialJob(st.record.job, *st.record.spec, trial->id, trial->params);
  trial_job.uid = trial->job_uid;
  trial_job.create_time = core_->clock()->Now();
  trial_job.update_time = trial_job.create_time;
  // A trial job holds its own spec (its record: the trial spec with its parameters) and
  // a reference to its study (study_uid), never a copy of the study's request: that
  // copy made every trial of a 0.9 MB study cost 0.8 MB on disk and 3.5 MB in memory.
  // A trial job is read through its study (API reads of its uid are 404s).
  // Its creation comes back as a JobCommitted (announced then) or a TrialJobRefused.
  core_->Send(service::SubmitTrialJob{std::move(trial_job)});
}

bool StudyController::StopTrialJob(const std::string& job_uid, const std::string& why) {
  if (!live_jobs_->Get(job_uid).has_value()) {
    // Finished (nothing to stop), or never created.
    Result<model::Job> stored = store_->GetJob(job_uid);
    return stored.ok() || stored.status().code() != StatusCode::kNotFound;
  }
  machines::JobInput cancel;
  cancel.kind = machines::JobInputKind::kCancel;
  cancel.message = why;
  core_->Send(JobInputMessage{job_uid, std::move(cancel)});
  return true;
}

std::string StudyController::MetricsText(const model::Trial& trial) const {
  return ReadTrialMetrics(trial_root_, trial.job_uid);
}

// ---------------------------------------------------------------------------
// Intermediate measurements and early stopping

void StudyController::Poll() {
  if (studies_.empty()) {
    polling_ = false;  // The next commit of a study starts it again.
    return;
  }
  std::vector<std::pair<std::string, machines::StudyInput>> reads;
  for (const auto& [uid, st] : studies_) {
    for (const model::Trial& t : st.record.job.trials) {
      if (t.state != model::TrialState::kActive) continue;
      machines::StudyInput in = TrialInput(machines::StudyInputKind::kMetricsRead, t.id);
      in.metrics_text = MetricsText(t);
      if (!in.metrics_text.empty()) reads.emplace_back(uid, std::move(in));
    }
  }
  for (auto& [uid, in] : reads) {
    if (Find(uid) != nullptr) Deliver(uid, std::move(in)).IgnoreError();
  }
  core_->At(core_->clock()->Now() + kTrialPollInterval, [this] { Poll(); });
}

// ---------------------------------------------------------------------------
// Records

Status StudyController::Commit(const std::string& uid, const model::Job& record, bool create) {
  if (core_->dead()) return Unavailable("the service is shutting down");
  // A failure is the caller's to handle (Stall): retried ones are logged once.
  RETURN_IF_ERROR(store_->CommitJob(record, create, {}));
  Publish(record);
  RETURN_IF_ERROR(StoppedDuringTheWrite());
  WriteOutbox(logs_, core_->clock()->Now(), uid, record.outbox);
  if (!polling_) {
    polling_ = true;
    core_->At(core_->clock()->Now() + kTrialPollInterval, [this] { Poll(); });
  }
  return Status::Ok();
}

Status StudyController::StoppedDuringTheWrite() const {
  // The service stopped while the record was written: it acts on nothing more (the
  // next daemon resumes from the store). Crash-point tests stop it so at a write.
  return core_->dead() ? Aborted("the service stopped") : Status::Ok();
}

void StudyController::Publish(const model::Job& job) { published_.Put(job); }

std::optional<model::Job> StudyController::GetLive(const std::string& uid) const {
  return published_.Get(uid);
}

std::optional<std::string> StudyController::FindLiveMl(const std::string& project,
                                                       const std::string& job_id) const {
  return published_.FindMl(project, job_id);
}

}  // namespace ty::service
