// Internal to service/: the executors one daemon runs jobs on, and which project's
// jobs go where (issue 21: a team's projects on the Slurm cluster, the rest on this
// machine's container engine). A project's jobs all run on one backend, so its
// quotas and fair share are a matter of that backend's admission alone; each backend
// admits against its own capacity (a Slurm cluster's nodes are not this machine's)
// and its replicas reach the daemon's Cloud Storage API by their own route.
//
// Set up before the loop runs; afterwards only read (the loop thread and API
// threads), except what each AdmissionController guards itself.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "executor/executor.h"
#include "service/admission_controller.h"

namespace ty::service {

struct Backend {
  std::string name;                        // "container", "slurm", ...
  executor::Executor* executor = nullptr;  // Not owned.
  std::unique_ptr<AdmissionController> admission;
  // Where its replicas reach the Cloud Storage API ("http://host:port"); "" = nowhere.
  std::string storage_endpoint;
};

class Backends {
 public:
  // The first one added is where every project not routed elsewhere runs.
  Backend& Add(std::string name, executor::Executor* executor);
  // InvalidArgument when no backend has that name.
  Status Route(const std::string& project, const std::string& backend);

  Backend& For(const std::string& project);
  const Backend& For(const std::string& project) const;
  const std::vector<std::unique_ptr<Backend>>& all() const { return backends_; }

  // Every backend's admission counters, summed.
  AdmissionStats Stats() const;
  // The wait of a queued job, whichever backend it waits for.
  std::optional<scheduler::WaitInfo> WaitOf(const std::string& uid) const;
  // Every backend's capacity (each with its own overcommit).
  std::vector<scheduler::Capacity> Capacities() const;
  // Unreachable when any backend is, naming it when there are several.
  executor::BackendHealth Health() const;

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
  std::map<std::string, Backend*> by_project_;
};

}  // namespace ty::service
