// Internal to service/: what a study's controller keeps beside its record, built from
// the record alone: the tuner, relearnt from the finished trials (and, for ml v1's
// resumePreviousJobId, those of the study it resumes), and asking it off the loop.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "jobstore/job_store.h"
#include "machines/study_machine.h"
#include "model/job.h"
#include "service/loop_core.h"

namespace ty::tuning {
class Tuner;  // tuning/tuner.h; Eigen stays out of this header.
}  // namespace ty::tuning

namespace ty::service {

struct StudyTuner {
  StudyTuner();
  StudyTuner(StudyTuner&&) noexcept;
  StudyTuner& operator=(StudyTuner&&) noexcept;
  ~StudyTuner();

  std::unique_ptr<tuning::Tuner> tuner;
  int prior_trials = 0;  // Finished trials of resumePreviousJobId's study observed.
};

// The tuner of study `job` (its spec parsed, `study` set), seeded by its uid so a
// restart suggests what the first run would have. InvalidArgument when its search
// space or algorithm does not build.
Result<StudyTuner> OpenStudyTuner(const model::Job& job, jobstore::JobStore* store);

// The study ml v1's resumePreviousJobId names; InvalidArgument naming that field when
// it names no tuning job of the project.
Result<model::Job> PreviousStudy(const model::Job& job, jobstore::JobStore* store);

// Asks a copy of `tuner` for `count` suggestions on a worker, since a suggestion may
// take seconds (bench/tuner_latency --widest) that the loop must not wait for; `answer`
// gets the kSuggested input (or the tuner's error) back on the loop thread.
void SuggestOffLoop(LoopCore* core, const tuning::Tuner& tuner, int count,
                    std::vector<model::Assignment> pending,
                    std::function<void(machines::StudyInput)> answer);

}  // namespace ty::service
