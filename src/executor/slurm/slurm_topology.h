// Where every replica of a job on Slurm runs and listens, computed by each replica's
// launcher from its own Slurm environment alone (issue 21), so no replica waits for another to
// learn its peers. Pure: the environment comes in as a lookup function.
//
// The batch script runs one step over every task with `srun --resv-ports=<tasks>`;
// Slurm gives global ranks 0..N-1 in component order (SLURM_PROCID) and the same
// reserved ports on every host (SLURM_STEP_RESV_PORTS): rank r listens on the r-th.
// A component's tasks fill its hosts in order (block distribution), as many on each as
// SLURM_TASKS_PER_NODE[_HET_GROUP_k] says. Which pools the ranks are, in order, the
// daemon writes into TY_SLURM_POOLS ("0:1,1:2,2:1": pool 0 has 1 replica, pool 1 two,
// …): one entry per component of a heterogeneous job (SLURM_HET_SIZE), or consecutive
// rank ranges of one homogeneous job (a cluster too small for one host per component).
// SLURM_NTASKS_HET_GROUP_k is not used: slurmrestd does not set it; nor SLURM_LOCALID,
// which restarts per component on a shared host.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ty::executor {

struct SlurmTopology {
  // Per pool (the job's pool numbers; a pool with no replicas has none), per replica:
  // "host:port".
  std::vector<std::vector<std::string>> addresses;
  int pool = 0;   // This task's pool …
  int index = 0;  // … and replica index in it.
  int port = 0;   // The port this task listens on.
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// From the task's environment. InvalidArgument naming the variable that is missing or
// malformed, or when the ranks, hosts, ports and TY_SLURM_POOLS disagree.
Result<SlurmTopology> TopologyFromSlurmEnv(const EnvLookup& env);

// A job of one replica runs its launcher in the batch step itself (no srun step: a
// second slurmstepd and srun are most of what Slurm adds to a short job), so nothing
// reserves it a port: the launcher gives the one it found free on `host`.
// TY_SLURM_POOLS must name one pool of one replica.
Result<SlurmTopology> SingleReplicaTopology(const EnvLookup& env, const std::string& host,
                                            int port);

// Slurm's host list syntax: "n[1-3,5],gpu07,x[08-10]" -> n1 n2 n3 n5 gpu07 x08 x09 x10
// (zero padding kept). At most `limit` names.
Result<std::vector<std::string>> ExpandHostList(std::string_view list, size_t limit = 100000);
// "2(x3),1" -> 2 2 2 1.
Result<std::vector<int>> ExpandTasksPerNode(std::string_view counts, size_t limit = 100000);
// "12000-12002,12007" -> 12000 12001 12002 12007.
Result<std::vector<int>> ExpandPorts(std::string_view ports, size_t limit = 100000);

}  // namespace ty::executor
