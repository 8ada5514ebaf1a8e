#include "model/spec_limits.h"

#include <tuple>

#include "model/spec_images.h"

namespace ty::model {
namespace {

// Wire paths of the fields a bound names, per dialect. ml v1 folds every role's
// command/args into one spec; its errors name the job-level fields users set.
std::string PoolPath(const JobSpec& /*spec*/, int pool) {
  return "jobSpec.workerPoolSpecs[" + std::to_string(pool) + "]";
}

std::string ReplicaCountPath(const JobSpec& spec, int pool) {
  if (spec.dialect == Dialect::kVertex) return PoolPath(spec, pool) + ".replicaCount";
  switch (pool) {
    case 1:
      return "trainingInput.workerCount";
    case 2:
      return "trainingInput.parameterServerCount";
    default:
      return "trainingInput.evaluatorCount";
  }
}

std::string ArgvPath(const JobSpec& spec, int pool, bool command) {
  const WorkerPool& p = spec.pools[pool];
  if (spec.dialect == Dialect::kMlV1) {
    if (p.python_package || !command) return "trainingInput.args";
    return "trainingInput.masterConfig.containerCommand";
  }
  std::string base =
      PoolPath(spec, pool) + (p.python_package ? ".pythonPackageSpec" : ".containerSpec");
  return base + (command ? ".command" : ".args");
}

std::string EnvPath(const JobSpec& spec, int pool) {
  const WorkerPool& p = spec.pools[pool];
  return PoolPath(spec, pool) +
         (p.python_package ? ".pythonPackageSpec.env" : ".containerSpec.env");
}

size_t Chars(const std::vector<std::string>& list) {
  size_t n = 0;
  for (const std::string& s : list) n += s.size();
  return n;
}

Status CheckReplicas(const JobSpec& spec, const SpecLimits& limits) {
  int64_t total = 0;
  for (int p = 0; p < static_cast<int>(spec.pools.size()); ++p) {
    int64_t count = spec.pools[p].replica_count;
    if (count > limits.max_replicas_per_pool) {
      return FieldError(ReplicaCountPath(spec, p),
                        "must be at most " + std::to_string(limits.max_replicas_per_pool) +
                            " (this server's max_replicas_per_pool)");
    }
    total += count;
    if (total > limits.max_replicas_per_job) {
      return FieldError(ReplicaCountPath(spec, p),
                        "brings the job to " + std::to_string(total) + " replicas; at most " +
                            std::to_string(limits.max_replicas_per_job) +
                            " are allowed (this server's max_replicas_per_job)");
    }
  }
  return Status::Ok();
}

Status CheckArgv(const JobSpec& spec, const SpecLimits& limits) {
  size_t chars = 0;
  for (int p = 0; p < static_cast<int>(spec.pools.size()); ++p) {
    const WorkerPool& pool = spec.pools[p];
    const std::vector<std::string>* command = pool.container ? &pool.container->command : nullptr;
    const std::vector<std::string>* args =
        pool.container ? &pool.container->args
                       : (pool.python_package ? &pool.python_package->args : nullptr);
    size_t entries = 0;
    for (const auto& [list, is_command] : {std::pair{command, true}, std::pair{args, false}}) {
      if (list == nullptr) continue;
      entries += list->size();
      chars += Chars(*list);
      if (entries > limits.max_argv_entries) {
        return FieldError(ArgvPath(spec, p, is_command),
                          "command and args together must have at most " +
                              std::to_string(limits.max_argv_entries) + " entries");
      }
      if (chars > limits.max_argv_chars) {
        return FieldError(ArgvPath(spec, p, is_command),
                          "commands and args of a job together must not exceed " +
                              std::to_string(limits.max_argv_chars) + " characters");
      }
    }
  }
  return Status::Ok();
}

Status CheckEnv(const JobSpec& spec, const SpecLimits& limits) {
  size_t chars = 0;
  for (int p = 0; p < static_cast<int>(spec.pools.size()); ++p) {
    const WorkerPool& pool = spec.pools[p];
    const std::vector<EnvVar>* env =
        pool.container ? &pool.container->env
                       : (pool.python_package ? &pool.python_package->env : nullptr);
    if (env == nullptr) continue;
    if (env->size() > limits.max_env_entries) {
      return FieldError(EnvPath(spec, p),
                        "must have at most " + std::to_string(limits.max_env_entries) + " entries");
    }
    for (const EnvVar& var : *env) chars += var.name.size() + var.value.size();
    if (chars > limits.max_env_chars) {
      return FieldError(EnvPath(spec, p),
                        "names and values of a job's env together must not exceed " +
                            std::to_string(limits.max_env_chars) + " characters");
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckSpecLimits(const JobSpec& spec, const SpecLimits& limits) {
  RETURN_IF_ERROR(CheckReplicas(spec, limits));
  RETURN_IF_ERROR(CheckArgv(spec, limits));
  RETURN_IF_ERROR(CheckEnv(spec, limits));
  if (spec.labels.size() > limits.max_labels) {
    return FieldError("labels",
                      "must have at most " + std::to_string(limits.max_labels) + " entries");
  }
  // Not a size, but checked with them at submit and on every stored job at start-up:
  // an image reference goes into engine API paths (a stored "../containers/json?x="
  // once crashed the daemon at each start).
  return CheckSpecImages(spec);
}

Status ValidateSpecLimits(const SpecLimits& limits) {
  const std::pair<const char*, int64_t> values[] = {
      {"max_replicas_per_pool", limits.max_replicas_per_pool},
      {"max_replicas_per_job", limits.max_replicas_per_job},
      {"max_argv_entries", static_cast<int64_t>(limits.max_argv_entries)},
      {"max_argv_chars", static_cast<int64_t>(limits.max_argv_chars)},
      {"max_env_entries", static_cast<int64_t>(limits.max_env_entries)},
      {"max_env_chars", static_cast<int64_t>(limits.max_env_chars)},
      {"max_labels", static_cast<int64_t>(limits.max_labels)},
  };
  for (const auto& [name, value] : values) {
    if (value <= 0) return InvalidArgument(std::string(name) + ": must be greater than 0");
  }
  const std::tuple<const char*, size_t, size_t> capped[] = {
      {"max_argv_entries", limits.max_argv_entries, kMaxArgvListEntries},
      {"max_env_entries", limits.max_env_entries, kMaxEnvEntries},
      {"max_labels", limits.max_labels, kMaxLabelEntries},
  };
  for (const auto& [name, value, cap] : capped) {
    if (value > cap) {
      return InvalidArgument(std::string(name) + ": must be at most " + std::to_string(cap) +
                             " (the request parser's bound)");
    }
  }
  return Status::Ok();
}

}  // namespace ty::model
