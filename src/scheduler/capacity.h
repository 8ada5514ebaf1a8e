// What the scheduler reasons about: nodes and their inventory, what a queued job
// asks for, and what a running job holds. Plain values; no I/O (docs/design.md: the
// admission controller hands a snapshot to scheduler/ and gets decisions back).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/time.h"
#include "model/replica_placement.h"

namespace ty::scheduler {

struct Gpu {
  std::string type;  // Accelerator enum name, e.g. "NVIDIA_TESLA_T4".
  int index = 0;     // Device index on its node (nvidia-smi -L).
};

struct Node {
  std::string name;
  double cpus = 0;       // Physical vCPUs.
  double memory_gb = 0;  // Physical memory.
  std::vector<Gpu> gpus;
};

// Per-project limits; a negative value is no limit.
struct Quota {
  int64_t jobs = -1;  // Admitted (running) jobs.
  double cpus = -1;   // vCPUs the project's admitted jobs ask for.
  int64_t gpus = -1;
};

struct Capacity {
  std::vector<Node> nodes;
  // Admission may promise this many times the physical CPUs and memory (GPUs are
  // never overcommitted).
  double cpu_overcommit = 1;
  double memory_overcommit = 1;
  // Strict: a job bigger than every node is refused at submit. Not strict (the default
  // for a detected host): such a job is shrunk to fill the biggest node and runs
  // when that node is empty, so Google's specs for big machines still run on a
  // workstation. GPUs are strict either way.
  bool strict = true;
  std::map<std::string, Quota> quotas;  // By project.
};

struct ReplicaDemand {
  double cpus = 0;
  double memory_gb = 0;
  std::string gpu_type;  // "" = none.
  int gpus = 0;
  std::string field;  // Field path of the machine spec, for errors.
};

struct JobDemand {
  std::string uid;
  std::string project;
  int priority = 0;  // Higher first (ml v1 `scheduling.priority`, 0..1000).
  TimeMicros queued_since = 0;
  bool spot = false;                    // Vertex `scheduling.strategy: SPOT`: may be preempted.
  DurationMicros max_run = 0;           // Its timeout: the latest it ends once started.
  std::vector<ReplicaDemand> replicas;  // The gang: all or none.
};

// The node and resources one replica was given (`node`: index into Capacity::nodes).
using ReplicaPlacement = model::ReplicaPlacement;

// A job holding resources (admitted, not yet released).
struct Allocation {
  std::string uid;
  std::string project;
  int priority = 0;
  bool spot = false;
  TimeMicros expected_end = 0;  // Start + timeout: it is stopped by then at the latest.
  bool preempting = false;      // Being stopped to make room; its resources come back soon.
  std::vector<ReplicaPlacement> replicas;
};

}  // namespace ty::scheduler
