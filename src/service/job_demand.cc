#include "service/job_demand.h"

#include <algorithm>

namespace ty::service {

std::string MachineFieldOf(const model::Job& job, int pool) {
  if (job.dialect == model::Dialect::kVertex) {
    return "jobSpec.workerPoolSpecs[" + std::to_string(pool) + "].machineSpec";
  }
  if (job.spec.scale_tier != "CUSTOM") return "trainingInput.scaleTier";
  static const char* kTypes[] = {"trainingInput.masterType", "trainingInput.workerType",
                                 "trainingInput.parameterServerType",
                                 "trainingInput.evaluatorType"};
  return kTypes[std::clamp(pool, 0, 3)];
}

Result<scheduler::JobDemand> DemandOf(const model::Job& job,
                                      const model::MachineOverrides& machine_types) {
  scheduler::JobDemand d;
  d.uid = job.uid;
  d.project = job.project;
  d.priority = job.spec.scheduling.priority;
  // Its latest entry into the queue (a preempted job queues again at the back).
  d.queued_since = job.phases.queued > 0 ? job.phases.queued : job.create_time;
  d.spot = job.spec.scheduling.spot;
  d.max_run = job.spec.scheduling.timeout;
  for (int p = 0; p < static_cast<int>(job.spec.pools.size()); ++p) {
    const model::WorkerPool& pool = job.spec.pools[p];
    if (pool.empty()) continue;
    const std::string field = MachineFieldOf(job, p);
    std::optional<model::MachineShape> shape =
        model::MachineShapeOf(pool.machine.machine_type, machine_types);
    if (!shape) {
      return InvalidArgument(field + ": machine type \"" + pool.machine.machine_type +
                             "\" has no known size on this server (add it under machine_types "
                             "in the daemon's config)")
          .WithField(field);
    }
    scheduler::ReplicaDemand r;
    r.cpus = shape->vcpus;
    r.memory_gb = shape->memory_gb;
    if (!pool.machine.accelerator_type.empty() && pool.machine.accelerator_count > 0) {
      r.gpu_type = pool.machine.accelerator_type;
      r.gpus = pool.machine.accelerator_count;
    }
    r.field = field;
    for (int64_t i = 0; i < pool.replica_count; ++i) d.replicas.push_back(r);
  }
  return d;
}

Result<QueuedDemand> QueuedDemandOf(const model::Job& job,
                                    const model::MachineOverrides& machine_types) {
  QueuedDemand q;
  ASSIGN_OR_RETURN(q.demand, DemandOf(job, machine_types));
  q.create_time = job.create_time;
  for (int p = 0; p < static_cast<int>(job.spec.pools.size()); ++p) {
    const model::WorkerPool& pool = job.spec.pools[p];
    if (pool.empty()) continue;
    // DemandOf sized every pool that has replicas.
    const model::MachineShape shape =
        model::MachineShapeOf(pool.machine.machine_type, machine_types)
            .value_or(model::MachineShape{});
    for (int64_t i = 0; i < pool.replica_count; ++i) {
      q.replicas.push_back({p, static_cast<int>(i), shape});
    }
  }
  return q;
}

std::vector<model::ReplicaGrant> GrantsOf(const QueuedDemand& queued,
                                          const std::vector<scheduler::ReplicaPlacement>& placement,
                                          const scheduler::Capacity& capacity) {
  std::vector<model::ReplicaGrant> out;
  for (size_t r = 0; r < queued.replicas.size() && r < placement.size(); ++r) {
    const QueuedDemand::Replica& replica = queued.replicas[r];
    const scheduler::ReplicaPlacement& at = placement[r];
    model::ReplicaGrant g;
    static_cast<model::ReplicaPlacement&>(g) = at;
    g.pool = replica.pool;
    g.index = replica.index;
    if (at.node >= 0 && at.node < static_cast<int>(capacity.nodes.size())) {
      const scheduler::Node& node = capacity.nodes[at.node];
      g.node_name = node.name;
      g.cpu_limit = std::min(replica.shape.vcpus, node.cpus);
      g.memory_limit_gb = std::min(replica.shape.memory_gb, node.memory_gb);
    }
    out.push_back(std::move(g));
  }
  return out;
}

namespace {

scheduler::Allocation AllocationOfGrants(const scheduler::JobDemand& d,
                                         const std::vector<model::ReplicaGrant>& grants,
                                         TimeMicros started) {
  scheduler::Allocation a;
  a.uid = d.uid;
  a.project = d.project;
  a.priority = d.priority;
  a.spot = d.spot;
  a.expected_end = started + d.max_run;
  for (const model::ReplicaPlacement& placed : grants) a.replicas.push_back(placed);
  return a;
}

}  // namespace

scheduler::Allocation AllocationOf(const model::Job& job, TimeMicros now) {
  scheduler::JobDemand d;
  d.uid = job.uid;
  d.project = job.project;
  d.priority = job.spec.scheduling.priority;
  d.spot = job.spec.scheduling.spot;
  d.max_run = job.spec.scheduling.timeout;
  return AllocationOfGrants(d, job.grants, job.start_time > 0 ? job.start_time : now);
}

scheduler::Allocation AllocationOf(const QueuedDemand& queued,
                                   const std::vector<model::ReplicaGrant>& grants, TimeMicros now) {
  return AllocationOfGrants(queued.demand, grants, now);
}

}  // namespace ty::service
