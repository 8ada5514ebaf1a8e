// What joins jobs to Vertex AI TensorBoard in the daemon: the submit-time check of a
// job's `tensorboard`, and the indexer's targets (tensorboard/indexing_loop.h), one
// per unfinished job that names a tensorboard and has a baseOutputDirectory.
//   - a custom job: experiment = the job's id, its AIP_TENSORBOARD_LOG_DIR
//     (<base>/logs/), runs named after the directories holding event files ("default"
//     for the log directory itself);
//   - a tuning job's trial: experiment = the tuning job's id, so every trial is in one
//     experiment; the trial's own log directory (<base>/<trial>/logs/), runs "<trial>"
//     and "<trial>-<directory>".
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "model/job.h"
#include "service/job_service.h"
#include "tensorboard/indexer.h"
#include "tensorboard/store.h"

namespace ty::daemon {

// OK when `name` is an existing tensorboard of `project`; InvalidArgument naming
// jobSpec.tensorboard otherwise.
Status CheckJobTensorboard(const tensorboard::Store& store, const std::string& project,
                           const std::string& name);

// Whether the indexer follows `job` (it names a tensorboard and an output directory).
bool IndexesTensorboard(const model::Job& job);

// The indexer's target for such a job; nullopt for any other.
std::optional<tensorboard::IndexTarget> TensorboardTarget(const model::Job& job,
                                                          const std::string& bucket_root);

// The targets of jobs that ended at or after `since` (the indexer's last kept round,
// less a margin): the jobs whose last pass a stopped daemon may have missed. Reads only
// the jobs that ended since (at start-up, on the indexer's thread); 0 = none.
std::vector<tensorboard::IndexTarget> EndedSince(const service::JobService& service,
                                                 TimeMicros since, const std::string& bucket_root);

}  // namespace ty::daemon
