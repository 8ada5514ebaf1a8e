// SlurmExecutor: places each attempt's replicas on a Slurm cluster (issue 21; docs/distributed.md,
// "On a Slurm cluster"), behind the same contract as the container executor
// (executor.h). Trainyard grows no node agents: Slurm places, a launcher runs.
//
// Launch writes the attempt's directory on the shared filesystem (slurm_context.h)
// and submits one batch job per attempt, named ty-<uid>-<attempt>, through `sbatch`:
// a heterogeneous job with one component per pool when the cluster has a node per
// pool (Slurm starts a het job only when each component can have nodes of its own),
// one homogeneous job with the pools as consecutive rank ranges otherwise. Its script
// runs one step, `srun --resv-ports`, whose every task runs ty-slurm-launch. The CLI
// rather than slurmrestd: it is on every Slurm host and speaks the site's auth
// (munge) with no second daemon, JWT or version-pinned OpenAPI (22.05's slurmrestd
// silently drops fields it does not know, §3.5); one `squeue` per poll serves every
// live attempt, so the cost does not grow with jobs.
//
// Observation: one monitor thread polls `squeue --me` for the state and pending
// reason of every live attempt (kLaunchWaiting says Slurm's reason), takes every
// replica's output from the shared files into the LogSink (file_log_capture.h), and
// reports a replica's end when its launcher wrote its exit code (the replica's own,
// not srun's). A replica whose launcher never wrote one (killed, node lost, job
// cancelled while pending) is reported once Slurm no longer runs the job; a job Slurm
// has forgotten (MinJobAge) counts as ended, so an expired record resolves too.
//
// Stop: `scancel`; each launcher stops its container with the grace period the
// context carries (and the epilog removes what a killed launcher left). Restart in
// place: a launcher whose container exited keeps its task, its port and the stopped
// container until Slurm ends the step, and starts the container again when the
// executor leaves a restart request beside its exit code; Cleanup ends the Slurm job.
// A replica that succeeded is never restarted (no policy restarts a success), so its
// launcher removes the container and ends its task at once, freeing its share.
// Recover: every attempt directory is read back; a Slurm job is found by its recorded
// id, or by its name when the daemon died between sbatch and recording it, so nothing
// is submitted twice.
//
// Thread-safety: every method may be called from any thread (executor.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/time.h"
#include "executor/executor.h"
#include "logs/log_store.h"

namespace ty::executor {

class SlurmExecutor : public Executor {
 public:
  struct Options {
    // Required: where attempt directories go, on a filesystem every Slurm host
    // mounts at the same path.
    std::string state_dir;
    // ty-slurm-launch as the hosts run it (same path everywhere).
    std::string launcher;
    logs::LogSink* log_sink = nullptr;  // Required; borrowed.
    const Clock* clock = nullptr;       // Required: only main wires the system's.
    // Host directory with one directory per bucket, on the shared filesystem.
    std::string bucket_root;
    // How replicas on the hosts reach the daemon's machine ("" = the daemon's host
    // name).
    std::string daemon_host;
    std::string partition;  // sbatch --partition; "" = the cluster's default.
    std::string qos;        // sbatch --qos; "" = none.
    // Spot jobs (Vertex `strategy: SPOT`) go to this partition / QOS instead, where
    // set: the cluster's preemptible ones.
    std::string spot_partition;
    std::string spot_qos;
    // Replicas' user namespace root on the hosts (0 = the host's ids).
    uint32_t userns_base = 0;
    int stop_grace_s = 10;
    // The job credential the hosts pull gcr.io / pkg.dev images with when the daemon's
    // registry takes tokens (ContainerExecutor::Options::registry_credential); unset = not.
    std::function<std::string(const std::string& job_uid)> registry_credential;
    DurationMicros poll_interval = 200 * 1000;
    // How long a launch waits for a Slurm controller that does not answer (restarting,
    // failing over) before it fails, and how often it tries again meanwhile.
    DurationMicros controller_wait = 15LL * 60 * 1000000;
    DurationMicros controller_retry = 1000 * 1000;
    // Added to the environment of every Slurm command (SLURM_CONF of a test cluster).
    std::map<std::string, std::string> slurm_env;
    // Prefixed to the sbatch/squeue/scontrol/scancel/sinfo names ("" = PATH).
    std::string slurm_bin_dir;
  };

  struct NodeInventory {
    std::string name;
    double cpus = 0;
    double memory_gb = 0;
    std::string gpu_type;  // Vertex's accelerator name; "" = untyped.
    int gpus = 0;
  };
  // The cluster's nodes as Slurm declares them (`sinfo -N`), for admission: Trainyard
  // admits what the cluster can run and leaves the rest of the waiting to Slurm.
  // Unavailable when sinfo fails or lists no node.
  static Result<std::vector<NodeInventory>> ReadNodes(const Options& options);

  // InvalidArgument without state_dir, launcher or sink; Internal if state_dir
  // cannot be made.
  static Result<std::unique_ptr<SlurmExecutor>> Create(Options options);
  ~SlurmExecutor() override;

  void SetEventCallback(EventCallback callback) override;
  Status Launch(const AttemptSpec& attempt) override;
  Status Stop(const std::string& job_uid, int attempt, DurationMicros grace) override;
  Status RestartReplica(const std::string& job_uid, int attempt, int pool, int index) override;
  Status Cleanup(const std::string& job_uid, int attempt) override;
  Result<std::vector<ObservedReplica>> Recover() override;
  std::string ReplicaBucketRoot() const override;
  std::string DaemonHostForReplicas() const override;
  bool ReplicasNeedCredential() const override { return true; }
  uint32_t ReplicaUidBase() const override { return options_.userns_base; }
  void BeginShutdown() override;

 private:
  class Impl;
  explicit SlurmExecutor(Options options);
  Options options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ty::executor
