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

// A queued job as admission keeps it: what it asks for and what bounds each replica's
// grant, without the job record (the job controller keeps that; admission kept a
// third copy of every queued job and sized each one again in every pass).
struct QueuedDemand {
  struct Replica {
    int pool = 0;
    int index = 0;
    model::MachineShape shape;  // Its machine type's size.
  };
  scheduler::JobDemand demand;
  std::vector<Replica> replicas;  // Same order as demand.replicas.
  TimeMicros create_time = 0;
};
// InvalidArgument naming the field when a machine type has no known size.
Result<QueuedDemand> QueuedDemandOf(const model::Job& job,
                                    const model::MachineOverrides& machine_types);

// The grants of an admitted placement (same order as the demand's replicas), with the
// limits each replica is held to: its machine type's size capped by its node.
std::vector<model::ReplicaGrant> GrantsOf(const QueuedDemand& queued,
                                          const std::vector<scheduler::ReplicaPlacement>& placement,
                                          const scheduler::Capacity& capacity);

// What a job's grants hold, as the scheduler counts it.
scheduler::Allocation AllocationOf(const model::Job& job, TimeMicros now);
// The same for a job admitted now with `grants`.
scheduler::Allocation AllocationOf(const QueuedDemand& queued,
                                   const std::vector<model::ReplicaGrant>& grants, TimeMicros now);

// The field naming pool `pool`'s machine in the job's dialect, for errors.
std::string MachineFieldOf(const model::Job& job, int pool);

}  // namespace ty::service
