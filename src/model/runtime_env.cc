#include "model/runtime_env.h"

#include <nlohmann/json.hpp>

#include "images/runtimes.h"

namespace ty::model {
namespace {

using OrderedJson = nlohmann::ordered_json;

// Role of a pool in the TF cluster: ml v1 names, Vertex maps pool 0 to `chief`.
std::string TfRole(const Job& job, int pool) {
  if (pool == 0 && (job.dialect == Dialect::kVertex || job.spec.use_chief_in_tf_config)) {
    return "chief";
  }
  return MlRoleName(pool);
}

std::string HostPort(const Job& job, int pool, int index, const RuntimeOptions& options) {
  if (static_cast<size_t>(pool) < options.peer_addresses.size() &&
      static_cast<size_t>(index) < options.peer_addresses[pool].size()) {
    return options.peer_addresses[pool][index];
  }
  return ReplicaHostname(job, pool, index) + ":" + std::to_string(kClusterPort);
}

// camelCase -> snake_case for keys of the `job` dict inside TF_CONFIG / CLUSTER_SPEC.
// The docs leave the casing open; runcloudml.py was observed to use snake_case.
std::string SnakeCase(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c >= 'A' && c <= 'Z') {
      out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

OrderedJson SnakeKeys(const OrderedJson& in, bool is_map) {
  if (in.is_object()) {
    OrderedJson out = OrderedJson::object();
    for (auto it = in.begin(); it != in.end(); ++it) {
      // Map-typed fields (labels) keep their user keys.
      bool child_is_map = it.key() == "labels";
      out[is_map ? it.key() : SnakeCase(it.key())] = SnakeKeys(it.value(), child_is_map);
    }
    return out;
  }
  if (in.is_array()) {
    OrderedJson out = OrderedJson::array();
    for (const auto& v : in) out.push_back(SnakeKeys(v, false));
    return out;
  }
  return in;
}

// The job's own spec as a dict: Vertex the CustomJobSpec, ml v1 the TrainingInput.
OrderedJson JobDict(const Job& job) {
  OrderedJson parsed = OrderedJson::parse(job.spec_json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return OrderedJson::object();
  const char* key = job.dialect == Dialect::kVertex ? "jobSpec" : "trainingInput";
  if (!parsed.contains(key)) return OrderedJson::object();
  return SnakeKeys(parsed[key], false);
}

OrderedJson TaskObject(const std::string& type, int index, const RuntimeOptions& options) {
  OrderedJson task = OrderedJson::object();
  task["type"] = type;
  task["index"] = index;
  if (options.trial_id) task["trial"] = *options.trial_id;
  return task;
}

std::string TfConfig(const Job& job, int pool, int index, const RuntimeOptions& options) {
  OrderedJson cluster = OrderedJson::object();
  for (int p = 0; p < static_cast<int>(job.spec.pools.size()) && p < 3; ++p) {
    const WorkerPool& wp = job.spec.pools[p];
    if (wp.empty()) continue;
    OrderedJson hosts = OrderedJson::array();
    for (int i = 0; i < wp.replica_count; ++i) hosts.push_back(HostPort(job, p, i, options));
    cluster[TfRole(job, p)] = hosts;  // Evaluators (pool 3) are never in `cluster`.
  }
  OrderedJson tf = OrderedJson::object();
  tf["cluster"] = cluster;
  tf["task"] = TaskObject(TfRole(job, pool), index, options);
  tf["job"] = JobDict(job);
  tf["environment"] = "cloud";
  return tf.dump();
}

std::string ClusterSpec(const Job& job, int pool, int index, const RuntimeOptions& options) {
  auto key = [&](int p) {
    return job.dialect == Dialect::kVertex ? "workerpool" + std::to_string(p) : TfRole(job, p);
  };
  OrderedJson cluster = OrderedJson::object();
  for (int p = 0; p < static_cast<int>(job.spec.pools.size()); ++p) {
    const WorkerPool& wp = job.spec.pools[p];
    if (wp.empty()) continue;
    OrderedJson hosts = OrderedJson::array();
    for (int i = 0; i < wp.replica_count; ++i) hosts.push_back(HostPort(job, p, i, options));
    cluster[key(p)] = hosts;
  }
  OrderedJson cs = OrderedJson::object();
  cs["cluster"] = cluster;
  cs["environment"] = "cloud";
  cs["task"] = TaskObject(key(pool), index, options);
  cs["job"] = JobDict(job);
  return cs.dump();
}

void Set(std::vector<EnvVar>& env, const std::string& name, const std::string& value) {
  for (auto& e : env) {
    if (e.name == name) {
      e.value = value;
      return;
    }
  }
  env.push_back({name, value});
}

}  // namespace

std::string ReplicaHostname(const Job& job, int pool, int index) {
  std::string role =
      job.dialect == Dialect::kVertex ? "workerpool" + std::to_string(pool) : TfRole(job, pool);
  return "ty-" + job.uid + "-" + role + "-" + std::to_string(index);
}

int64_t TotalReplicas(const JobSpec& spec) {
  int64_t n = 0;
  for (const auto& p : spec.pools) n += p.replica_count;
  return n;
}

std::string ExpandEnvReferences(const std::string& value, const std::vector<EnvVar>& env) {
  std::string out;
  for (size_t i = 0; i < value.size();) {
    if (value.compare(i, 3, "$$(") == 0) {  // Escaped: `$$(X)` -> literal `$(X)`.
      out += "$(";
      i += 3;
      continue;
    }
    if (value.compare(i, 2, "$(") == 0) {
      size_t close = value.find(')', i + 2);
      if (close != std::string::npos) {
        std::string name = value.substr(i + 2, close - i - 2);
        const EnvVar* found = nullptr;
        for (const auto& e : env) {
          if (e.name == name) found = &e;  // Last definition wins.
        }
        if (found) {
          out += found->value;
        } else {
          out += value.substr(i, close - i + 1);  // Unresolved stays as written.
        }
        i = close + 1;
        continue;
      }
    }
    out += value[i++];
  }
  return out;
}

std::optional<std::pair<std::string, std::string>> SplitGcsUri(const std::string& uri) {
  const std::string prefix = "gs://";
  if (uri.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  std::string rest = uri.substr(prefix.size());
  size_t slash = rest.find('/');
  std::string bucket = rest.substr(0, slash);
  if (bucket.empty()) return std::nullopt;
  std::string path = slash == std::string::npos ? "" : rest.substr(slash + 1);
  return std::make_pair(bucket, path);
}

namespace {

// PyTorch's variables (docs/contracts/runtime.md §4).
void AppendTorchEnv(const Job& job, int pool, int index, const RuntimeOptions& options,
                    std::vector<EnvVar>* env) {
  // PyTorch (docs/contracts/runtime.md §4): the process group is the primary plus pool 1 in
  // CLUSTER_SPEC order (RANK 0 = primary, workerpool1 index i = 1 + i). Parameter servers and
  // evaluators are not members of it; they get ranks after the group so every
  // replica still has a distinct RANK.
  int64_t world = job.spec.pools[0].replica_count +
                  (job.spec.pools.size() > 1 ? job.spec.pools[1].replica_count : 0);
  int64_t rank = 0;
  for (int p = 0; p < pool; ++p) rank += job.spec.pools[p].replica_count;
  rank += index;
  // The primary's address, split at its port's colon (a placed replica's port varies).
  const std::string primary = HostPort(job, 0, 0, options);
  const size_t colon = primary.rfind(':');
  env->push_back({"MASTER_ADDR", primary.substr(0, colon)});
  env->push_back({"MASTER_PORT", primary.substr(colon + 1)});
  env->push_back({"WORLD_SIZE", std::to_string(world)});
  env->push_back({"RANK", std::to_string(rank)});
}

// What the service itself tells every replica: job, project and trial ids, output
// directories, and where the Cloud Storage client libraries find the daemon.
void AppendServiceEnv(const Job& job, const RuntimeOptions& options, std::vector<EnvVar>* env) {
  env->push_back({"CLOUD_ML_JOB_ID", job.public_id()});
  // Google sets the project *number*; a self-hosted server has only the name it was
  // given, which is what training code uses to build resource names anyway.
  env->push_back({"CLOUD_ML_PROJECT_ID", job.project});
  if (options.trial_id) env->push_back({"CLOUD_ML_TRIAL_ID", *options.trial_id});

  // Output directories (docs/contracts/runtime.md §6); kept as gs:// URIs as on Vertex; replicas
  // reach them through <bucket root>/BUCKET (/gcs in containers).
  if (!job.spec.base_output_directory.empty()) {
    std::string base = job.spec.base_output_directory;
    if (options.trial_id) base += *options.trial_id + "/";
    env->push_back({"AIP_MODEL_DIR", base + "model/"});
    env->push_back({"AIP_CHECKPOINT_DIR", base + "checkpoints/"});
    env->push_back({"AIP_TENSORBOARD_LOG_DIR", base + "logs/"});
  }
  if (!job.spec.tensorboard.empty()) {
    env->push_back({"AIP_TENSORBOARD_RESOURCE_NAME", job.spec.tensorboard});
  }

  // Cloud Storage client libraries in the replica talk to the daemon (the same
  // buckets as /gcs); a user's own value below wins.
  if (!options.storage_endpoint.empty()) {
    env->push_back({"STORAGE_EMULATOR_HOST", options.storage_endpoint});
    env->push_back({"CLOUD_STORAGE_EMULATOR_ENDPOINT", options.storage_endpoint});
  }
}

}  // namespace

namespace {

// A Python-package pool on a prebuilt image: `python3 -m MODULE ARGS`. The container
// executor installs the packages into the image first (executor/container/
// package_images.h); the packages (resolved under the executor's bucket root) are on
// PYTHONPATH too, so wheels and zips import where nothing installs them (the process
// executor).
void SetPackageRunner(const PythonPackageSpec& pkg, const RuntimeOptions& options,
                      const std::vector<std::string>& extra_args, ReplicaRuntime* rt) {
  rt->image = images::ResolveImage(pkg.executor_image_uri);
  rt->python_packages = pkg.package_uris;
  std::string pythonpath;
  for (const auto& uri : pkg.package_uris) {
    auto split = SplitGcsUri(uri);
    std::string path = split ? options.bucket_root + "/" + split->first + "/" + split->second : uri;
    pythonpath += (pythonpath.empty() ? "" : ":") + path;
  }
  if (!pythonpath.empty()) Set(rt->env, "PYTHONPATH", pythonpath);
  rt->command = {"python3", "-m", pkg.python_module};
  rt->args = pkg.args;
  rt->args.insert(rt->args.end(), extra_args.begin(), extra_args.end());
}

}  // namespace

ReplicaRuntime BuildReplicaRuntime(const Job& job, int pool, int index,
                                   const RuntimeOptions& options) {
  const JobSpec& spec = job.spec;
  const WorkerPool& wp = spec.pools[pool];
  ReplicaRuntime rt;
  std::vector<EnvVar>& env = rt.env;

  // TF_CONFIG: every ml v1 job; Vertex only when distributed (docs/contracts/runtime.md §2).
  bool distributed = TotalReplicas(spec) > 1;
  if (job.dialect == Dialect::kMlV1 || distributed) {
    env.push_back({"TF_CONFIG", TfConfig(job, pool, index, options)});
  }
  // CLUSTER_SPEC: every Vertex job; ml v1 custom containers (docs/contracts/runtime.md §3).
  if (job.dialect == Dialect::kVertex || wp.container) {
    env.push_back({"CLUSTER_SPEC", ClusterSpec(job, pool, index, options)});
  }

  AppendTorchEnv(job, pool, index, options, &env);
  AppendServiceEnv(job, options, &env);

  // The user's variables come last: they may reference the ones above and override
  // them by name.
  const std::vector<EnvVar>& user_env = wp.container ? wp.container->env : wp.python_package->env;
  for (const auto& e : user_env) Set(env, e.name, ExpandEnvReferences(e.value, env));

  // Command line (docs/contracts/runtime.md §1): user args, then service-added `--job-dir J` (two
  // tokens; `J/<trial>` inside tuning trials).
  std::vector<std::string> extra_args;
  if (!spec.job_dir.empty()) {
    std::string dir = spec.job_dir;
    if (options.trial_id) dir += (dir.back() == '/' ? "" : "/") + *options.trial_id;
    extra_args = {"--job-dir", dir};
  }
  if (wp.container) {
    rt.image = images::ResolveImage(wp.container->image_uri);  // A prebuilt name: its runtime.
    rt.command = wp.container->command;
    rt.args = wp.container->args;
    // Service-added arguments go after the user's (docs/contracts/runtime.md §1). With no user args
    // this replaces the image's CMD, as ml v1 `args` do for an ENTRYPOINT image.
    rt.args.insert(rt.args.end(), extra_args.begin(), extra_args.end());
  } else {
    SetPackageRunner(*wp.python_package, options, extra_args, &rt);
  }
  return rt;
}

}  // namespace ty::model
