// What is free on each node during one admission pass, and gang placement on it.
// Internal to scheduler/. Pure; a value type (copy it to simulate).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/capacity.h"

namespace ty::scheduler::internal {

class FreeState {
 public:
  // Everything free: the nodes' overcommitted CPUs and memory, every GPU.
  explicit FreeState(const Capacity& capacity);

  void Take(const std::vector<ReplicaPlacement>& placement);
  void Give(const std::vector<ReplicaPlacement>& placement);
  // Whether exactly this placement (same nodes, same GPU indices) is free.
  bool Fits(const std::vector<ReplicaPlacement>& placement) const;
  // Places every replica of the gang (best fit: the node left with the fewest free
  // CPUs), or nullopt when one does not fit. Does not take.
  std::optional<std::vector<ReplicaPlacement>> Place(const std::vector<ReplicaDemand>& gang) const;
  // What is free in both (per node minimum, GPUs free in both).
  static FreeState Intersect(const FreeState& a, const FreeState& b);

  // Totals over all nodes, for wait reasons.
  double free_cpus() const;
  double free_memory_gb() const;
  int free_gpus(const std::string& type) const;

 private:
  struct NodeFree {
    double cpus = 0;
    double memory_gb = 0;
    std::set<std::pair<std::string, int>> gpus;  // (type, index) free.
  };
  static int GpusOfType(const NodeFree& n, const std::string& type);
  // True when `d` asks more than any node has free (an upper bound): a miss, no scan.
  bool FitsNowhere(const ReplicaDemand& d) const;
  // Takes `d` from node `node` (free as `f`), its GPUs the lowest-numbered of its type.
  static ReplicaPlacement TakeOn(NodeFree& f, int node, const ReplicaDemand& d);
  void RefreshMax();

  std::vector<NodeFree> nodes_;
  // Most free CPUs / memory on one node: a replica above them fails without a scan,
  // which keeps a pass over a long queue on a full cluster cheap.
  // Upper bounds: exact after construction; Take leaves them high and a scan that
  // finds no room makes them exact again.
  mutable double max_cpus_ = 0;
  mutable double max_memory_gb_ = 0;
  // Totals over all nodes, kept with the maxima.
  double total_cpus_ = 0;
  double total_memory_gb_ = 0;
  std::map<std::string, int> total_gpus_;
};

// Slack for floating-point sums of fractional vCPUs and GB.
inline constexpr double kEpsilon = 1e-9;

}  // namespace ty::scheduler::internal
