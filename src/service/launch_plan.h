// Turns a job's current attempt into the executor's AttemptSpec: per replica its
// deterministic name, task name, host name, image, command line, environment
// (model/runtime_env.h) and accelerators; for the attempt, whether peers talk and
// which buckets it needs. Intents only: networks and mounts are the executor's. Pure.
#pragma once

#include <string>
#include <vector>

#include "executor/executor.h"
#include "model/job.h"

namespace ty::service {

// REQUIRES: job.attempt >= 1 and job.replicas describe that attempt.
// `replica_bucket_root`: where the executor shows replicas the buckets.
// `storage_endpoint`: the daemon's Cloud Storage API as replicas reach it ("" = none).
executor::AttemptSpec BuildAttemptSpec(const model::Job& job,
                                       const std::string& replica_bucket_root,
                                       const std::string& storage_endpoint = "");

// Buckets the job names (baseOutputDirectory, jobDir): created before launch so
// replicas can write into them.
std::vector<std::string> BucketsOf(const model::JobSpec& spec);

}  // namespace ty::service
