#include "scheduler/free_state.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace ty::scheduler::internal {

FreeState::FreeState(const Capacity& capacity) {
  nodes_.reserve(capacity.nodes.size());
  for (const Node& n : capacity.nodes) {
    NodeFree f;
    f.cpus = n.cpus * capacity.cpu_overcommit;
    f.memory_gb = n.memory_gb * capacity.memory_overcommit;
    for (const Gpu& g : n.gpus) f.gpus.insert({g.type, g.index});
    nodes_.push_back(std::move(f));
  }
  RefreshMax();
}

void FreeState::RefreshMax() {
  max_cpus_ = 0;
  max_memory_gb_ = 0;
  total_cpus_ = 0;
  total_memory_gb_ = 0;
  total_gpus_.clear();
  for (const NodeFree& n : nodes_) {
    max_cpus_ = std::max(max_cpus_, n.cpus);
    max_memory_gb_ = std::max(max_memory_gb_, n.memory_gb);
    total_cpus_ += std::max(0.0, n.cpus);
    total_memory_gb_ += std::max(0.0, n.memory_gb);
    for (const auto& g : n.gpus) total_gpus_[g.first] += 1;
  }
}

void FreeState::Take(const std::vector<ReplicaPlacement>& placement) {
  for (const ReplicaPlacement& r : placement) {
    if (r.node < 0 || r.node >= static_cast<int>(nodes_.size())) continue;
    NodeFree& n = nodes_[r.node];
    n.cpus -= r.cpus;
    n.memory_gb -= r.memory_gb;
    total_cpus_ -= r.cpus;
    total_memory_gb_ -= r.memory_gb;
    for (int i : r.gpu_indices) {
      if (n.gpus.erase({r.gpu_type, i}) > 0) total_gpus_[r.gpu_type] -= 1;
    }
  }
  // The maxima stay upper bounds; Place tightens them when a scan finds no room.
}

void FreeState::Give(const std::vector<ReplicaPlacement>& placement) {
  for (const ReplicaPlacement& r : placement) {
    if (r.node < 0 || r.node >= static_cast<int>(nodes_.size())) continue;
    NodeFree& n = nodes_[r.node];
    n.cpus += r.cpus;
    n.memory_gb += r.memory_gb;
    total_cpus_ += r.cpus;
    total_memory_gb_ += r.memory_gb;
    for (int i : r.gpu_indices) {
      if (n.gpus.insert({r.gpu_type, i}).second) total_gpus_[r.gpu_type] += 1;
    }
    max_cpus_ = std::max(max_cpus_, n.cpus);
    max_memory_gb_ = std::max(max_memory_gb_, n.memory_gb);
  }
}

bool FreeState::Fits(const std::vector<ReplicaPlacement>& placement) const {
  std::map<int, std::pair<double, double>> used;
  std::set<std::pair<int, int>> gpus;
  for (const ReplicaPlacement& r : placement) {
    if (r.node < 0 || r.node >= static_cast<int>(nodes_.size())) return false;
    auto& u = used[r.node];
    u.first += r.cpus;
    u.second += r.memory_gb;
    for (int i : r.gpu_indices) {
      if (!gpus.insert({r.node, i}).second || nodes_[r.node].gpus.count({r.gpu_type, i}) == 0) {
        return false;
      }
    }
  }
  for (const auto& [node, u] : used) {
    if (u.first > nodes_[node].cpus + kEpsilon || u.second > nodes_[node].memory_gb + kEpsilon) {
      return false;
    }
  }
  return true;
}

int FreeState::GpusOfType(const NodeFree& n, const std::string& type) {
  auto lo = n.gpus.lower_bound({type, std::numeric_limits<int>::min()});
  int count = 0;
  for (auto it = lo; it != n.gpus.end() && it->first == type; ++it) ++count;
  return count;
}

namespace {

// Biggest replicas first: they have the fewest places to go.
std::vector<size_t> BiggestFirst(const std::vector<ReplicaDemand>& gang) {
  std::vector<size_t> order(gang.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (gang[a].gpus != gang[b].gpus) return gang[a].gpus > gang[b].gpus;
    if (gang[a].cpus != gang[b].cpus) return gang[a].cpus > gang[b].cpus;
    return a < b;
  });
  return order;
}

}  // namespace

bool FreeState::FitsNowhere(const ReplicaDemand& d) const {
  if (d.cpus > max_cpus_ + kEpsilon || d.memory_gb > max_memory_gb_ + kEpsilon) return true;
  return d.gpus > 0 && free_gpus(d.gpu_type) < d.gpus;
}

ReplicaPlacement FreeState::TakeOn(NodeFree& f, int node, const ReplicaDemand& d) {
  ReplicaPlacement p;
  p.node = node;
  p.cpus = d.cpus;
  p.memory_gb = d.memory_gb;
  p.gpu_type = d.gpu_type;
  f.cpus -= d.cpus;
  f.memory_gb -= d.memory_gb;
  auto g = f.gpus.lower_bound({d.gpu_type, std::numeric_limits<int>::min()});
  while (static_cast<int>(p.gpu_indices.size()) < d.gpus) {
    p.gpu_indices.push_back(g->second);
    g = f.gpus.erase(g);
  }
  return p;
}

std::optional<std::vector<ReplicaPlacement>> FreeState::Place(
    const std::vector<ReplicaDemand>& gang) const {
  // A replica bigger than every node: no scan, no allocation (the common miss).
  for (const ReplicaDemand& d : gang) {
    if (FitsNowhere(d)) return std::nullopt;
  }
  std::map<int, NodeFree> touched;  // Nodes this gang uses, as left by its replicas so far.
  std::vector<ReplicaPlacement> out(gang.size());
  // The maxima and GPU totals do not change while a gang is placed: the check above
  // holds for every replica below.
  for (size_t i : BiggestFirst(gang)) {
    const ReplicaDemand& d = gang[i];
    int best = -1;
    double best_left = 0;
    double seen_cpus = 0, seen_memory = 0;  // Maxima over the nodes as they are.
    for (int n = 0; n < static_cast<int>(nodes_.size()); ++n) {
      // The first replica of a gang sees every node as it is (no lookup).
      auto t = touched.empty() ? touched.end() : touched.find(n);
      const NodeFree& f = t != touched.end() ? t->second : nodes_[n];
      if (t == touched.end()) {
        seen_cpus = std::max(seen_cpus, f.cpus);
        seen_memory = std::max(seen_memory, f.memory_gb);
      }
      if (d.cpus > f.cpus + kEpsilon || d.memory_gb > f.memory_gb + kEpsilon) continue;
      if (d.gpus > 0 && GpusOfType(f, d.gpu_type) < d.gpus) continue;
      double left = f.cpus - d.cpus;
      if (best < 0 || left < best_left) {
        best = n;
        best_left = left;
      }
    }
    if (best < 0) {
      if (touched.empty()) {
        // Every node was seen as it is: exact maxima, so later misses are cheap.
        max_cpus_ = seen_cpus;
        max_memory_gb_ = seen_memory;
      }
      return std::nullopt;
    }
    auto [it, inserted] = touched.try_emplace(best, nodes_[best]);
    out[i] = TakeOn(it->second, best, d);
  }
  return out;
}

FreeState FreeState::Intersect(const FreeState& a, const FreeState& b) {
  FreeState out = a;
  for (size_t i = 0; i < out.nodes_.size() && i < b.nodes_.size(); ++i) {
    NodeFree& n = out.nodes_[i];
    n.cpus = std::min(n.cpus, b.nodes_[i].cpus);
    n.memory_gb = std::min(n.memory_gb, b.nodes_[i].memory_gb);
    std::set<std::pair<std::string, int>> both;
    std::set_intersection(n.gpus.begin(), n.gpus.end(), b.nodes_[i].gpus.begin(),
                          b.nodes_[i].gpus.end(), std::inserter(both, both.end()));
    n.gpus = std::move(both);
  }
  out.RefreshMax();
  return out;
}

double FreeState::free_cpus() const { return total_cpus_; }

double FreeState::free_memory_gb() const { return total_memory_gb_; }

int FreeState::free_gpus(const std::string& type) const {
  auto it = total_gpus_.find(type);
  return it == total_gpus_.end() ? 0 : it->second;
}

}  // namespace ty::scheduler::internal
