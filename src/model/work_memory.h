// What unfinished work holds in the daemon's memory, as the memory budget counts it
// (service/job_service.h: max_daemon_memory). Every figure is an upper estimate from
// the record's own sizes, so one request can be priced before it is accepted:
//  - a job: its record (ApproxRecordBytes) in each place a live record is held;
//  - a study: its record as it will be at its last trial (each trial its parameters'
//    names and values) plus `parallel_trials` trial jobs, each the size of the trial
//    spec with its parameters; a trial job is counted in its study's figure (0 alone).
// Pure; thread-safe.
#pragma once

#include <cstddef>

#include "model/job.h"

namespace ty::model {

// Where a live record is held at once: the controller's live map, the snapshot API
// readers see (service/published_jobs.h), a read or admission copy in flight.
inline constexpr size_t kLiveRecordCopies = 3;

// The budget's figure for unfinished `job` (see above).
size_t WorkBytes(const Job& job);

// The heap of one trial of `spec` at most (its id, state, parameter names and values).
size_t ApproxTrialBytes(const StudySpec& spec);

// The heap of a spec's pools: images, commands, args, environment, package URIs.
size_t ApproxPoolsBytes(const JobSpec& spec);

}  // namespace ty::model
