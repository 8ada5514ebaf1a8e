// Pure helpers of the study controller (service/study_controller.h): the job that runs
// one trial, the measurements a trial reported, and its final measurement.
#pragma once

#include <string>
#include <vector>

#include "model/job.h"
#include "model/runtime_env.h"
#include "model/study_spec.h"
#include "model/trial.h"

namespace ty::machines {

// Where a trial job's cloudml-hypertune file lives on the daemon's host:
// <trial_root>/<job uid>/model::kTrialMetricsFile. The executor makes the replica
// write there (executor::ReplicaLaunch::metrics_host_dir).
std::string TrialMetricsDir(const std::string& trial_root, const std::string& job_uid);
using model::kReplicaMetricsDir;
using model::kTrialMetricsFile;

// The job of trial `trial_id` of `study`: the study's pools with the trial's
// parameters appended to every replica's arguments as `--name=value` (in the order of
// the search space; only active parameters), CLOUD_ML_HP_METRIC_TAG in its
// environment, and no study of its own. ml v1 trial jobs get the id
// "<study id>_trial_<n>" (ml v1 ids are unique per project).
model::Job TrialJob(const model::Job& study, const model::StudySpec& spec, int64_t trial_id,
                    const model::Assignment& params);

struct MergedMetrics {
  std::vector<model::TrialMeasurement> added;  // Reports not seen before, in file order.
  int64_t skipped = 0;                         // Lines of the file that were no report of the tag.
};

// Merges the measurements in a metrics file's text into `trial` (the library keeps
// only its last 100 reports, so earlier ones are kept from previous reads).
// `started_at` turns report timestamps into elapsed seconds.
MergedMetrics MergeMeasurements(const std::string& text, const std::string& tag,
                                TimeMicros started_at, model::Trial* trial);

// The final measurement under the study's selection rule (LAST or BEST by goal).
std::optional<model::TrialMeasurement> FinalMeasurement(const model::StudySpec& spec,
                                                        const model::Trial& trial);

// "lr=0.01, layers=3": parameters as the logs show them.
std::string DescribeParams(const model::StudySpec& spec, const model::Assignment& params);

}  // namespace ty::machines
