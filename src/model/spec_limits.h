// Size bounds on an accepted job spec, so one request can never make the daemon
// allocate without limit (a `replicaCount` of 10^12 once took a host to 10 GB).
//
// Parsing (dialect.h) checks each field's own wire rules; `CheckSpecLimits` then
// bounds the sizes that drive allocation later: replicas per pool and per job (the
// service keeps a record per replica and every replica's TF_CONFIG lists the whole
// cluster, so memory grows with the square of the job's size), command and argument
// entries and characters, environment entries and characters, labels. The daemon
// applies it at submit (400 naming the field) and to stored jobs at start-up (a job
// past today's bounds is failed, never run). Users who need more raise the limits in
// the daemon's configuration.
//
// Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "model/job_spec.h"

namespace ty::model {

struct SpecLimits {
  int64_t max_replicas_per_pool = 1024;
  int64_t max_replicas_per_job = 1024;
  // Entries of `command` + `args` of one pool, and their characters over the job.
  size_t max_argv_entries = 1000;
  size_t max_argv_chars = 100000;
  // Entries of one pool's `env`, and characters of names + values over the job.
  size_t max_env_entries = 100;
  size_t max_env_chars = 100000;
  size_t max_labels = 64;
};

// InvalidArgument (FieldError with the job's wire path, e.g.
// "jobSpec.workerPoolSpecs[1].replicaCount" or "trainingInput.workerCount") for the
// first bound `spec` exceeds; OK otherwise.
Status CheckSpecLimits(const JobSpec& spec, const SpecLimits& limits);

// InvalidArgument naming the setting when a limit is not positive.
Status ValidateSpecLimits(const SpecLimits& limits);

}  // namespace ty::model
