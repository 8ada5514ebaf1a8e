// Our extension beside Google's resources (like `/logs`): why a job is where it is.
// `GET .../{job}/details` answers, for either dialect:
//   {"attempt": 2,
//    "phases": {"queueTime", "admitTime", "imageReadyTime", "allRunningTime", "endTime"},
//    "queue": {"position", "reason"}          (while it waits for admission),
//    "preemptions": N                         (spot attempts preempted, if any),
//    "grants": [{"pool", "index", "node", "cpus", "memoryGb", "cpuLimit",
//                "memoryLimitGb", "gpuType", "gpuIndices"}]   (while admitted),
//    "replicas": [{"taskName", "pool", "index", "attempt", "hostname", "state",
//                  "exitCode", "signal", "restarts", "startTime", "endTime"}],
//    "events": [{"time", "kind", "message"}]}
// Times are RFC 3339 `Z`; unset times and absent exit codes are left out. Kept out
// of the CustomJob / Job resources so those stay exactly Google's.
// Pure; thread-safe.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "model/job.h"

namespace ty::wire {

// The domain types the wire forms stand for.
using model::Job;
using model::JobEvent;

nlohmann::json RenderJobDetails(const Job& job, const std::vector<JobEvent>& events);

}  // namespace ty::wire
