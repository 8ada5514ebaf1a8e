// What each replica receives (docs/distributed.md): environment
// variables (TF_CONFIG, CLUSTER_SPEC, PyTorch variables, CLOUD_ML_*, AIP_*), the
// process's command line, and the host names of its peers.
//
// Pure: a function of the job, the attempt and the replica; no I/O, no clock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/job.h"
#include "model/job_spec.h"

namespace ty::model {

// Where a trial's replica writes its cloudml-hypertune file, as the library does by
// default (CLOUD_ML_HP_METRIC_FILE can say otherwise): <dir>/<file>.
inline constexpr char kReplicaMetricsDir[] = "/tmp/hypertune";
inline constexpr char kTrialMetricsFile[] = "output.metrics";

// Where a replica and a package install see the daemon's wheelhouse (read-only), and
// pip's find-links there (PIP_FIND_LINKS): wheels a user put there install with no
// package index reachable; with one reachable, pip takes from both.
inline constexpr char kReplicaWheelhouse[] = "/opt/trainyard/wheelhouse";

// Every replica listens on this port in the cluster maps (docs/contracts/runtime.md §3).
inline constexpr int kClusterPort = 2222;

// Stable host name of a replica, derived from the job (docs/contracts/runtime.md §3 shape
// `<prefix>-<role>-<index>`): "ty-<uid>-workerpool1-0" (Vertex) or
// "ty-<uid>-worker-0" (ml v1; "chief" instead of "master" with useChiefInTfConfig).
// Stable across attempts, so a restarted replica keeps its name as on Vertex.
std::string ReplicaHostname(const Job& job, int pool, int index);

struct ReplicaRuntime {
  std::vector<EnvVar> env;  // Service variables, then the user's (expanded).
  std::string image;
  std::vector<std::string> command;  // Empty = image ENTRYPOINT.
  std::vector<std::string> args;     // Empty = image CMD (when command is empty too).
  // A Python-package pool's packages (gs:// URIs), for an executor that installs them
  // into the image before the replica starts (the container executor does, with pip).
  std::vector<std::string> python_packages;
};

struct RuntimeOptions {
  std::optional<std::string> trial_id;  // Tuning trials only (later issues).
  // Where the replica sees bucket B as "<bucket_root>/B": a property of the executor
  // (executor::Executor::ReplicaBucketRoot; "/gcs" in containers, as on Vertex).
  std::string bucket_root = "/gcs";
  // The daemon's Cloud Storage API as replicas reach it ("http://host:port"); set as
  // STORAGE_EMULATOR_HOST (Python, Go, Node clients) and
  // CLOUD_STORAGE_EMULATOR_ENDPOINT (google-cloud-cpp). "" = not offered.
  std::string storage_endpoint;
  // Where each replica listens, per pool and index ("host:port"), when the executor
  // places replicas itself (Slurm: a host and a reserved port each,
  // executor/slurm/slurm_topology.h). Empty = every replica at ReplicaHostname:kClusterPort.
  std::vector<std::vector<std::string>> peer_addresses;
};

// REQUIRES: job.spec parsed; 0 <= pool < job.spec.pools.size(); index < replica_count.
ReplicaRuntime BuildReplicaRuntime(const Job& job, int pool, int index,
                                   const RuntimeOptions& options = {});

// Total replicas over all pools.
int64_t TotalReplicas(const JobSpec& spec);

// `$(VAR)` references in `value` expanded from `env` (earlier variables); `$$(VAR)`
// is an escaped literal `$(VAR)`; unknown references stay as they are (K8s rules,
// which Vertex documents for containerSpec.env).
std::string ExpandEnvReferences(const std::string& value, const std::vector<EnvVar>& env);

// `gs://BUCKET/path` -> {"BUCKET", "path"}; nullopt if not a gs:// URI.
std::optional<std::pair<std::string, std::string>> SplitGcsUri(const std::string& uri);

}  // namespace ty::model
