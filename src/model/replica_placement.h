// Where admission put one replica of a gang: the node and what it counts against that
// node. The scheduler decides it (scheduler/admission.h); a job's record keeps it, with
// who the replica is, as a ReplicaGrant (model/job.h).
#pragma once

#include <string>
#include <vector>

namespace ty::model {

struct ReplicaPlacement {
  int node = 0;          // Index into the daemon's capacity nodes.
  double cpus = 0;       // Counted against the node (may be a share of an overcommit).
  double memory_gb = 0;  // Counted against the node.
  std::string gpu_type;
  std::vector<int> gpu_indices;  // Device indices on that node.
  bool operator==(const ReplicaPlacement&) const = default;
};

}  // namespace ty::model
