#include "service/study_tuner.h"

#include <functional>
#include <memory>

#include "machines/trial_jobs.h"
#include "tuning/tuner.h"
#include "wire/dialect.h"

namespace ty::service {

namespace {

// A tuner seed of its own per study, stable across restarts.
uint64_t SeedOf(const std::string& uid) { return std::hash<std::string>{}(uid); }

bool Finished(const model::Trial& t) {
  return !model::IsTrialActive(t) && t.state != model::TrialState::kCancelled;
}

// ml v1 resumePreviousJobId. Google documents only that the earlier job's study is
// continued; here its finished trials inform the suggestions (a grid continues where
// it stopped, the optimiser starts from what it learnt) while this job runs maxTrials
// trials of its own and lists only those. Trials whose parameters do not fit this
// job's space are left out.
void ObservePreviousStudy(StudyTuner& st, const model::Job& job, jobstore::JobStore* store) {
  if (job.spec.study->resume_previous_job_id.empty()) return;
  Result<model::Job> previous = PreviousStudy(job, store);
  if (!previous.ok()) return;  // Checked at submit; deleted since: start afresh.
  for (const model::Trial& t : previous->trials) {
    if (!Finished(t) || !st.tuner->space().Check(t.params).ok()) continue;
    st.tuner->Observe({t.params, model::ObjectiveOf(t)});
    ++st.prior_trials;
  }
}

}  // namespace

StudyTuner::StudyTuner() = default;
StudyTuner::StudyTuner(StudyTuner&&) noexcept = default;
StudyTuner& StudyTuner::operator=(StudyTuner&&) noexcept = default;
StudyTuner::~StudyTuner() = default;

Result<StudyTuner> OpenStudyTuner(const model::Job& job, jobstore::JobStore* store) {
  if (!job.spec.study) return InvalidArgument("job " + job.uid + " is not a study");
  const model::StudySpec& spec = *job.spec.study;
  ASSIGN_OR_RETURN(tuning::SearchSpace space, tuning::SearchSpace::Create(spec.params));
  tuning::StudyOptions options;
  options.goal = spec.goal;
  options.algorithm = spec.algorithm;
  options.max_trials = spec.max_trials;
  options.parallel = spec.parallel_trials;
  options.seed = SeedOf(job.uid);
  ASSIGN_OR_RETURN(tuning::Tuner tuner, tuning::Tuner::Create(std::move(space), options));
  StudyTuner st;
  st.tuner = std::make_unique<tuning::Tuner>(std::move(tuner));
  ObservePreviousStudy(st, job, store);
  // The tuner relearns the study from its finished trials, in the order they were run.
  for (const model::Trial& t : job.trials) {
    if (Finished(t)) st.tuner->Observe({t.params, model::ObjectiveOf(t)});
  }
  return st;
}

Result<model::Job> PreviousStudy(const model::Job& job, jobstore::JobStore* store) {
  const std::string& id = job.spec.study->resume_previous_job_id;
  Result<model::Job> previous = store->FindMlJob(job.project, id);
  if (previous.ok()) {
    Result<model::JobSpec> spec = wire::RestoreSpec(*previous);
    if (spec.ok() && spec->study) return previous;
  }
  return InvalidArgument(
             "Field: trainingInput.hyperparameters.resumePreviousJobId Error: "
             "no hyperparameter tuning job '" +
             id + "' in project " + job.project)
      .WithField("trainingInput.hyperparameters.resumePreviousJobId");
}

void SuggestOffLoop(LoopCore* core, const tuning::Tuner& tuner, int count,
                    std::vector<model::Assignment> pending,
                    std::function<void(machines::StudyInput)> answer) {
  // A copy: observations arriving meanwhile go to the study's own tuner. The copy's
  // answer is what the study's would have been now (seeded from the history).
  auto copy = std::make_shared<tuning::Tuner>(tuner);
  core->Blocking([core, copy, count, pending = std::move(pending), answer = std::move(answer)] {
    machines::StudyInput in;
    in.kind = machines::StudyInputKind::kSuggested;
    in.asked = count;
    try {
      in.suggestions = copy->Suggest(count, pending);
    } catch (const std::exception& e) {
      in.error = e.what();
    }
    core->Post([answer, in = std::move(in)]() mutable { answer(std::move(in)); });
  });
}

}  // namespace ty::service
