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

// How many entries each array (and map) of a job request may hold, in both dialects:
// checked while the request is read, before an entry is copied, so no field grows
// without bound (20 jobs of 90,000 `nfsMounts` each once took 897 MB on disk and a
// 77 MB list page). Google publishes some (env and packageUris 100, labels 64); the
// others are ours, far above what a training job uses. The configurable SpecLimits
// above apply within these (ValidateSpecLimits refuses a setting past one).
inline constexpr size_t kMaxEnvEntries = 100;         // Vertex: "maximum limit is 100".
inline constexpr size_t kMaxPackageUris = 100;        // Vertex and ml v1.
inline constexpr size_t kMaxArgvListEntries = 10000;  // One `command` or `args` list.
inline constexpr size_t kMaxLabelEntries = 1000;      // max_labels (64 by default) within.
inline constexpr size_t kMaxNfsMounts = 10;
inline constexpr size_t kMaxLustreMounts = 10;
inline constexpr size_t kMaxReservedIpRanges = 10;
inline constexpr size_t kMaxModels = 100;
inline constexpr size_t kMaxReservationValues = 100;

// InvalidArgument (FieldError with the job's wire path, e.g.
// "jobSpec.workerPoolSpecs[1].replicaCount" or "trainingInput.workerCount") for the
// first bound `spec` exceeds; OK otherwise.
Status CheckSpecLimits(const JobSpec& spec, const SpecLimits& limits);

// InvalidArgument naming the setting when a limit is not positive, or is past the
// bound the request parser keeps (kMaxArgvListEntries, kMaxEnvEntries, kMaxLabelEntries).
Status ValidateSpecLimits(const SpecLimits& limits);

}  // namespace ty::model
