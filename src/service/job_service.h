// JobService: the use cases (submit, get, list, cancel, delete, logs) over one loop
// core that owns job state (docs/design.md §2): service/loop_core.h runs tasks, timers and
// blocking work; service/job_controller.h turns inputs into decisions
// (machines/job_machine.h), commits them, then acts.
//
// Threading: API threads call the public methods. Mutations (Submit, Cancel, Delete)
// run on the loop and wait for it, so the answer reflects a state that is already
// committed to the store. Reads (Get, List) never wait for the loop: they use the
// index the loop publishes after each commit. Blocking backend calls (executor
// Launch/Stop/Cleanup) run on a small worker pool and post their results back.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "executor/executor.h"
#include "jobstore/job_store.h"
#include "logs/log_store.h"
#include "machines/job_machine.h"
#include "model/job.h"
#include "model/spec_limits.h"
#include "service/disk_reserve.h"
#include "service/finished_jobs.h"
#include "service/job_controller.h"
#include "service/job_logs.h"
#include "service/log_entries.h"
#include "wire/dialect.h"

namespace ty::service {

// A shell in a running replica (enableWebAccess), as the API hands it to a WebSocket.
using ReplicaShell = executor::ReplicaShell;

class StudyController;  // service/study_controller.h

struct JobServiceOptions {
  // How jobs run: grace, retries, spec limits, trial files, the buckets replicas see.
  ControllerOptions jobs;
  int worker_threads = 4;
  // Digits of new job ids. Required: only main wires the system's (common/random.h).
  std::function<uint64_t()> random;
  // Tests: run nothing until RunUntilIdleForTest() (deterministic with a ManualClock).
  bool manual_loop_for_test = false;
  // Tests: controllers of their own beside the service's, registered on its loop core
  // after the service's (service/messages.h) and before it starts; crash-point tests
  // take the core here to "kill" the daemon at a write (tests/service/crash_harness.h).
  std::function<void(LoopCore*)> register_controllers_for_test;
  // Capacity, quotas and machine sizes admission works with (no nodes: admit all).
  AdmissionOptions admission;
  // Bucket owners (gcs::ObjectStore's, wired by the daemon; unset = no owners), at
  // submit: PermissionDenied when another project owns a bucket the job names, else
  // they become the job's project's (jobs.project_buckets: what replicas then see).
  std::function<Status(const std::string& project, const std::vector<std::string>& buckets)>
      claim_buckets;
  // At submit, for a job naming a tensorboard (model::JobSpec::tensorboard): OK when
  // it exists and is `project`'s, else InvalidArgument naming jobSpec.tensorboard.
  // Unset = not checked (tests of other things).
  std::function<Status(const std::string& project, const std::string& tensorboard)>
      check_tensorboard;
  // Executors beside Create's, each admitting its jobs against its own capacity, and
  // the projects whose jobs run there (issue 21); every other project's jobs run on
  // Create's executor, admitted by `admission` above.
  struct OtherExecutor {
    std::string name;                        // "slurm"
    executor::Executor* executor = nullptr;  // Not owned.
    AdmissionOptions admission;
    std::vector<std::string> projects;
  };
  std::vector<OtherExecutor> other_executors;
  std::string executor_name = "default";  // Create's executor, as health details name it.
  // The memory budget of unfinished work (model/work_memory.h): a submit whose work
  // would take the sum past it is refused (429 while other work holds it, 400 when
  // it alone is larger). 0 = no budget. The daemon sets it (max_daemon_memory).
  size_t max_work_bytes = 0;
  // The registry scopes images to projects (a daemon with tokens): a job naming
  // another project's gcr.io / pkg.dev image is a 403 at submit
  // (model::CheckImageProjects), before the registry would refuse its pull.
  bool images_scoped_to_projects = false;
  // The data disk (service/disk_reserve.h): below the reserve a submit is refused
  // (429) and /healthz is degraded. Unset = not watched (tests of other things).
  std::function<Result<DiskSpace>()> data_disk;
  std::optional<uint64_t> data_reserve_bytes;  // Unset = ReserveBytes' default.
  // Where BackupStore writes its copies (the data directory's backups/); "" = none.
  std::string backup_dir;
};

// How a request names a job: ml v1 by (project, jobId); Vertex by
// (project, location, numeric id).
struct JobRef {
  model::Dialect dialect = model::Dialect::kVertex;
  std::string project;
  std::string location;  // Vertex only.
  std::string id;
  // Vertex: the collection named. customJobs also holds each training pipeline's
  // backing CustomJob (the same record, wire::RenderOptions::as_backing_custom_job).
  model::VertexCollection collection = model::VertexCollection::kCustomJobs;
};

struct ListRequest {
  model::Dialect dialect = model::Dialect::kVertex;
  std::string project;
  std::string location;  // Vertex only.
  std::string filter;    // AIP-160 (Vertex) or ml v1 filter text; "" = all.
  model::VertexCollection collection = model::VertexCollection::kCustomJobs;  // Vertex.
  int page_size = 0;  // 0 = default (ml v1: 20; Vertex: 100). Capped at 1000.
  std::string page_token;
  // A page also stops once its records hold this many bytes (model::ApproxRecordBytes,
  // after at least one record), with a nextPageToken as when it is full: an answer's
  // size and what building it holds are bounded whatever the records' sizes.
  size_t max_bytes = kListPageBytes;
  static constexpr size_t kListPageBytes = 2 << 20;
};

struct ListResponse {
  std::vector<model::Job> jobs;  // Newest first.
  std::string next_page_token;   // "" on the last page.
};

// A finished long-running operation (Vertex delete).
struct Operation {
  std::string name;  // projects/p/locations/l/operations/N
  TimeMicros create_time = 0;
  TimeMicros update_time = 0;
  bool done = true;
};

class JobService {
 public:
  // The service does not own its collaborators; they must outlive it.
  static Result<std::unique_ptr<JobService>> Create(jobstore::JobStore* store,
                                                    executor::Executor* executor,
                                                    logs::LogStore* logs, const Clock* clock,
                                                    JobServiceOptions options);
  ~JobService();

  // Loads every job from the store, recovers executor state, starts the loop. A
  // stored job that cannot be run any more is failed and reported (problems()).
  Status Start();
  // Before Start: the daemon's port replicas use for the Cloud Storage API; their
  // environment then points the client libraries at
  // http://<their executor's DaemonHostForReplicas()>:<port>. 0 = none.
  void SetReplicaStoragePort(int port);
  // Before Start: each job's replica credential (JobController::SetReplicaCredentials).
  void SetReplicaCredentials(std::function<std::string(const std::string& job_uid)> credential);
  // Why some stored jobs were failed at start-up (for /healthz); empty when none.
  std::vector<std::string> problems() const;
  // Whether job records can be written (inputs wait while they cannot).
  StoreWriteHealth store_health() const;
  // The data disk's space and its reserve; nullopt when not watched or not measurable.
  struct DataDisk {
    DiskSpace space;
    uint64_t reserve_bytes = 0;
    bool low() const { return space.free_bytes < reserve_bytes; }
  };
  std::optional<DataDisk> data_disk() const;
  // A consistent copy of the job store, taken while jobs run: the path of a new file
  // (0600) in options' backup_dir, for the caller to hand over and remove.
  Result<std::string> BackupStore();
  // The executors' backends (the container engine, Slurm) as last probed.
  executor::BackendHealth backend_health() const { return backends_.Health(); }
  // Manual loop only: runs everything due; returns how many tasks ran.
  int RunUntilIdleForTest();
  // The shutdown's first step: no executor starts anything from now on (a launch in
  // flight is finished or never started); the loop still runs. Idempotent.
  void BeginShutdown();
  // Stops the loop and the worker pool. Running replicas are left running: a
  // restarted daemon re-attaches to them.
  void Shutdown();

  // InvalidArgument for a bad spec; AlreadyExists for a duplicate ml v1 jobId.
  Result<model::Job> Submit(model::Dialect dialect, const std::string& project,
                            const std::string& location, wire::ParsedJob parsed);
  // NotFound; InvalidArgument for a malformed Vertex id (non-numeric).
  Result<model::Job> Get(const JobRef& ref);
  // Get without the copy: a finished job is shared with every reader, its renders
  // made once (service/finished_jobs.h).
  Result<std::shared_ptr<const JobRead>> Read(const JobRef& ref) const;
  // InvalidArgument for a bad filter or page token.
  Result<ListResponse> List(const ListRequest& request);
  // OK also for an already-terminal job (no-op), as gcloud documents.
  Status Cancel(const JobRef& ref);
  // FailedPrecondition unless terminal. Returns the finished operation.
  Result<Operation> Delete(const JobRef& ref);
  // NotFound for an unknown operation name.
  Result<Operation> GetOperation(const std::string& name);
  Result<std::vector<model::JobEvent>> Events(const JobRef& ref);

  // Logs of a job (NotFound if the job is unknown).
  Result<JobLogPage> ReadLogs(const JobRef& ref, const std::string& cursor, const std::string& task,
                              size_t max_entries);
  // The log's last `max_entries` lines before `before` ("" = its end), oldest first
  // (job_logs.h: ReadJobLogTail). FailedPrecondition for a tuning job with trials,
  // whose merged log reads forward only.
  Result<JobLogPage> ReadLogTail(const JobRef& ref, const std::string& before,
                                 const std::string& task, size_t max_entries);
  // Blocks up to `timeout_ms` for more log; false if none arrived.
  bool WaitForLogs(const JobRef& ref, const std::string& cursor, int timeout_ms);
  // Cloud Logging `entries:list` over every job's log (service/log_entries.h).
  Result<LogEntriesPage> ListLogEntries(const LogEntriesRequest& request);

  // The unfinished job whose replica connects from `address` (Executor::JobAtAddress),
  // for the replica listener: its uid and project; nullopt when there is none.
  struct ReplicaJob {
    std::string uid;
    std::string project;
  };
  std::optional<ReplicaJob> JobOfReplicaAt(const std::string& address) const;
  // The same for a job named by its uid (a replica's credential names it); nullopt
  // unless it exists and is not finished.
  std::optional<ReplicaJob> LiveReplicaJob(const std::string& uid) const;

  // Copies of the unfinished jobs and trial jobs `keep` takes (studies are not among
  // them). Any thread; never waits for the loop.
  std::vector<model::Job> LiveJobsWhere(const std::function<bool(const model::Job&)>& keep) const;

  // A shell in the running replica whose log task is `replica` ("workerpool0-0",
  // "master-replica-0"): FailedPrecondition unless the job asked for web access
  // (enableWebAccess), runs, and that replica runs; NotFound for no such replica.
  // Blocks on the backend (an engine exec). Who may ask is the API's to check.
  Result<std::unique_ptr<ReplicaShell>> OpenShell(const JobRef& ref, const std::string& replica);

  // Stored jobs that ended at or after `since`, with their specs, that `keep` takes: the
  // jobs a stopped daemon may have missed something of (a last TensorBoard pass). Reads
  // only those (the store's index by end time): for start-up, on a thread of the caller's.
  std::vector<model::Job> EndedSince(TimeMicros since,
                                     const std::function<bool(const model::Job&)>& keep) const;

  // Why a queued job waits and its place in the queue; nullopt when it does not wait.
  std::optional<scheduler::WaitInfo> QueueWait(const std::string& uid) const;
  // Admission's counters and the capacity, for GET /metrics.
  AdmissionStats Admission() const { return backends_.Stats(); }
  std::vector<scheduler::Capacity> Capacities() const { return backends_.Capacities(); }
  TimeMicros Now() const { return core_->clock()->Now(); }
  // Every stored job by state (GET /metrics).
  Result<std::map<model::JobState, int64_t>> JobsByState() const {
    return store_->CountJobsByState();
  }

 private:
  JobService(jobstore::JobStore* store, executor::Executor* executor, logs::LogStore* logs,
             const Clock* clock, JobServiceOptions options);
  Result<std::string> ResolveUid(const JobRef& ref) const;
  static std::string OperationName(const std::string& project, const std::string& location,
                                   const std::string& uid);
  Result<std::string> ResolveMlUid(const JobRef& ref) const;
  // A live job from memory, else the stored record (NotFound if neither).
  Result<std::shared_ptr<const JobRead>> Lookup(const std::string& uid) const;
  // ResourceExhausted (429) when `job`'s work would take the unfinished work's memory
  // past options_.max_work_bytes, InvalidArgument when it alone is past it.
  Status CheckMemoryBudget(const model::Job& job) const;
  // Fills a queued job's position and reason from admission.
  void WithQueueView(model::Job* job) const;

  // Every store call of the service and its controllers passes through it.
  const std::unique_ptr<FinishedJobs> finished_;
  jobstore::JobStore* const store_;
  logs::LogStore* const logs_;
  const JobServiceOptions options_;
  std::unique_ptr<LoopCore> core_;
  std::unique_ptr<UidSource> uids_;  // Every controller that creates records takes its uids here.
  Backends backends_;  // Before jobs_: its controllers are the backends' admissions' peers.
  std::unique_ptr<JobController> jobs_;
  std::unique_ptr<StudyController> studies_;
};

}  // namespace ty::service
