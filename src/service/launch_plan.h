// Turns a job's current attempt into the executor's AttemptSpec: per replica its
// deterministic name, task name, host name, image, command line, environment
// (model/runtime_env.h) and the /gcs bucket mount. Pure apart from nothing: the
// caller creates the bucket directories.
#pragma once

#include <string>
#include <vector>

#include "executor/executor.h"
#include "model/job.h"

namespace ty::service {

struct LaunchPlanOptions {
  std::string bucket_root;  // Host directory mounted at /gcs.
};

// REQUIRES: job.attempt >= 1 and job.replicas describe that attempt.
executor::AttemptSpec BuildAttemptSpec(const model::Job& job, const LaunchPlanOptions& options);

// Buckets the job names (baseOutputDirectory, jobDir): created before launch so
// replicas can write into them.
std::vector<std::string> BucketsOf(const model::JobSpec& spec);

}  // namespace ty::service
