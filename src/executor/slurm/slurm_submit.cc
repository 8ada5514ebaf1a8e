#include "executor/slurm/slurm_submit.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
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

namespace {

// sbatch's options that do not depend on the job's shape: name, files, partition, QOS,
// and the time limit.
std::vector<std::string> CommonSbatchArgs(const AttemptSpec& attempt,
                                          const SlurmSubmitSettings& settings) {
  std::vector<std::string> a = {"--parsable",
                                "--job-name=" + SlurmJobName(attempt.job_uid, attempt.attempt),
                                "--comment=trainyard:" + attempt.job_uid,
                                "--output=" + settings.dir + "/batch.out",
                                "--chdir=" + settings.dir,
                                "--no-requeue",
                                "--kill-on-invalid-dep=yes"};
  const bool spot = attempt.spot;
  const std::string& partition =
      spot && !settings.spot_partition.empty() ? settings.spot_partition : settings.partition;
  const std::string& qos = spot && !settings.spot_qos.empty() ? settings.spot_qos : settings.qos;
  if (!partition.empty()) a.push_back("--partition=" + partition);
  if (!qos.empty()) a.push_back("--qos=" + qos);
  if (attempt.time_limit > 0) {
    // A backstop only: the daemon stops the job at its timeout (and its grace) first;
    // Slurm ends it two minutes later if no daemon did.
    const int64_t minutes = (attempt.time_limit + 60LL * 1000000 - 1) / (60LL * 1000000) + 2;
    a.push_back("--time=" + std::to_string(minutes));
  }
  return a;
}

// The attempt's replicas grouped by pool, in pool order.
std::vector<Component> PoolsOf(const std::vector<ReplicaLaunch>& sorted) {
  std::vector<Component> pools;
  for (const ReplicaLaunch& r : sorted) {
    if (pools.empty() || pools.back().pool != r.pool) pools.push_back({r.pool});
    ++pools.back().tasks;
    Grow(&pools.back(), r);
  }
  return pools;
}

}  // namespace

SlurmJobShape ShapeSlurmJob(const AttemptSpec& attempt, const SlurmSubmitSettings& settings) {
  std::vector<ReplicaLaunch> sorted = attempt.replicas;
  std::sort(sorted.begin(), sorted.end(), [](const ReplicaLaunch& a, const ReplicaLaunch& b) {
    return std::tie(a.pool, a.index) < std::tie(b.pool, b.index);
  });
  const std::vector<Component> pools = PoolsOf(sorted);
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
  a = CommonSbatchArgs(attempt, settings);
  const std::string launch =
      ShellQuote(settings.launcher) + " --context " + ShellQuote(settings.dir);
  std::string step = "exec srun --resv-ports=" + std::to_string(total);
  if (total == 1) {
    // One replica: the batch step runs it (slurm_topology.h SingleReplicaTopology).
    AppendResources(pools[0], &a);
    step = "export TY_SLURM_SINGLE=1\nexec " + launch;
  } else if (shape.heterogeneous) {
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

ReplicaLaunch WithPackageInstall(ReplicaLaunch r, const std::string& bucket_root) {
  if (r.python_packages.empty() || r.command.empty()) return r;
  std::string find_links, targets;
  for (const std::string& uri : r.python_packages) {
    if (uri.rfind("gs://", 0) != 0) continue;
    const std::string path = bucket_root + "/" + uri.substr(5);
    find_links += " --find-links " + ShellQuote(path.substr(0, path.rfind('/')));
    targets += " " + ShellQuote(path);
  }
  if (targets.empty()) return r;
  // As executor/container/package_images.cc installs: offline, the image's own setuptools, its
  // output to stderr (the replica's log says what pip did), PEP 668 waived.
  const std::string script =
      "(cd /tmp && PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --no-index "
      "--no-cache-dir --disable-pip-version-check --no-build-isolation" +
      find_links + targets + " 1>&2) || exit $?; exec \"$@\"";
  std::vector<std::string> command = {"sh", "-c", script, "trainyard-install"};
  command.insert(command.end(), r.command.begin(), r.command.end());
  r.command = std::move(command);
  r.python_packages.clear();
  return r;
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
    const bool leader = plus == std::string::npos || id.substr(plus + 1) == "0";
    if (plus != std::string::npos) id.resize(plus);
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string state = line.substr(a + 1, b - a - 1);
    auto [it, first] = out.try_emplace(id);
    if (first) it->second.all_ended = true;
    it->second.all_ended = it->second.all_ended && IsSlurmEnded(state);
    if (leader) {  // The leader speaks for the job.
      it->second.state = state;
      it->second.reason = line.substr(b + 1);
    }
  }
  // Components listed without their leader (not seen) speak for nothing.
  for (auto it = out.begin(); it != out.end();) {
    it = it->second.state.empty() ? out.erase(it) : std::next(it);
  }
  return out;
}

namespace {

std::string VertexGpuType(std::string slurm_type) {
  for (char& c : slurm_type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::map<std::string, std::string> kKnown = {{"T4", "NVIDIA_TESLA_T4"},
                                                            {"V100", "NVIDIA_TESLA_V100"},
                                                            {"P100", "NVIDIA_TESLA_P100"},
                                                            {"P4", "NVIDIA_TESLA_P4"},
                                                            {"K80", "NVIDIA_TESLA_K80"},
                                                            {"A100", "NVIDIA_TESLA_A100"},
                                                            {"A100_80GB", "NVIDIA_A100_80GB"},
                                                            {"H100", "NVIDIA_H100_80GB"},
                                                            {"L4", "NVIDIA_L4"}};
  auto it = kKnown.find(slurm_type);
  return it != kKnown.end() ? it->second : "NVIDIA_" + slurm_type;
}

// "gpu:t4:2(S:0),shard:8" -> type and count of its gpu entry.
void ParseGres(const std::string& gres, SlurmNodeInventory* node) {
  size_t pos = 0;
  while (pos < gres.size()) {
    size_t comma = gres.find(',', pos);
    if (comma == std::string::npos) comma = gres.size();
    std::string item = gres.substr(pos, comma - pos);
    pos = comma + 1;
    item = item.substr(0, item.find('('));
    if (item.rfind("gpu:", 0) != 0) continue;
    const size_t last = item.rfind(':');
    const std::string count = item.substr(last + 1);
    if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos ||
        count.size() > 4) {
      continue;
    }
    node->gpus = std::atoi(count.c_str());
    if (last > 3) node->gpu_type = VertexGpuType(item.substr(4, last - 4));
  }
}

}  // namespace

std::vector<SlurmNodeInventory> ParseSinfoNodes(const std::string& text) {
  std::vector<SlurmNodeInventory> out;
  std::set<std::string> seen;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::vector<std::string> f;
    size_t start = pos;
    for (size_t bar = text.find('|', start); bar != std::string::npos && bar < nl;
         bar = text.find('|', start)) {
      f.push_back(text.substr(start, bar - start));
      start = bar + 1;
    }
    f.push_back(text.substr(start, nl - start));
    pos = nl + 1;
    if (f.size() != 4 || f[0].empty() || !seen.insert(f[0]).second) continue;
    SlurmNodeInventory node;
    node.name = f[0];
    node.cpus = std::atof(f[1].c_str());
    node.memory_gb = std::atof(f[2].c_str()) / 1024;
    if (node.cpus <= 0 || node.memory_gb <= 0) continue;
    ParseGres(f[3], &node);
    out.push_back(std::move(node));
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
