// Internal to service/: what a study's controller keeps beside its record, built from
// the record alone: the tuner, relearnt from the finished trials (and, for ml v1's
// resumePreviousJobId, those of the study it resumes), and each running trial's
// cloudml-hypertune file as its replica has written it so far.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "jobstore/job_store.h"
#include "model/job.h"

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

// Trial `job_uid`'s cloudml-hypertune file under `trial_root` as written so far ("" when
// there is none, or no trial root).
std::string ReadTrialMetrics(const std::string& trial_root, const std::string& job_uid);

}  // namespace ty::service
