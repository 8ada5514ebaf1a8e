#include "executor/executor.h"

#include "model/runtime_env.h"

namespace ty::executor {

std::string ReplicaName(const std::string& job_uid, int attempt, int pool, int index) {
  return "ty-" + job_uid + "-" + std::to_string(attempt) + "-" + std::to_string(pool) + "-" +
         std::to_string(index);
}

bool ParseReplicaName(const std::string& name, std::string* job_uid, int* attempt, int* pool,
                      int* index) {
  if (name.rfind("ty-", 0) != 0) return false;
  int* parts[3] = {index, pool, attempt};
  size_t end = name.size();
  for (int* part : parts) {
    size_t dash = name.rfind('-', end - 1);
    if (dash == std::string::npos || dash < 3 || dash + 1 >= end) return false;
    int v = 0;
    for (size_t i = dash + 1; i < end; ++i) {
      if (name[i] < '0' || name[i] > '9' || v > 100000000) return false;
      v = v * 10 + (name[i] - '0');
    }
    *part = v;
    end = dash;
  }
  if (end <= 3) return false;
  *job_uid = name.substr(3, end - 3);
  return true;
}

ReplicaLaunch WithMetricsDir(ReplicaLaunch r, bool same_filesystem) {
  if (r.metrics_host_dir.empty()) return r;
  const std::string dir = same_filesystem ? r.metrics_host_dir : model::kReplicaMetricsDir;
  if (!same_filesystem) r.mounts.push_back({r.metrics_host_dir, model::kReplicaMetricsDir, false});
  r.env.push_back({"CLOUD_ML_HP_METRIC_FILE", dir + "/" + model::kTrialMetricsFile});
  return r;
}

std::string JoinIndices(const std::vector<int>& indices) {
  std::string out;
  for (int i : indices) {
    if (!out.empty()) out += ',';
    out += std::to_string(i);
  }
  return out;
}

}  // namespace ty::executor
