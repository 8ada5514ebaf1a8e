// Where admission's capacity comes from: this host, detected (CPUs, memory, GPUs via
// `nvidia-smi -L`), or the daemon config's declaration, plus overcommit, quotas and
// machine-size overrides (issue 9; docs/configuration.md "Capacity and queueing").
//
// Config keys (YAML, the daemon's --config):
//   capacity:      {cpus: 16, memory_gb: 64, gpus: {NVIDIA_TESLA_T4: 2}}
//   overcommit:    {cpu: 1, memory: 1}
//   strict:        true | false
//   quotas:        {PROJECT: {jobs: 4, cpus: 32, gpus: 2}}
//   machine_types: {NAME: {cpus: 4, memory_gb: 15}}
// Defaults keep the everyday case working with no configuration: on the detected
// host, CPUs are overcommitted 8x and memory 3x (four single-replica n1-standard-4
// jobs run at once on a 2-core, 24 GB machine) and a job bigger than the host runs
// alone, shrunk to it (not strict). A declared capacity is taken at its word:
// overcommit 1 and strict, unless the config says otherwise. GPUs are never
// overcommitted.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "scheduler/capacity.h"
#include "service/admission_controller.h"

namespace ty::service {

struct HostInventory {
  std::string name = "host";
  double cpus = 1;
  double memory_gb = 1;
  std::vector<scheduler::Gpu> gpus;
};

// Reads this machine (sysconf, /proc/meminfo, `nvidia-smi -L` when on PATH).
HostInventory DetectHost();

// `nvidia-smi -L` lines ("GPU 0: Tesla T4 (UUID: GPU-...)") as accelerator types by
// index: names map to Vertex's enum (T4 -> NVIDIA_TESLA_T4, H100 80GB ->
// NVIDIA_H100_80GB, ...); a model the enum lacks keeps "NVIDIA_" + its name.
std::vector<scheduler::Gpu> ParseNvidiaSmiList(const std::string& text);

// InvalidArgument naming the key ("config: capacity.cpus must be a positive number").
Result<AdmissionOptions> AdmissionOptionsFromConfig(const nlohmann::json& doc,
                                                    const HostInventory& host);

// The same for a cluster whose own scheduler runs the jobs (Slurm): admission's nodes
// are the cluster's (`hosts`, as Slurm declares them), never overcommitted, and a job
// bigger than every node is shrunk to the biggest (not strict), so Trainyard admits
// what the cluster can run and leaves the rest of the waiting to its scheduler. A
// declared `capacity` or `overcommit` in the config still wins.
Result<AdmissionOptions> AdmissionOptionsForCluster(const nlohmann::json& doc,
                                                    const std::vector<HostInventory>& hosts);

// Config keys this file reads (the daemon refuses unknown keys).
const std::vector<std::string>& AdmissionConfigKeys();

}  // namespace ty::service
