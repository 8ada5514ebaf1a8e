// ty-slurm-launch: what each Slurm task of a Trainyard job runs (issue 21). It works
// out its replica's pool, index, port and every peer's address from its own Slurm
// environment (executor/slurm_topology.h), with no rendezvous.
//
// So far: `ty-slurm-launch --print-topology` prints that placement as one JSON line
// (the Slurm test checks every task agrees). Running the replica's container with the
// runtime contract's environment is the next step of the Slurm executor.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "executor/slurm_topology.h"

namespace {

std::optional<std::string> GetEnv(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::strcmp(argv[1], "--print-topology") != 0) {
    std::fprintf(stderr, "usage: ty-slurm-launch --print-topology (inside a Slurm step)\n");
    return 2;
  }
  ty::Result<ty::executor::SlurmTopology> topology = ty::executor::TopologyFromSlurmEnv(&GetEnv);
  if (!topology.ok()) {
    std::fprintf(stderr, "ty-slurm-launch: %s\n", topology.status().message().c_str());
    return 2;
  }
  nlohmann::json out = {{"pool", topology->pool},
                        {"index", topology->index},
                        {"port", topology->port},
                        {"cluster", topology->addresses}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
