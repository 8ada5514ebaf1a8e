// The pure half of the Slurm executor (slurm_executor.h): the sbatch command line and
// batch script of an attempt, and what `squeue` says of jobs. No I/O.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "executor/executor.h"

namespace ty::executor::internal {

struct SlurmSubmitSettings {
  std::string dir;       // The attempt's directory (shared filesystem).
  std::string launcher;  // ty-slurm-launch on the hosts.
  std::string partition, qos;
  int cluster_nodes = 1;  // Hosts the cluster has: a het job needs one per pool.
  // For spot jobs instead, where set (a preemptible partition or QOS).
  std::string spot_partition, spot_qos;
};

struct SlurmJobShape {
  bool heterogeneous = false;
  std::vector<std::string> sbatch_args;  // After "sbatch"; the script path is last.
  std::string script;                    // Contents of <dir>/batch.sh.
  std::string pools;                     // TY_SLURM_POOLS: "0:1,1:2,2:1".
};

// Slurm's job name of an attempt: "ty-<uid>-<attempt>".
std::string SlurmJobName(const std::string& job_uid, int attempt);

// One component per pool (in pool order) when there are several pools and at least
// as many hosts, else one homogeneous job of every replica with the largest request.
// Per task: --cpus-per-task from the replica's CPU limit (rounded up), --mem-per-cpu
// from its memory limit, --gpus-per-task from its accelerator count.
// REQUIRES: attempt.replicas non-empty.
SlurmJobShape ShapeSlurmJob(const AttemptSpec& attempt, const SlurmSubmitSettings& settings);

// `r` with its Python packages (gs:// URIs, seen at <bucket_root>/BUCKET/PATH in the
// container) installed by pip, offline, in the replica's own container before its
// command runs: the container executor installs them into an image, but a Slurm host
// has only its own engine. `r` as it is when it has no packages or no command.
ReplicaLaunch WithPackageInstall(ReplicaLaunch r, const std::string& bucket_root);

struct SlurmJobState {
  std::string state;   // "PENDING", "RUNNING", "COMPLETED", ... (the leader's).
  std::string reason;  // "Resources", "Priority", "None", ...
  // Every component has ended (none still COMPLETING: their processes are gone and
  // their epilogs ran).
  bool all_ended = false;
};

// Output of `squeue -h -t all -o '%i|%T|%r'`: job id -> state. A heterogeneous job's
// rows ("123+0", "123+1") give its leader id (123) the state of component 0, and
// all_ended only once every component has ended.
std::map<std::string, SlurmJobState> ParseSqueue(const std::string& text);

// A Slurm node as admission counts it.
struct SlurmNodeInventory {
  std::string name;
  double cpus = 0;
  double memory_gb = 0;
  std::string gpu_type;  // Vertex's accelerator name ("NVIDIA_TESLA_T4"); "" = untyped.
  int gpus = 0;
};

// Output of `sinfo -h -N -o '%N|%c|%m|%G'`: one entry per node (a node in several
// partitions is listed once). GRES "gpu:t4:2(S:0)" gives 2 GPUs of Vertex's
// NVIDIA_TESLA_T4 (Slurm's type names are the site's: the common ones are mapped,
// others become "NVIDIA_" + the name in capitals); "gpu:2" gives 2 untyped GPUs.
std::vector<SlurmNodeInventory> ParseSinfoNodes(const std::string& text);

// COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...: Slurm runs nothing of it.
bool IsSlurmEnded(const std::string& state);
// RUNNING, COMPLETING, ...: its tasks were started.
bool IsSlurmRunning(const std::string& state);

}  // namespace ty::executor::internal
