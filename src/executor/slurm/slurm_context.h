// What the Slurm executor hands each replica's launcher (ty-slurm-launch), and what
// the launcher leaves for the executor, on the shared filesystem (issue 21).
//
// Per attempt the executor writes one directory, <slurm dir>/<job uid>-<attempt>/:
//
//   context.json       this file's SlurmContext: every replica's image, command line,
//                      environment (computed by the service as for one machine, peers
//                      at ReplicaHostname:2222) and mounts; written before sbatch
//   slurm.json         the Slurm job id, once sbatch answered (recovery)
//   <replica>.out/.err the replica's stdout / stderr, appended by its launcher
//   <replica>.exit     its exit code, written (atomically) by the launcher at its end
//   <replica>.cursor   the daemon's log capture position (executor/file_log_capture.h)
//   <replica>.placed   "host:port" where the launcher runs it (for describe and tests)
//
// The directory holds one attempt's secrets (its environment) and nothing of the
// daemon's own state; replicas never see it (it is not mounted into containers).
//
// The launcher learns where every replica runs from Slurm alone (slurm_topology.h)
// and rewrites the addresses in the variables that name peers (PlaceEnvironment), so
// TF_CONFIG, CLUSTER_SPEC and MASTER_ADDR/MASTER_PORT mean on the cluster exactly
// what they mean on one machine (model::RuntimeOptions::peer_addresses).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/executor.h"
#include "executor/slurm/slurm_topology.h"

namespace ty::executor {

struct SlurmContext {
  std::string job_uid;
  int attempt = 1;
  std::map<std::string, std::string> labels;  // On every container.
  // Replicas in a user namespace whose root is this host uid (0 = none).
  uint32_t userns_base = 0;
  // Seconds between SIGTERM and SIGKILL when the launcher stops its container.
  int stop_grace_s = 10;
  // The replicas, with `mounts` complete (buckets included, as host paths on the
  // shared filesystem).
  std::vector<ReplicaLaunch> replicas;
  // The job's credential for the daemon's registry when it takes tokens ("" = it
  // does not): gcr.io / pkg.dev images are then pulled at every start with it
  // (RegistryAuthFile), never taken from the host's copy.
  std::string registry_password;
};

// The containers-auth.json `podman run --authfile` reads for replica `r`: the job's
// credential for the Google registry host of its image; "" when there is none to give
// (no registry_password, or not such a name).
std::string RegistryAuthFile(const SlurmContext& context, const ReplicaLaunch& r);

std::string SlurmContextToJson(const SlurmContext& context);
// InvalidArgument naming what is wrong when `text` is not a context.
Result<SlurmContext> SlurmContextFromJson(const std::string& text);

// `env` with the peer addresses of the one-machine environment (every replica at
// its `hostname`:model::kClusterPort) replaced by where Slurm placed them:
// TF_CONFIG and CLUSTER_SPEC get each replica's "host:port" from `placed`
// (addresses[pool][index]); MASTER_ADDR / MASTER_PORT follow the primary replica.
// Other variables are left as they are.
std::vector<model::EnvVar> PlaceEnvironment(const std::vector<model::EnvVar>& env,
                                            const std::vector<ReplicaLaunch>& replicas,
                                            const SlurmTopology& placed);

// A replica's environment as it reaches podman: a command line is readable by every
// user of the host (ps), so the variables go in a file of the launcher's own, which
// `podman run --env-file` reads (one NAME=VALUE a line, the value verbatim). A value
// with a line break cannot be written there; such variables go on the command line.
struct PodmanEnvironment {
  std::string env_file_text;
  std::vector<model::EnvVar> on_command_line;
};
PodmanEnvironment SplitEnvironment(const std::vector<model::EnvVar>& env);

// The `podman run` command line of replica `r` on its Slurm host: host network (it
// listens on its host at its reserved port), the job's labels plus
// trainyard.slurm_job=`slurm_job_id` (the epilog removes leftovers by it), the same
// hardening as the container executor, its mounts, its environment (`env_file`,
// "" = none, then `env.on_command_line`), and Docker's entrypoint/command semantics.
// `gpu_indices`: the host's GPUs Slurm gave the task (CUDA_VISIBLE_DEVICES), passed
// as CDI devices. `auth_file` ("" = none): RegistryAuthFile's text in a file of the
// launcher's own; with it the image is pulled at every start.
std::vector<std::string> PodmanRunArgs(const SlurmContext& context, const ReplicaLaunch& r,
                                       const std::string& env_file, const std::string& auth_file,
                                       const PodmanEnvironment& env,
                                       const std::string& slurm_job_id,
                                       const std::vector<int>& gpu_indices);

inline constexpr char kLabelSlurmJob[] = "trainyard.slurm_job";

}  // namespace ty::executor
