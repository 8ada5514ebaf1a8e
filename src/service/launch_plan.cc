#include "service/launch_plan.h"

#include "model/runtime_env.h"

namespace ty::service {

executor::AttemptSpec BuildAttemptSpec(const model::Job& job, const LaunchPlanOptions& options) {
  executor::AttemptSpec spec;
  spec.job_uid = job.uid;
  spec.attempt = job.attempt;
  // Multi-replica attempts get their own network so replicas find each other by
  // host name; a single replica needs none.
  if (model::TotalReplicas(job.spec) > 1) {
    spec.network = "ty-" + job.uid + "-" + std::to_string(job.attempt);
  }
  spec.labels[executor::kLabelJob] = job.uid;
  spec.labels[executor::kLabelAttempt] = std::to_string(job.attempt);
  for (const auto& r : job.replicas) {
    model::ReplicaRuntime rt = model::BuildReplicaRuntime(job, r.pool, r.index);
    executor::ReplicaLaunch launch;
    launch.pool = r.pool;
    launch.index = r.index;
    launch.name = r.handle;
    launch.task_name = r.task_name;
    launch.hostname = model::ReplicaHostname(job, r.pool, r.index);
    launch.image = rt.image;
    launch.command = rt.command;
    launch.args = rt.args;
    launch.env = rt.env;
    if (!options.bucket_root.empty()) {
      launch.mounts.push_back({options.bucket_root, "/gcs", false});
    }
    const model::MachineSpec& machine = job.spec.pools[r.pool].machine;
    launch.accelerator_type = machine.accelerator_type;
    if (machine.accelerator_type.rfind("NVIDIA", 0) == 0) launch.gpu_count = machine.accelerator_count;
    spec.replicas.push_back(std::move(launch));
  }
  return spec;
}

std::vector<std::string> BucketsOf(const model::JobSpec& spec) {
  std::vector<std::string> out;
  for (const std::string* uri : {&spec.base_output_directory, &spec.job_dir}) {
    if (auto split = model::SplitGcsUri(*uri)) out.push_back(split->first);
  }
  return out;
}

}  // namespace ty::service
