#include "service/study_controller.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "machines/trial_jobs.h"
#include "model/spec_record.h"
#include "service/commit_retry.h"
#include "service/job_logs.h"
#include "service/study_tuner.h"
#include "tuning/tuner.h"
#include "wire/dialect.h"

namespace ty::service {

StudyController::StudyController(LoopCore* core, jobstore::JobStore* store, logs::LogStore* logs,
                                 UidSource* uids, const PublishedJobs* live_jobs,
                                 std::string trial_root)
    : core_(core),
      store_(store),
      logs_(logs),
      uids_(uids),
      trials_(core, store, live_jobs, std::move(trial_root)),
      stalls_(
          core, [this](const std::string& uid, const model::Job& r) { return Commit(uid, r); },
          [this](const std::string& uid, StalledStudyCommit done) {
            OnCommitLanded(uid, std::move(done));
          }) {
  core_->Receive<JobCommitted>([this](const JobCommitted& m) { OnJobCommitted(m); });
  core_->Receive<TrialJobRefused>([this](const TrialJobRefused& m) { OnTrialJobRefused(m); });
}

StudyController::~StudyController() = default;

StudyController::Study* StudyController::Find(const std::string& uid) {
  auto it = studies_.find(uid);
  return it == studies_.end() ? nullptr : &it->second;
}

bool StudyController::IsLive(const std::string& uid) const { return studies_.count(uid) > 0; }

// ---------------------------------------------------------------------------
// Start-up

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
    Result<Study> st = MakeStudy(job);
    if (!st.ok()) {
      SetAside(std::move(job), st.status().message());
      continue;
    }
    published_.Put(st->record.job);
    studies_[job.uid] = std::move(*st);
  }
  return Status::Ok();
}

// Its trial jobs are jobs of their own: the job controller recovers or fails them. The
// study is held, without a tuner (failing it asks none), until its failure is committed
// (a store that cannot write now retries it, as for any commit).
void StudyController::SetAside(model::Job job, const std::string& why) {
  problems_.Add("study", job.uid, why);
  const std::string uid = job.uid;
  Study& st = studies_[uid];
  st.record.spec = job.spec.study;
  st.record.job = std::move(job);
  machines::StudyInput in;
  in.kind = machines::StudyInputKind::kSetAside;
  in.message = why;
  Deliver(uid, std::move(in)).IgnoreError();
}

void StudyController::Start() {
  std::vector<std::pair<std::string, std::vector<machines::StudyInput>>> inboxes;
  for (const auto& [uid, st] : studies_) inboxes.emplace_back(uid, trials_.Reconcile(st.record));
  for (auto& [uid, inbox] : inboxes) {
    inbox.emplace_back();  // Then resumes: suggests what the trials leave room for.
    Deliver(uid, std::move(inbox)).IgnoreError();
  }
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
  in.prior_trials = st.prior_trials;
  machines::StudyDecision d =
      machines::DecideStudy(std::move(st.record), in, policy_, core_->clock()->Now());
  st.record = std::move(d.record);
  for (const machines::StudyAction& a : d.actions) {
    if (a.kind != machines::StudyActionKind::kCommit) continue;
    RETURN_IF_ERROR(SubmitOutcome(Commit(a.record.uid, a.record, a.create), a.record.dialect));
  }
  model::Job created = st.record.job;  // Commit published it.
  studies_[created.uid] = std::move(st);
  core_->Post([this, uid = created.uid] { Deliver(uid, machines::StudyInput{}).IgnoreError(); });
  return created;
}

Status StudyController::Cancel(const std::string& uid) {
  if (Find(uid) == nullptr) return NotFound("study " + uid + " is not running");
  machines::StudyInput in;
  in.kind = machines::StudyInputKind::kCancel;
  Status s = Deliver(uid, std::move(in));
  if (!s.ok() && stalls_.Holding(uid)) {
    return Unavailable("the store cannot write now (" + s.message() +
                       "); the cancel is kept and takes effect once it can");
  }
  return s;
}

void StudyController::OnJobCommitted(const JobCommitted& m) {
  const std::string& study_uid = m.job->study_uid;
  if (study_uid.empty()) return;
  const Study* st = Find(study_uid);
  std::optional<machines::StudyInput> in =
      trials_.OnCommitted(*m.job, m.before, st == nullptr ? nullptr : &st->record);
  if (!in) return;
  if (in->kind == machines::StudyInputKind::kTrialJobEnded) {
    QueueTrialEnd(study_uid, std::move(*in));
  } else {
    Deliver(study_uid, std::move(*in)).IgnoreError();
  }
}

void StudyController::QueueTrialEnd(const std::string& study_uid, machines::StudyInput input) {
  std::vector<machines::StudyInput>& waiting = ended_[study_uid];
  waiting.push_back(std::move(input));
  if (waiting.size() > 1) return;  // A delivery is on its way.
  core_->Post([this, study_uid] {
    auto batch = ended_.extract(study_uid);
    if (!batch.empty()) Deliver(study_uid, std::move(batch.mapped())).IgnoreError();
  });
}

void StudyController::OnTrialJobRefused(const TrialJobRefused& m) {
  machines::StudyInput in = TrialInput(machines::StudyInputKind::kTrialJobRefused, m.trial_id);
  in.message = m.message;
  Deliver(m.study_uid, std::move(in)).IgnoreError();
}

// ---------------------------------------------------------------------------
// The inbox: decide, commit, act

Status StudyController::Deliver(const std::string& uid, machines::StudyInput input) {
  std::vector<machines::StudyInput> inbox;
  inbox.push_back(std::move(input));
  return Deliver(uid, std::move(inbox));
}

Status StudyController::Deliver(const std::string& uid, std::vector<machines::StudyInput> inbox) {
  Status first = Status::Ok();
  for (size_t i = 0; i < inbox.size();) {
    Study* st = Find(uid);
    if (st == nullptr || core_->dead()) break;
    if (stalls_.Holding(uid)) {  // The inputs not yet decided wait behind the commit.
      stalls_.Keep(uid, inbox, i);
      if (i > 0) break;
      return Unavailable("the study's earlier decisions wait for the store; kept until it writes");
    }
    size_t ends = i;
    while (ends < inbox.size() && inbox[ends].kind == machines::StudyInputKind::kTrialJobEnded) {
      ++ends;
    }
    const TimeMicros now = core_->clock()->Now();
    machines::StudyDecision d =
        ends > i + 1
            ? machines::DecideStudyBatch(std::move(st->record),
                                         {inbox.begin() + i, inbox.begin() + ends}, policy_, now)
            : machines::DecideStudy(std::move(st->record), inbox[i], policy_, now);
    st->record = std::move(d.record);
    std::vector<machines::StudyInput> follow_ups;
    Status s = Perform(*st, d.actions, &follow_ups);
    for (machines::StudyInput& f : follow_ups) inbox.push_back(std::move(f));
    if (i == 0) first = s;
    i = std::max(ends, i + 1);
    // A decision dropped for good (service/commit_retry.h): what follows it is not decided.
    if (!s.ok() && !stalls_.Holding(uid)) break;
  }
  return first;
}

void StudyController::OnCommitLanded(const std::string& uid, StalledStudyCommit done) {
  Study* st = Find(uid);
  if (st == nullptr) return;
  std::vector<machines::StudyInput> next;
  Perform(*st, done.after, &next).IgnoreError();  // Stalled again: Deliver keeps them all.
  next.insert(next.end(), std::make_move_iterator(done.inputs.begin()),
              std::make_move_iterator(done.inputs.end()));
  if (!next.empty()) Deliver(uid, std::move(next)).IgnoreError();
}

Status StudyController::Perform(Study& st, const std::vector<machines::StudyAction>& actions,
                                std::vector<machines::StudyInput>* follow_ups) {
  for (auto it = actions.begin(); it != actions.end(); ++it) {
    const machines::StudyAction& a = *it;
    switch (a.kind) {
      case machines::StudyActionKind::kCommit:
        if (Status s = Commit(st.record.job.uid, a.record, a.create); !s.ok()) {
          stalls_.Stall(st.record.job.uid, a.record, {it + 1, actions.end()}, s);
          return s;
        }
        break;
      case machines::StudyActionKind::kSuggest:
        SuggestOffLoop(core_, *st.tuner, a.count, a.pending,
                       [this, uid = st.record.job.uid](machines::StudyInput in) {
                         if (Find(uid) == nullptr) return;  // Finished (cancelled) meanwhile.
                         // Recorded with the trials before their jobs exist.
                         for (size_t i = 0; i < in.suggestions.size(); ++i) {
                           in.job_uids.push_back(uids_->Next());
                         }
                         Deliver(uid, std::move(in)).IgnoreError();
                       });
        break;
      case machines::StudyActionKind::kSubmitTrial:
        trials_.Create(st.record, a.trial_id);
        break;
      case machines::StudyActionKind::kStopTrial:
        if (!trials_.Stop(a.job_uid, a.message)) {
          follow_ups->push_back(TrialInput(machines::StudyInputKind::kTrialJobMissing, a.trial_id));
        }
        break;
      case machines::StudyActionKind::kObserve:
        if (const model::Trial* t = FindTrial(st.record.job, a.trial_id)) {
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

// ---------------------------------------------------------------------------
// Intermediate measurements and early stopping

void StudyController::Poll() {
  if (studies_.empty()) {
    polling_ = false;  // The next commit of a study starts it again.
    return;
  }
  std::vector<std::pair<std::string, std::vector<machines::StudyInput>>> reads;
  for (const auto& [uid, st] : studies_) reads.emplace_back(uid, trials_.ReadMetrics(st.record));
  for (auto& [uid, inbox] : reads) {
    if (!inbox.empty()) Deliver(uid, std::move(inbox)).IgnoreError();
  }
  core_->At(core_->clock()->Now() + kTrialPollInterval, [this] { Poll(); });
}

// ---------------------------------------------------------------------------
// Records

Status StudyController::Commit(const std::string& uid, const model::Job& record, bool create) {
  if (core_->dead()) return Unavailable("the service is shutting down");
  // A failure is the caller's to handle (Stall): retried ones are logged once.
  RETURN_IF_ERROR(store_->CommitJob(record, create, {}));
  published_.Put(record);
  // The service stopped while the record was written: it acts on nothing more (the
  // next daemon resumes from the store). Crash-point tests stop it so at a write.
  if (core_->dead()) return Aborted("the service stopped");
  WriteOutbox(logs_, core_->clock()->Now(), uid, record.outbox);
  if (!polling_) {
    polling_ = true;
    core_->At(core_->clock()->Now() + kTrialPollInterval, [this] { Poll(); });
  }
  return Status::Ok();
}

}  // namespace ty::service
