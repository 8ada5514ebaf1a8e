// GET /metrics in the Prometheus text exposition format (version 0.0.4): jobs by
// state, the admission queue (length, age of the oldest job), admitted resources
// against capacity, admission passes (count, time) and their decisions, preemptions.
// `promtool check metrics` accepts it (tests/api/api_metrics_test.cc).
#include <cstdio>
#include <map>
#include <sstream>

#include "api/endpoints.h"
#include "api/http_status.h"

namespace ty::api::internal {

namespace {

constexpr double kBytesPerGb = 1024.0 * 1024 * 1024;

class Exposition {
 public:
  // One metric family: its HELP and TYPE lines, then its samples.
  void Family(const std::string& name, const std::string& type, const std::string& help) {
    out_ << "# HELP " << name << ' ' << help << '\n' << "# TYPE " << name << ' ' << type << '\n';
  }
  void Sample(const std::string& name, double value, const std::string& labels = "") {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", value);
    out_ << name;
    if (!labels.empty()) out_ << '{' << labels << '}';
    out_ << ' ' << buf << '\n';
  }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

std::string Label(const std::string& key, const std::string& value) {
  std::string escaped;
  for (char c : value) {
    if (c == '\\' || c == '"') escaped += '\\';
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    escaped += c;
  }
  return key + "=\"" + escaped + "\"";
}

void JobFamilies(Exposition& e, const std::map<model::JobState, int64_t>& by_state,
                 const service::AdmissionStats& a, TimeMicros now) {
  e.Family("trainyard_jobs", "gauge", "Stored jobs by state.");
  for (model::JobState s :
       {model::JobState::kQueued, model::JobState::kPreparing, model::JobState::kRunning,
        model::JobState::kSucceeded, model::JobState::kFailed, model::JobState::kCancelling,
        model::JobState::kCancelled}) {
    auto it = by_state.find(s);
    e.Sample("trainyard_jobs", it == by_state.end() ? 0 : static_cast<double>(it->second),
             Label("state", model::JobStateName(s)));
  }
  e.Family("trainyard_queue_length", "gauge", "Jobs waiting for admission.");
  e.Sample("trainyard_queue_length", static_cast<double>(a.queued));
  e.Family("trainyard_queue_oldest_age_seconds", "gauge",
           "How long the oldest queued job has waited (0 when none waits).");
  e.Sample("trainyard_queue_oldest_age_seconds",
           a.oldest_queued_since > 0 ? static_cast<double>(now - a.oldest_queued_since) / 1e6 : 0);
}

// Each node's capacity and what admitted jobs hold on it (their grants), so free room is
// visible per node (a Slurm cluster's nodes included), not only as a daemon-wide total.
void NodeFamilies(Exposition& e, const std::vector<scheduler::Capacity>& capacities,
                  const std::vector<model::Job>& holding) {
  struct Held {
    double cpus = 0, memory_gb = 0, gpus = 0;
  };
  std::map<std::string, Held> held;
  for (const model::Job& job : holding) {
    for (const model::ReplicaGrant& g : job.grants) {
      Held& h = held[g.node_name];
      h.cpus += g.cpus;
      h.memory_gb += g.memory_gb;
      h.gpus += static_cast<double>(g.gpu_indices.size());
    }
  }
  e.Family("trainyard_node_capacity_cpus", "gauge",
           "vCPUs admission may promise on each node (overcommitted).");
  for (const scheduler::Capacity& c : capacities) {
    for (const scheduler::Node& n : c.nodes) {
      e.Sample("trainyard_node_capacity_cpus", n.cpus * c.cpu_overcommit, Label("node", n.name));
    }
  }
  e.Family("trainyard_node_capacity_memory_bytes", "gauge",
           "Memory admission may promise on each node (overcommitted).");
  for (const scheduler::Capacity& c : capacities) {
    for (const scheduler::Node& n : c.nodes) {
      e.Sample("trainyard_node_capacity_memory_bytes",
               n.memory_gb * c.memory_overcommit * kBytesPerGb, Label("node", n.name));
    }
  }
  e.Family("trainyard_node_capacity_gpus", "gauge", "GPUs on each node.");
  for (const scheduler::Capacity& c : capacities) {
    for (const scheduler::Node& n : c.nodes) {
      e.Sample("trainyard_node_capacity_gpus", static_cast<double>(n.gpus.size()),
               Label("node", n.name));
    }
  }
  e.Family("trainyard_node_held_cpus", "gauge", "vCPUs admitted jobs hold on each node.");
  for (const auto& [node, h] : held)
    e.Sample("trainyard_node_held_cpus", h.cpus, Label("node", node));
  e.Family("trainyard_node_held_memory_bytes", "gauge", "Memory admitted jobs hold on each node.");
  for (const auto& [node, h] : held) {
    e.Sample("trainyard_node_held_memory_bytes", h.memory_gb * kBytesPerGb, Label("node", node));
  }
  e.Family("trainyard_node_held_gpus", "gauge", "GPUs admitted jobs hold on each node.");
  for (const auto& [node, h] : held)
    e.Sample("trainyard_node_held_gpus", h.gpus, Label("node", node));
}

void ResourceFamilies(Exposition& e, const std::vector<scheduler::Capacity>& capacities,
                      const service::AdmissionStats& a) {
  double cpus = 0, memory = 0;
  std::map<std::string, int64_t> gpus;
  for (const scheduler::Capacity& c : capacities) {  // One per executor.
    for (const scheduler::Node& n : c.nodes) {
      cpus += n.cpus * c.cpu_overcommit;
      memory += n.memory_gb * c.memory_overcommit;
      for (const scheduler::Gpu& g : n.gpus) gpus[g.type] += 1;
    }
  }
  e.Family("trainyard_capacity_cpus", "gauge", "vCPUs admission may promise (overcommitted).");
  e.Sample("trainyard_capacity_cpus", cpus);
  e.Family("trainyard_capacity_memory_bytes", "gauge",
           "Memory admission may promise (overcommitted).");
  e.Sample("trainyard_capacity_memory_bytes", memory * kBytesPerGb);
  e.Family("trainyard_capacity_gpus", "gauge", "GPUs by accelerator type.");
  for (const auto& [type, n] : gpus) {
    e.Sample("trainyard_capacity_gpus", static_cast<double>(n), Label("type", type));
  }
  e.Family("trainyard_admitted_cpus", "gauge", "vCPUs held by admitted jobs.");
  e.Sample("trainyard_admitted_cpus", a.admitted_cpus);
  e.Family("trainyard_admitted_memory_bytes", "gauge", "Memory held by admitted jobs.");
  e.Sample("trainyard_admitted_memory_bytes", a.admitted_memory_gb * kBytesPerGb);
  e.Family("trainyard_admitted_gpus", "gauge", "GPUs held by admitted jobs, by type.");
  for (const auto& [type, n] : a.admitted_gpus) {
    e.Sample("trainyard_admitted_gpus", static_cast<double>(n), Label("type", type));
  }
}

void DecisionFamilies(Exposition& e, const service::AdmissionStats& a) {
  e.Family("trainyard_admission_pass_seconds", "summary",
           "Time of admission passes (one per change to the queue or the running set).");
  e.Sample("trainyard_admission_pass_seconds_sum", a.pass_seconds_total);
  e.Sample("trainyard_admission_pass_seconds_count", static_cast<double>(a.passes));
  e.Family("trainyard_admission_last_pass_seconds", "gauge", "Time of the latest pass.");
  e.Sample("trainyard_admission_last_pass_seconds", a.last_pass_seconds);
  e.Family("trainyard_admissions_total", "counter", "Jobs admitted.");
  e.Sample("trainyard_admissions_total", static_cast<double>(a.admissions));
  e.Family("trainyard_preemptions_total", "counter", "Spot jobs preempted.");
  e.Sample("trainyard_preemptions_total", static_cast<double>(a.preemptions));
}

}  // namespace

HttpResponse Metrics(service::JobService* service) {
  Result<std::map<model::JobState, int64_t>> by_state = service->JobsByState();
  if (!by_state.ok()) return ErrorResponse(by_state.status());
  service::AdmissionStats a = service->Admission();
  Exposition e;
  JobFamilies(e, *by_state, a, service->Now());
  ResourceFamilies(e, service->Capacities(), a);
  NodeFamilies(e, service->Capacities(),
               service->LiveJobsWhere([](const model::Job& j) { return !j.grants.empty(); }));
  DecisionFamilies(e, a);
  executor::BackendHealth engine = service->backend_health();
  e.Family("trainyard_engine_up", "gauge",
           "1 when the container engine answered the last probe (every 2 s), else 0.");
  e.Sample("trainyard_engine_up", engine.reachable ? 1 : 0);
  service::StoreWriteHealth store = service->store_health();
  e.Family("trainyard_store_write_failures_total", "counter",
           "Job record commits that failed (a full disk, an I/O error); retries included.");
  e.Sample("trainyard_store_write_failures_total", static_cast<double>(store.failed_writes));
  e.Family("trainyard_store_jobs_waiting", "gauge",
           "Jobs whose inputs wait for the store to write again.");
  e.Sample("trainyard_store_jobs_waiting", static_cast<double>(store.jobs_waiting));
  if (std::optional<service::JobService::DataDisk> disk = service->data_disk()) {
    e.Family("trainyard_data_free_bytes", "gauge",
             "Free bytes on the data directory's disk (below the reserve, submits wait).");
    e.Sample("trainyard_data_free_bytes", static_cast<double>(disk->space.free_bytes));
    e.Family("trainyard_data_reserve_bytes", "gauge", "The data disk's reserve.");
    e.Sample("trainyard_data_reserve_bytes", static_cast<double>(disk->reserve_bytes));
  }
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = e.text();
  return r;
}

}  // namespace ty::api::internal
