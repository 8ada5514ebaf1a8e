#include "executor/slurm_submit.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace ty::executor::internal {
namespace {

struct Component {
  int pool = 0;
  int tasks = 0;
  int cpus = 0;  // 0 = Slurm's default.
  int64_t mem_per_cpu_mb = 0;
  int gpus = 0;
};

// Single-quoted for sh.
std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void Grow(Component* c, const ReplicaLaunch& r) {
  const int cpus = r.cpu_limit > 0 ? static_cast<int>(std::ceil(r.cpu_limit - 1e-9)) : 0;
  c->cpus = std::max(c->cpus, cpus);
  if (r.memory_limit_gb > 0) {
    const double mb = r.memory_limit_gb * 1024;
    c->mem_per_cpu_mb = std::max<int64_t>(c->mem_per_cpu_mb,
                                          static_cast<int64_t>(std::ceil(mb / std::max(cpus, 1))));
  }
  c->gpus = std::max(c->gpus, r.accelerator_count);
}

void AppendResources(const Component& c, std::vector<std::string>* args) {
  args->push_back("--ntasks=" + std::to_string(c.tasks));
  if (c.cpus > 0) args->push_back("--cpus-per-task=" + std::to_string(c.cpus));
  if (c.mem_per_cpu_mb > 0) args->push_back("--mem-per-cpu=" + std::to_string(c.mem_per_cpu_mb));
  if (c.gpus > 0) args->push_back("--gpus-per-task=" + std::to_string(c.gpus));
}

}  // namespace

std::string SlurmJobName(const std::string& job_uid, int attempt) {
  return "ty-" + job_uid + "-" + std::to_string(attempt);
}

SlurmJobShape ShapeSlurmJob(const AttemptSpec& attempt, const SlurmSubmitSettings& settings) {
  std::vector<Component> pools;  // In pool order.
  std::vector<ReplicaLaunch> sorted = attempt.replicas;
  std::sort(sorted.begin(), sorted.end(), [](const ReplicaLaunch& a, const ReplicaLaunch& b) {
    return std::tie(a.pool, a.index) < std::tie(b.pool, b.index);
  });
  for (const ReplicaLaunch& r : sorted) {
    if (pools.empty() || pools.back().pool != r.pool) pools.push_back({r.pool});
    ++pools.back().tasks;
    Grow(&pools.back(), r);
  }
  SlurmJobShape shape;
  int total = 0;
  for (const Component& c : pools) {
    shape.pools +=
        (shape.pools.empty() ? "" : ",") + std::to_string(c.pool) + ":" + std::to_string(c.tasks);
    total += c.tasks;
  }
  shape.heterogeneous =
      pools.size() > 1 && settings.cluster_nodes >= static_cast<int>(pools.size());

  std::vector<std::string>& a = shape.sbatch_args;
  a = {"--parsable",
       "--job-name=" + SlurmJobName(attempt.job_uid, attempt.attempt),
       "--comment=trainyard:" + attempt.job_uid,
       "--output=" + settings.dir + "/batch.out",
       "--chdir=" + settings.dir,
       "--no-requeue",
       "--kill-on-invalid-dep=yes"};
  if (!settings.partition.empty()) a.push_back("--partition=" + settings.partition);
  if (!settings.qos.empty()) a.push_back("--qos=" + settings.qos);
  const std::string launch =
      ShellQuote(settings.launcher) + " --context " + ShellQuote(settings.dir);
  std::string step = "exec srun --resv-ports=" + std::to_string(total);
  if (shape.heterogeneous) {
    for (size_t k = 0; k < pools.size(); ++k) {
      if (k > 0) a.push_back(":");
      AppendResources(pools[k], &a);
      step += (k > 0 ? " :" : "") + std::string(" --het-group=") + std::to_string(k) + " -n" +
              std::to_string(pools[k].tasks) + " " + launch;
    }
  } else {
    Component all;
    all.tasks = total;
    for (const ReplicaLaunch& r : sorted) Grow(&all, r);
    AppendResources(all, &a);
    step += " -n" + std::to_string(total) + " " + launch;
  }
  a.push_back(settings.dir + "/batch.sh");
  shape.script = "#!/bin/sh\n# Trainyard job " + attempt.job_uid + ", attempt " +
                 std::to_string(attempt.attempt) +
                 ": one step, each task runs one replica (ty-slurm-launch).\n"
                 "export TY_SLURM_POOLS=" +
                 shape.pools + "\n" + step + "\n";
  return shape;
}

std::map<std::string, SlurmJobState> ParseSqueue(const std::string& text) {
  std::map<std::string, SlurmJobState> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    size_t a = line.find('|');
    size_t b = a == std::string::npos ? a : line.find('|', a + 1);
    if (b == std::string::npos) continue;
    std::string id = line.substr(0, a);
    const size_t plus = id.find('+');
    if (plus != std::string::npos) {
      if (id.substr(plus + 1) != "0") continue;  // The leader speaks for the job.
      id.resize(plus);
    }
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) continue;
    out[id] = {line.substr(a + 1, b - a - 1), line.substr(b + 1)};
  }
  return out;
}

bool IsSlurmEnded(const std::string& state) {
  static const std::set<std::string> kEnded = {
      "COMPLETED", "FAILED",   "CANCELLED",     "TIMEOUT",      "NODE_FAIL", "PREEMPTED",
      "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED"};
  return kEnded.count(state) > 0;
}

bool IsSlurmRunning(const std::string& state) {
  return state == "RUNNING" || state == "COMPLETING" || state == "STOPPED" ||
         state == "SUSPENDED" || state == "SIGNALING" || state == "STAGE_OUT";
}

}  // namespace ty::executor::internal
