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
// A trial job (job.trial_id > 0) gets its trial id in TF_CONFIG / CLUSTER_SPEC /
// CLOUD_ML_TRIAL_ID and per-trial output directories; its primary replica reports
// into `trial_metrics_dir` (a host directory; "" = trials cannot report).
executor::AttemptSpec BuildAttemptSpec(const model::Job& job,
                                       const std::string& replica_bucket_root,
                                       const std::string& storage_endpoint = "",
                                       const std::string& trial_metrics_dir = "");

// Buckets the job names (baseOutputDirectory, jobDir, Python package URIs), sorted,
// once each: created before launch so replicas can write into them, and claimed for
// the job's project at submit.
std::vector<std::string> BucketsOf(const model::JobSpec& spec);

// Buckets a replica's command line or environment names as gs://NAME that the attempt
// will not show it (neither `buckets` nor `visible_buckets`), sorted, once each: the
// guide's `--model-dir=gs://a-bucket-never-made/...` writes nowhere a user finds.
std::vector<std::string> UnmountedBucketsNamed(const executor::AttemptSpec& attempt);

// For an ml v1 job on a runtimeVersion: what that version runs on here and what it
// lacks (images::DescribeMlRuntime), the job's first line at launch; "" otherwise.
std::string RuntimeLineOf(const model::Job& job);

}  // namespace ty::service
