// Between a job and the scheduler: what the job asks for (one ReplicaDemand per
// replica, in (pool, index) order, sized by the machine catalogue) and what its
// admission gave it (model::ReplicaGrant, kept in the job record). Pure.
#pragma once

#include <vector>

#include "common/status.h"
#include "model/job.h"
#include "model/machine_catalog.h"
#include "scheduler/admission.h"

namespace ty::service {

// InvalidArgument naming the field when a machine type has no known size.
Result<scheduler::JobDemand> DemandOf(const model::Job& job,
                                      const model::MachineOverrides& machine_types);

// The grants of an admitted placement (same order as DemandOf's replicas), with the
// limits each replica is held to: its machine type's size capped by its node.
std::vector<model::ReplicaGrant> GrantsOf(const model::Job& job,
                                          const std::vector<scheduler::ReplicaPlacement>& placement,
                                          const scheduler::Capacity& capacity,
                                          const model::MachineOverrides& machine_types);

// What a job's grants hold, as the scheduler counts it.
scheduler::Allocation AllocationOf(const model::Job& job, TimeMicros now);

// The field naming pool `pool`'s machine in the job's dialect, for errors.
std::string MachineFieldOf(const model::Job& job, int pool);

}  // namespace ty::service
