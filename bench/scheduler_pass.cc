// One admission pass (scheduler::Admit) over a large queue on many simulated nodes,
// against a baseline measured in the same run: sorting the same queue by priority
// and submit time, the least any ordered queue costs.
//
// usage: scheduler_pass [--jobs 100000] [--nodes 1000] [--passes 5]
// Prints the median pass time, the time per decision and the ratio to the baseline.
// Target (issue 9): <= 100 ms per pass at 100,000 jobs on 1,000 nodes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "scheduler/admission.h"

namespace {

using Clock = std::chrono::steady_clock;
using ty::scheduler::Allocation;
using ty::scheduler::Capacity;
using ty::scheduler::JobDemand;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Workload {
  Capacity capacity;
  std::vector<Allocation> running;
  std::vector<JobDemand> queued;
};

// Nodes of 32 vCPUs / 128 GB / 4 T4s, three quarters full; a queue of 1-4 replica
// jobs (a quarter with GPUs) from 20 projects at 3 priorities.
Workload Make(int jobs, int nodes) {
  std::mt19937 rng(7);
  Workload w;
  for (int n = 0; n < nodes; ++n) {
    ty::scheduler::Node node{"n" + std::to_string(n), 32, 128, {}};
    for (int g = 0; g < 4; ++g) node.gpus.push_back({"NVIDIA_TESLA_T4", g});
    w.capacity.nodes.push_back(node);
    Allocation a{"r" + std::to_string(n),
                 "p" + std::to_string(n % 20),
                 0,
                 n % 4 == 0,
                 3600LL * 1000000 * (1 + n % 24),
                 false,
                 {}};
    a.replicas.push_back({n, 24, 96, "NVIDIA_TESLA_T4", {0, 1, 2}});
    w.running.push_back(a);
  }
  for (int i = 0; i < jobs; ++i) {
    JobDemand j;
    j.uid = std::to_string(1000000 + i);
    j.project = "p" + std::to_string(rng() % 20);
    j.priority = static_cast<int>(rng() % 3) * 100;
    j.queued_since = i;
    j.max_run = 3600LL * 1000000 * (1 + rng() % 48);
    int replicas = 1 + static_cast<int>(rng() % 4);
    for (int r = 0; r < replicas; ++r) {
      ty::scheduler::ReplicaDemand d{4, 15, "", 0, "jobSpec.workerPoolSpecs[0].machineSpec"};
      if (rng() % 4 == 0) {
        d.gpu_type = "NVIDIA_TESLA_T4";
        d.gpus = 1;
      }
      j.replicas.push_back(d);
    }
    w.queued.push_back(std::move(j));
  }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 100000, nodes = 1000, passes = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--jobs")) jobs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--nodes")) nodes = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--passes")) passes = std::atoi(argv[i + 1]);
  }
  Workload w = Make(jobs, nodes);
  std::vector<double> pass_s, sort_s;
  size_t admitted = 0;
  for (int p = 0; p < passes; ++p) {
    auto t0 = Clock::now();
    ty::scheduler::AdmissionDecisions d = ty::scheduler::Admit(w.capacity, w.running, w.queued, 0);
    auto t1 = Clock::now();
    admitted = d.admit.size();
    pass_s.push_back(Seconds(t0, t1));
    std::vector<const JobDemand*> order;
    for (const JobDemand& j : w.queued) order.push_back(&j);
    auto t2 = Clock::now();
    std::sort(order.begin(), order.end(), [](const JobDemand* a, const JobDemand* b) {
      if (a->priority != b->priority) return a->priority > b->priority;
      return a->queued_since < b->queued_since;
    });
    auto t3 = Clock::now();
    sort_s.push_back(Seconds(t2, t3));
  }
  double pass = Median(pass_s), sort = Median(sort_s);
  std::printf("admission pass: %d queued jobs, %d nodes, %zu admitted per pass\n", jobs, nodes,
              admitted);
  std::printf("  pass %8.1f ms (median of %d)   per decision %6.2f us   (target <= 100 ms)\n",
              pass * 1e3, passes, pass * 1e6 / jobs);
  std::printf("  baseline: sorting the queue %6.1f ms   ratio pass/sort %.1f\n", sort * 1e3,
              pass / sort);
  return 0;
}
