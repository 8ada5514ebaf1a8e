#include "service/launch_plan.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "images/runtimes.h"
#include "machines/trial_jobs.h"
#include "model/runtime_env.h"

namespace ty::service {

executor::AttemptSpec BuildAttemptSpec(const model::Job& job,
                                       const std::string& replica_bucket_root,
                                       const std::string& storage_endpoint,
                                       const std::string& trial_metrics_dir) {
  executor::AttemptSpec spec;
  spec.job_uid = job.uid;
  spec.attempt = job.attempt;
  // Intents only; the executor decides how (a network of the attempt's own, mounts).
  spec.peers_talk = model::TotalReplicas(job.spec) > 1;
  spec.shells = job.spec.enable_web_access;
  spec.buckets = BucketsOf(job.spec);
  // Only a timeout the job asked for: the 7-day default would exceed many clusters'
  // partition limits and hold the job pending there for nothing.
  if (job.spec.scheduling.timeout != model::Scheduling::kDefaultTimeout) {
    spec.time_limit = job.spec.scheduling.timeout;
  }
  spec.spot = job.spec.scheduling.spot;
  spec.labels[executor::kLabelJob] = job.uid;
  spec.labels[executor::kLabelAttempt] = std::to_string(job.attempt);
  model::RuntimeOptions runtime;
  runtime.bucket_root = replica_bucket_root;
  runtime.storage_endpoint = storage_endpoint;
  if (job.trial_id > 0) runtime.trial_id = std::to_string(job.trial_id);
  for (const auto& r : job.replicas) {
    model::ReplicaRuntime rt = model::BuildReplicaRuntime(job, r.pool, r.index, runtime);
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
    launch.python_packages = rt.python_packages;
    // The primary replica reports (cloudml-hypertune); the daemon reads the file there.
    if (r.pool == 0 && r.index == 0) launch.metrics_host_dir = trial_metrics_dir;
    const model::MachineSpec& machine = job.spec.pools[r.pool].machine;
    launch.accelerator_type = machine.accelerator_type;
    launch.accelerator_count = machine.accelerator_type.empty() ? 0 : machine.accelerator_count;
    for (const model::ReplicaGrant& g : job.grants) {
      if (g.pool != r.pool || g.index != r.index) continue;
      launch.gpu_indices = g.gpu_indices;
      launch.cpu_limit = g.cpu_limit;
      launch.memory_limit_gb = g.memory_limit_gb;
    }
    spec.replicas.push_back(std::move(launch));
  }
  return spec;
}

std::vector<std::string> BucketsOf(const model::JobSpec& spec) {
  std::vector<std::string> out;
  for (const std::string* uri : {&spec.base_output_directory, &spec.job_dir}) {
    if (auto split = model::SplitGcsUri(*uri)) out.push_back(split->first);
  }
  // Python packages are read from their bucket by the replica (PYTHONPATH).
  for (const model::WorkerPool& pool : spec.pools) {
    if (!pool.python_package) continue;
    for (const std::string& uri : pool.python_package->package_uris) {
      if (auto split = model::SplitGcsUri(uri)) out.push_back(split->first);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// Each gs://NAME in `text` (a flag's value may follow "=", a list ","), NAME as far as
// a bucket name goes.
void AddGcsBucketsIn(const std::string& text, std::set<std::string>* out) {
  constexpr std::string_view kScheme = "gs://";
  for (size_t at = text.find(kScheme); at != std::string::npos; at = text.find(kScheme, at + 1)) {
    size_t end = at + kScheme.size();
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) ||
                                 text[end] == '-' || text[end] == '_' || text[end] == '.')) {
      ++end;
    }
    if (end > at + kScheme.size())
      out->insert(text.substr(at + kScheme.size(), end - at - kScheme.size()));
  }
}

}  // namespace

std::string RuntimeLineOf(const model::Job& job) {
  if (job.dialect != model::Dialect::kMlV1) return "";
  // The request as accepted (canonical JSON): runtimeVersion is not kept in the spec.
  nlohmann::json body = nlohmann::json::parse(job.spec_json, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* input =
      body.is_object() && body.contains("trainingInput") ? &body["trainingInput"] : nullptr;
  if (input == nullptr || !input->is_object()) return "";
  const std::string runtime = input->value("runtimeVersion", "");
  if (runtime.empty()) return "";
  return images::DescribeMlRuntime(runtime, input->value("pythonVersion", ""));
}

std::vector<std::string> UnmountedBucketsNamed(const executor::AttemptSpec& attempt) {
  std::set<std::string> named;
  for (const executor::ReplicaLaunch& r : attempt.replicas) {
    for (const std::string& word : r.command) AddGcsBucketsIn(word, &named);
    for (const std::string& word : r.args) AddGcsBucketsIn(word, &named);
    for (const auto& e : r.env) AddGcsBucketsIn(e.value, &named);
  }
  for (const auto* seen : {&attempt.buckets, &attempt.visible_buckets}) {
    for (const std::string& b : *seen) named.erase(b);
  }
  return {named.begin(), named.end()};
}

}  // namespace ty::service
