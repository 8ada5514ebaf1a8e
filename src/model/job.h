// A job as the service keeps it: its spec plus everything that happened to it.
//
// Job lifecycle (one enum for both dialects; dialect.h maps the names):
//
//   QUEUED --admit--> PREPARING --all replicas started--> RUNNING --primary exits 0--> SUCCEEDED
//     |                  |  (pull image, network,           |  any replica fails
//     |                  |   mounts)                        +--(permanent)--------> FAILED
//     +--cancel / maxWait+--------> CANCELLING -------------------------------------> CANCELLED
//                                       ^--- cancel / timeout while RUNNING
//
// Vertex calls PREPARING `JOB_STATE_PENDING`. Plain values; safe to copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "model/job_spec.h"
#include "model/outbox.h"
#include "model/replica_placement.h"
#include "model/trial.h"

namespace ty::model {

enum class JobState {
  kUnspecified = 0,
  kQueued,
  kPreparing,
  kRunning,
  kSucceeded,
  kFailed,
  kCancelling,
  kCancelled,
};

bool IsTerminal(JobState s);
// Internal spelling used in the store and logs: "QUEUED", "PREPARING", ... (ml v1 names).
const char* JobStateName(JobState s);
std::optional<JobState> JobStateFromName(const std::string& name);

enum class ReplicaState {
  kPending = 0,  // Created or being created; user code not started.
  kRunning,
  kSucceeded,   // Exited 0.
  kFailed,      // Exited non-zero or killed.
  kStopped,     // Stopped by the service (cancel, job done, teardown).
  kRestarting,  // Exited; a restart in place was decided and may be under way.
};
const char* ReplicaStateName(ReplicaState s);
std::optional<ReplicaState> ReplicaStateFromName(const std::string& name);

// One replica of one attempt.
struct ReplicaRecord {
  int pool = 0;
  int index = 0;
  int attempt = 1;
  std::string task_name;  // "workerpool0-0" (Vertex) / "master-replica-0" (ml v1).
  std::string handle;     // Executor's deterministic name, e.g. "ty-<uid>-1-0-0".
  ReplicaState state = ReplicaState::kPending;
  std::optional<int> exit_code;
  std::optional<int> signal;  // Set when killed by a signal (exit code 128+N from an engine).
  int restarts = 0;
  TimeMicros start_time = 0;
  TimeMicros end_time = 0;
};

// google.rpc.Status as embedded in the resource (Vertex `error`, ml v1 `errorMessage`).
struct JobError {
  int code = 0;  // Numeric rpc code: 1 CANCELLED, 3 INVALID_ARGUMENT, 13 INTERNAL, ...
  std::string message;
};

// What the job becomes once every replica of the current attempt has exited: the
// pending outcome of a stop in progress (job_machine.h). Committed before the stop
// starts, so a restarted daemon finishes what was decided instead of guessing.
enum class EndingKind {
  kSucceed,  // The primary exited 0; the others are being stopped.
  kFail,     // A replica failed for good; `error` says which and why.
  kRetry,    // Start attempt + 1 once this one is down (`error`: why, if retries run out).
  kCancel,   // A user, maxWaitTime or the timeout cancelled the job (`error`: which).
  kPreempt,  // A spot job makes room: back to the queue once down (not a retry).
};
const char* EndingKindName(EndingKind k);
std::optional<EndingKind> EndingKindFromName(const std::string& name);

// What a record is, whatever its dialect: it decides the collection it is read and
// listed under, how its stored spec is parsed and how it renders. Stored with it.
enum class JobKind {
  kJob,       // A Vertex CustomJob or an ml v1 Job without hyperparameters.
  kStudy,     // A tuning job: Vertex HyperparameterTuningJob, ml v1 Job with hyperparameters.
  kPipeline,  // A Vertex TrainingPipeline (runs as its backing CustomJob).
  kTrial,     // A study's trial job (study_uid, trial_id); never listed.
};
const char* JobKindName(JobKind k);  // "JOB", "STUDY", "PIPELINE", "TRIAL": stored.
std::optional<JobKind> JobKindFromName(const std::string& name);

// Times of each phase, so a slow start can be explained (docs/design.md "Job lifecycle").
struct PhaseTimes {
  TimeMicros queued = 0;       // Entered the queue: create_time, or the last preemption.
  TimeMicros admitted = 0;     // QUEUED -> PREPARING.
  TimeMicros image_ready = 0;  // Images present (pulled if needed).
  TimeMicros all_running = 0;  // Every replica of the current attempt started.
  TimeMicros finished = 0;     // Terminal state reached.
};

// A replica an executor created before a daemon restart, as its Recover() finds it;
// the job machine's kRecovered input carries those of the job's current attempt.
struct ObservedReplica {
  std::string job_uid;
  int attempt = 0;
  int pool = 0;
  int index = 0;
  std::string name;
  bool running = false;       // Still running: exit watching is re-attached.
  int exit_code = 0;          // When !running.
  std::optional<int> signal;  // When !running.
  bool oom_killed = false;
  TimeMicros finished_at = 0;  // When !running: when it ended, if the backend knows (0: not).
  TimeMicros started_at = 0;   // When !running: when it started, if the backend knows (0: not).
  // A replica created and never started (the daemon stopped between a gang's create
  // and start) says so with running = false and exit_code = kNeverStarted.
  static constexpr int kNeverStarted = -1;
  bool never_started() const { return !running && exit_code == kNeverStarted; }
};

// What admission gave one replica of the job: its placement (scheduler/ decided it)
// with who the replica is and the limits enforced on it, kept in the record so every
// attempt and a restarted daemon use the same node and GPUs.
struct ReplicaGrant : ReplicaPlacement {
  int pool = 0;
  int index = 0;
  std::string node_name;
  double cpu_limit = 0;        // Enforced: the machine type's vCPUs, capped by the node.
  double memory_limit_gb = 0;  // Enforced: the machine type's memory, capped by the node.
  bool operator==(const ReplicaGrant&) const = default;
};

// What one image name of an attempt stood for when it launched. Tags are resolved at
// every launch (a tag pushed again after submit runs on the next attempt), so the record
// says which image the current attempt runs.
struct ImageRan {
  std::string image;   // As the spec names it (after runtime mapping).
  std::string digest;  // The manifest digest it was pulled by ("sha256:..."); "" for an
                       // image only built on this machine.
  std::string id;      // The engine's image id (its config's digest).
  bool operator==(const ImageRan& o) const {
    return image == o.image && digest == o.digest && id == o.id;
  }
};

struct Ending {
  EndingKind kind = EndingKind::kFail;
  std::optional<JobError> error;  // The job's error if it ends this way.
  bool operator==(const Ending& o) const {
    return kind == o.kind && error.has_value() == o.error.has_value() &&
           (!error || (error->code == o.error->code && error->message == o.error->message));
  }
};

struct Job {
  // Internal key: decimal digits, unique across dialects. For Vertex it is also the
  // public id (`customJobs/{uid}`); for ml v1 the public id is spec.job_id.
  std::string uid;
  Dialect dialect = Dialect::kVertex;
  JobKind kind = JobKind::kJob;
  std::string project;
  std::string location;  // Vertex location; empty for ml v1.

  JobSpec spec;
  // The accepted request in canonical wire form (lowerCamelCase keys, int64 as strings,
  // enums as names, no output-only fields) of its own dialect. Responses are rendered
  // from it, so a job reads back exactly as it was created.
  std::string spec_json;
  // The internal spec as accepted, versioned (model/spec_record.h): what a restarted
  // daemon runs, without re-validating. "" for jobs stored before it existed.
  std::string spec_record;

  JobState state = JobState::kQueued;
  TimeMicros create_time = 0;
  TimeMicros start_time = 0;  // First entered RUNNING.
  TimeMicros end_time = 0;    // Entered a terminal state.
  TimeMicros update_time = 0;
  PhaseTimes phases;
  std::optional<JobError> error;

  int attempt = 0;  // Current attempt, 1-based; 0 before the first launch.
  bool cancel_requested = false;
  std::vector<ReplicaRecord> replicas;  // Replicas of the current attempt.
  // Set while the current attempt is being stopped: what happens once it is down.
  std::optional<Ending> ending;
  // Admission's grant while the job holds resources (PREPARING .. the end of its last
  // attempt); empty while queued.
  std::vector<ReplicaGrant> grants;
  // What the current attempt's image names stood for at its launch (empty before its
  // start, and where the backend resolves them on its hosts, as Slurm does).
  std::vector<ImageRan> images;
  // Times a spot attempt was preempted; they do not count against the retry limit.
  int preemptions = 0;

  // A study (spec.study set): its trials, in creation order, and what else its
  // machine remembers (machines/study_machine.h).
  std::vector<Trial> trials;
  StudyProgress study_progress;
  // A trial job: the study's uid and the trial's id (1, 2, ...); "" / 0 otherwise.
  // Trial jobs are not listed among the project's jobs.
  std::string study_uid;
  int64_t trial_id = 0;
  // The last commit's service lines, and the number of the newest (model/outbox.h).
  ServiceOutbox outbox;

  // Not stored: filled by the service when a queued job is read (admission's view).
  int64_t queue_position = 0;  // 1-based; 0 = not waiting.
  std::string queue_reason;

  // Public id: spec.job_id for ml v1, uid for Vertex.
  const std::string& public_id() const { return dialect == Dialect::kMlV1 ? spec.job_id : uid; }
  // "projects/p/jobs/id" or "projects/p/locations/l/customJobs/uid".
  std::string ResourceName() const;
};

// A generous estimate of what a record holds on the heap: the stored spec (JSON and
// record), the error text, and a fixed share per replica, grant and trial (their ids,
// names, parameters and metrics). What caches, list pages and the memory budget count.
size_t ApproxRecordBytes(const Job& job);

// A line in a job's history (store table `events`), shown by describe and logs.
struct JobEvent {
  TimeMicros time = 0;
  std::string kind;     // "state", "replica", "attempt", "error", ...
  std::string message;  // Human text: "Job is running.", "workerpool1-0 exited with 3".
};

// The Vertex collection a record belongs to (by its kind; a trial job is its study's),
// and its URL segment.
enum class VertexCollection { kCustomJobs, kHyperparameterTuningJobs, kTrainingPipelines };
VertexCollection CollectionOf(const Job& job);
const char* CollectionName(VertexCollection c);

// Job uids are decimal strings; this compares them as numbers.
bool UidLess(const std::string& a, const std::string& b);

// ml v1 role of a pool: "master", "worker", "ps", "evaluator".
const char* MlRoleName(int pool);

// Task name of a replica in the job's dialect:
//   Vertex: workerpool{pool}-{index};  ml v1: master-replica-0, worker-replica-N,
//   ps-replica-N, evaluator-replica-N.
std::string TaskName(Dialect dialect, int pool, int index);
// The replica as named in failure messages: Vertex "workerpool0-0", ml v1 "master 0".
std::string ReplicaDisplayName(Dialect dialect, int pool, int index, bool use_chief);

}  // namespace ty::model
