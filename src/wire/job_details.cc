#include "wire/job_details.h"

#include <nlohmann/json.hpp>

#include "model/runtime_env.h"

namespace ty::wire {

using namespace model;  // The domain the wire dialects read and write.
namespace {

void PutTime(nlohmann::json& out, const char* key, TimeMicros t) {
  if (t > 0) out[key] = FormatRfc3339(t);
}

nlohmann::json GrantsJson(const std::vector<ReplicaGrant>& grants) {
  nlohmann::json out = nlohmann::json::array();
  for (const ReplicaGrant& g : grants) {
    nlohmann::json gj = {{"pool", g.pool},
                         {"index", g.index},
                         {"node", g.node_name},
                         {"cpus", g.cpus},
                         {"memoryGb", g.memory_gb},
                         {"cpuLimit", g.cpu_limit},
                         {"memoryLimitGb", g.memory_limit_gb}};
    if (!g.gpu_indices.empty()) {
      gj["gpuType"] = g.gpu_type;
      gj["gpuIndices"] = g.gpu_indices;
    }
    out.push_back(gj);
  }
  return out;
}

nlohmann::json ImagesJson(const std::vector<ImageRan>& images) {
  nlohmann::json out = nlohmann::json::array();
  for (const ImageRan& i : images) {
    nlohmann::json ij = {{"imageUri", i.image}, {"imageId", i.id}};
    if (!i.digest.empty()) ij["digest"] = i.digest;
    out.push_back(ij);
  }
  return out;
}

nlohmann::json ReplicasJson(const Job& job) {
  nlohmann::json out = nlohmann::json::array();
  for (const ReplicaRecord& r : job.replicas) {
    nlohmann::json rj = nlohmann::json::object();
    rj["taskName"] = r.task_name;
    rj["pool"] = r.pool;
    rj["index"] = r.index;
    rj["attempt"] = r.attempt;
    if (!job.uid.empty()) rj["hostname"] = ReplicaHostname(job, r.pool, r.index);
    rj["state"] = ReplicaStateName(r.state);
    if (r.exit_code) rj["exitCode"] = *r.exit_code;
    if (r.signal) rj["signal"] = *r.signal;
    rj["restarts"] = r.restarts;
    PutTime(rj, "startTime", r.start_time);
    PutTime(rj, "endTime", r.end_time);
    out.push_back(rj);
  }
  return out;
}

}  // namespace

nlohmann::json RenderJobDetails(const Job& job, const std::vector<JobEvent>& events) {
  nlohmann::json out = nlohmann::json::object();
  out["attempt"] = job.attempt;
  nlohmann::json phases = nlohmann::json::object();
  PutTime(phases, "queueTime", job.phases.queued);
  PutTime(phases, "admitTime", job.phases.admitted);
  PutTime(phases, "imageReadyTime", job.phases.image_ready);
  PutTime(phases, "allRunningTime", job.phases.all_running);
  PutTime(phases, "endTime", job.phases.finished);
  out["phases"] = phases;
  if (job.queue_position > 0) {
    out["queue"] = {{"position", job.queue_position}, {"reason", job.queue_reason}};
  }
  if (job.preemptions > 0) out["preemptions"] = job.preemptions;
  nlohmann::json grants = GrantsJson(job.grants);
  if (!grants.empty()) out["grants"] = grants;
  // What the current attempt's image names stood for when it launched (tags are
  // resolved at every launch): the digest to pull or pin, and the engine's image id.
  nlohmann::json images = ImagesJson(job.images);
  if (!images.empty()) out["images"] = images;
  out["replicas"] = ReplicasJson(job);
  nlohmann::json ev = nlohmann::json::array();
  for (const JobEvent& e : events) {
    ev.push_back({{"time", FormatRfc3339(e.time)}, {"kind", e.kind}, {"message", e.message}});
  }
  out["events"] = ev;
  return out;
}

}  // namespace ty::wire
