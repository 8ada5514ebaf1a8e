// Executor: runs the replicas of a job attempt somewhere (container engine, local
// processes, later Slurm) and reports what happens. It decides nothing about job
// state: the service's reconcile loop does (docs/design.md §2-3).
//
// Contract (after mesos' containerizer: launch, wait, kill, destroy, recover):
//  - Launch(attempt) returns at once after checking its input; the work (pull images,
//    create network, create every replica, then start every replica: a gang start)
//    happens in the background. Exactly one of kAttemptStarted / kLaunchFailed
//    follows. On failure the executor has already removed whatever it created.
//  - Each started replica later yields exactly one kReplicaExited, sent only after
//    its output has been fully written to the LogSink.
//  - Stop(attempt, grace) sends SIGTERM to every replica, SIGKILL after `grace`, and
//    returns when all have exited (their kReplicaExited events still arrive).
//  - RestartReplica(attempt, pool, index) starts an exited replica again in place:
//    same name, host name, network, environment and labels, so its peers reach it
//    as before (docs/contracts/runtime.md §9: a replica is restarted on the same VM). Its output is
//    appended to the same log task and its next end is a new kReplicaExited. A
//    replica that exited 0 may be refused (FailedPrecondition): no policy restarts a
//    success, and the Slurm executor frees what it held at once.
//  - Cleanup(attempt) removes replicas and the network; idempotent; call it after
//    the replicas exited (their logs are safe by then).
//  - Names are deterministic (ReplicaLaunch::name) and every replica carries the
//    labels of AttemptSpec, so Recover() after a daemon restart finds them again,
//    re-attaches log capture and exit watching to running ones, and reports the rest.
//
// Thread-safety: all methods may be called concurrently from any thread. Events are
// delivered on executor-owned threads; the callback must be cheap and thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "executor/replica_shell.h"
#include "model/job.h"
#include "model/job_spec.h"

namespace ty::executor {

// An extra host path for one replica (the executor adds its own, e.g. buckets).
struct Mount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;
};

struct ReplicaLaunch {
  int pool = 0;
  int index = 0;
  std::string name;       // Deterministic, engine-safe: "ty-<uid>-<attempt>-<pool>-<index>".
  std::string task_name;  // Log task name: "workerpool0-0".
  std::string hostname;   // Name peers reach it by (multi-replica jobs); "" = engine default.
  std::string image;
  // Docker semantics: non-empty `command` replaces ENTRYPOINT; non-empty `args`
  // replace CMD. When `command` is set and `args` empty, the command runs alone.
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<model::EnvVar> env;  // Full environment the service computed.
  std::vector<Mount> mounts;       // Extra; buckets are the executor's (AttemptSpec).
  // A trial's reporting replica: the directory on the daemon's host its
  // cloudml-hypertune file must land in (the study reads it there); "" = none. How
  // the replica writes there is the executor's (WithMetricsDir).
  std::string metrics_host_dir;
  // Python packages (gs:// URIs) to install into `image` with pip before the replica
  // runs; an executor that cannot leaves them to PYTHONPATH (model::ReplicaRuntime).
  std::vector<std::string> python_packages;
  // What the machine spec asks for ("NVIDIA_TESLA_T4" x 2); the executor decides
  // what it can give (the container engine: NVIDIA device requests).
  std::string accelerator_type;  // "" = none.
  int accelerator_count = 0;
  // What admission granted (service/job_demand.h): the device indices of the GPUs on
  // this host (CUDA_VISIBLE_DEVICES / the engine's device ids), and the limits the
  // replica is held to. Empty / 0 = not pinned / no limit.
  std::vector<int> gpu_indices;
  double cpu_limit = 0;
  double memory_limit_gb = 0;
};

// "0,2" for device indices {0, 2}.
std::string JoinIndices(const std::vector<int>& indices);

// `r` with its metrics_host_dir made the replica's: mounted at model::kReplicaMetricsDir,
// or, when the replica runs on the daemon's own filesystem (`same_filesystem`: local
// processes), the host path as it is; CLOUD_ML_HP_METRIC_FILE names the file there.
ReplicaLaunch WithMetricsDir(ReplicaLaunch r, bool same_filesystem);

// What an attempt needs, not how to provide it: the executor picks networks, mount
// points and device requests (docs/design.md decision 3).
struct AttemptSpec {
  std::string job_uid;
  int attempt = 1;
  // Replicas must reach each other by host name (multi-replica jobs); the container
  // engine gives the attempt a network of its own.
  bool peers_talk = false;
  // Shells may be opened in its replicas (enableWebAccess, OpenShell). The container
  // engine then gives each replica a network namespace of its own rather than a shared
  // network slot: runc's exec enters the replica's user namespace first, and from
  // there it may not enter a slot's network namespace (podman exec fails in setns).
  bool shells = false;
  // Buckets the job names: they exist before any replica starts.
  std::vector<std::string> buckets;
  // Further buckets replicas see (their project's). Replicas see these and `buckets`
  // under Executor::ReplicaBucketRoot(), each mounted on its own, and no other bucket.
  std::vector<std::string> visible_buckets;
  std::map<std::string, std::string> labels;  // Put on every replica (and the network).
  // The job's timeout (0 = none). The service enforces it; a backend that bounds a
  // job's run itself (Slurm's --time) takes it as a backstop for when no daemon runs.
  DurationMicros time_limit = 0;
  // Vertex `strategy: SPOT`: the job may be preempted (Slurm: a preemptible partition
  // or QOS, where the cluster has one).
  bool spot = false;
  std::vector<ReplicaLaunch> replicas;
};

enum class ExecutorEventKind {
  kAttemptStarted,  // Every replica created and started.
  kLaunchFailed,    // Could not start the attempt; nothing is left behind.
  kReplicaExited,   // A started replica ended; its logs are complete.
  kLaunchWaiting,   // The launch waits (`message` says for what); its outcome follows.
  // The backend took the started attempt back for someone else (a Slurm preemption;
  // `message` says so); the ends of its replicas follow.
  kAttemptPreempted,
};

struct ExecutorEvent {
  ExecutorEventKind kind = ExecutorEventKind::kReplicaExited;
  std::string job_uid;
  int attempt = 0;
  int pool = -1;   // kReplicaExited only.
  int index = -1;  // kReplicaExited only.
  TimeMicros time = 0;
  TimeMicros image_ready_time = 0;      // kAttemptStarted: when every image was present.
  std::vector<model::ImageRan> images;  // kAttemptStarted: what each image name stood for.
  int exit_code = 0;                    // kReplicaExited.
  std::optional<int> signal;            // kReplicaExited: the process died of this signal.
  bool oom_killed = false;              // kReplicaExited.
  // kReplicaExited: when the backend says the replica ended (0 = unknown: now). An
  // exit the executor learns of late (an engine outage, the daemon frozen) ends then.
  TimeMicros finished_at = 0;
  // kLaunchFailed: why, e.g. "image pull failed: ...". kAttemptStarted: how, when
  // worth saying (e.g. "started from warm sandboxes"). kLaunchWaiting: for what.
  std::string message;
  // kLaunchWaiting: the wait is trouble a user may act on (the engine or Slurm does not
  // answer, a registry refused), said as a WARNING; otherwise it is progress (a pull,
  // pip's lines, a pending reason), said as INFO, so `severity>=WARNING` shows trouble.
  bool trouble = false;
};

using EventCallback = std::function<void(const ExecutorEvent&)>;

// What Recover() finds of a replica the executor created before a restart.
using ObservedReplica = model::ObservedReplica;

// Whether the backend (the container engine) answers, as last probed.
struct BackendHealth {
  bool reachable = true;
  std::string detail;    // Why not, when unreachable.
  TimeMicros since = 0;  // When it last changed (0 = never probed / always up).
};

class Executor {
 public:
  virtual ~Executor() = default;

  // Where events go; set once before the first Launch/Recover.
  virtual void SetEventCallback(EventCallback callback) = 0;

  // InvalidArgument for a malformed attempt; Unavailable if the backend is down.
  virtual Status Launch(const AttemptSpec& attempt) = 0;
  // OK if nothing of the attempt is running (already stopped is fine).
  virtual Status Stop(const std::string& job_uid, int attempt, DurationMicros grace) = 0;
  // NotFound if the replica does not exist; FailedPrecondition if it is running.
  virtual Status RestartReplica(const std::string& job_uid, int attempt, int pool, int index) = 0;
  // OK if nothing is left (already removed is fine).
  virtual Status Cleanup(const std::string& job_uid, int attempt) = 0;
  // Every replica this executor created that still exists on the backend.
  virtual Result<std::vector<ObservedReplica>> Recover() = 0;

  // Where replicas see bucket B: "<root>/B" ("/gcs" in containers, as on Vertex; the
  // host's bucket directory for local processes). The runtime environment maps
  // gs:// paths with it. "" = buckets are not reachable as files.
  virtual std::string ReplicaBucketRoot() const = 0;
  // The host name replicas reach the daemon's machine by: "host.containers.internal"
  // in containers (each engine network's gateway), "127.0.0.1" for local processes.
  virtual std::string DaemonHostForReplicas() const { return "127.0.0.1"; }
  // True when the replica listener cannot know replicas by the address they connect
  // from (Slurm: host networking, shared by every job on a host): each job's replicas
  // then carry a credential of their own (auth/replica_credentials.h).
  virtual bool ReplicasNeedCredential() const { return false; }
  // The host uid (and gid) root in a replica is, when replicas run in a user namespace;
  // what the daemon puts where they write must belong to it. 0 = the host's own ids.
  virtual uint32_t ReplicaUidBase() const { return 0; }
  // The daemon is stopping: waits and retries in progress give up now (what they
  // left is recovered by the next daemon); running replicas keep running.
  virtual void BeginShutdown() {}
  // The backend as last probed, for /healthz, /metrics and describe (an engine
  // outage is visible, not a silent stall). Local processes have no backend to lose.
  virtual BackendHealth Health() const { return {}; }
  // The job (uid) whose running replica connects to the daemon from `address`, for
  // the replica listener (executor/container/replica_addresses.h); nullopt when no replica
  // has it or the backend cannot tell (processes all share the host's addresses).
  virtual std::optional<std::string> JobAtAddress(const std::string& address) {
    return std::nullopt;
  }
  // Any thread, at submit: whether this backend holds the prebuilt runtime image
  // `local_image` (images/runtimes.h), so that a job on a runtime never built is
  // refused with how to build it instead of failing at launch. True where the backend
  // cannot tell now (an engine that does not answer; Slurm nodes keep their own
  // images; local processes run no image): such a job says so at launch instead.
  virtual bool HoldsRuntime(const std::string& local_image) {
    (void)local_image;
    return true;
  }
  // Any thread: a shell on a terminal in the running replica (pool, index) of the
  // attempt (replica_shell.h). NotFound when there is no such replica,
  // FailedPrecondition when it does not run or this backend offers no shells (local
  // processes run on the daemon's own host: a shell there would be the host's).
  virtual Result<std::unique_ptr<ReplicaShell>> OpenShell(const std::string& job_uid, int attempt,
                                                          int pool, int index) {
    (void)job_uid, (void)attempt, (void)pool, (void)index;
    return FailedPrecondition("this backend offers no shells in replicas");
  }
};

// Labels every replica carries so Recover() can find it.
inline constexpr char kLabelJob[] = "trainyard.job";
inline constexpr char kLabelAttempt[] = "trainyard.attempt";
inline constexpr char kLabelPool[] = "trainyard.pool";
inline constexpr char kLabelIndex[] = "trainyard.index";
inline constexpr char kLabelTask[] = "trainyard.task";
// Which daemon owns the replica (see ContainerExecutor::Options::instance).
inline constexpr char kLabelInstance[] = "trainyard.instance";

std::string ReplicaName(const std::string& job_uid, int attempt, int pool, int index);
// The inverse of ReplicaName; false when `name` is not one.
bool ParseReplicaName(const std::string& name, std::string* job_uid, int* attempt, int* pool,
                      int* index);

}  // namespace ty::executor
