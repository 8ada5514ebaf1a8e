#include "model/job.h"

namespace ty::model {

bool IsTerminal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kCancelled;
}

const char* JobStateName(JobState s) {
  switch (s) {
    case JobState::kUnspecified:
      return "STATE_UNSPECIFIED";
    case JobState::kQueued:
      return "QUEUED";
    case JobState::kPreparing:
      return "PREPARING";
    case JobState::kRunning:
      return "RUNNING";
    case JobState::kSucceeded:
      return "SUCCEEDED";
    case JobState::kFailed:
      return "FAILED";
    case JobState::kCancelling:
      return "CANCELLING";
    case JobState::kCancelled:
      return "CANCELLED";
  }
  return "STATE_UNSPECIFIED";
}

std::optional<JobState> JobStateFromName(const std::string& name) {
  for (JobState s :
       {JobState::kUnspecified, JobState::kQueued, JobState::kPreparing, JobState::kRunning,
        JobState::kSucceeded, JobState::kFailed, JobState::kCancelling, JobState::kCancelled}) {
    if (name == JobStateName(s)) return s;
  }
  return std::nullopt;
}

const char* ReplicaStateName(ReplicaState s) {
  switch (s) {
    case ReplicaState::kPending:
      return "PENDING";
    case ReplicaState::kRunning:
      return "RUNNING";
    case ReplicaState::kSucceeded:
      return "SUCCEEDED";
    case ReplicaState::kFailed:
      return "FAILED";
    case ReplicaState::kStopped:
      return "STOPPED";
    case ReplicaState::kRestarting:
      return "RESTARTING";
  }
  return "PENDING";
}

std::optional<ReplicaState> ReplicaStateFromName(const std::string& name) {
  for (ReplicaState s :
       {ReplicaState::kPending, ReplicaState::kRunning, ReplicaState::kSucceeded,
        ReplicaState::kFailed, ReplicaState::kStopped, ReplicaState::kRestarting}) {
    if (name == ReplicaStateName(s)) return s;
  }
  return std::nullopt;
}

const char* EndingKindName(EndingKind k) {
  switch (k) {
    case EndingKind::kSucceed:
      return "SUCCEED";
    case EndingKind::kFail:
      return "FAIL";
    case EndingKind::kRetry:
      return "RETRY";
    case EndingKind::kCancel:
      return "CANCEL";
    case EndingKind::kPreempt:
      return "PREEMPT";
  }
  return "FAIL";
}

std::optional<EndingKind> EndingKindFromName(const std::string& name) {
  for (EndingKind k : {EndingKind::kSucceed, EndingKind::kFail, EndingKind::kRetry,
                       EndingKind::kCancel, EndingKind::kPreempt}) {
    if (name == EndingKindName(k)) return k;
  }
  return std::nullopt;
}

bool UidLess(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

size_t ApproxRecordBytes(const Job& job) {
  size_t trials = 0;
  for (const Trial& t : job.trials) {
    trials += sizeof(Trial) + 64 + 48 * t.measurements.size();
    for (const auto& [name, value] : t.params) trials += 96 + name.size() + value.category.size();
  }
  size_t lines = 0;
  for (const OutboxLine& l : job.outbox.lines) lines += sizeof(OutboxLine) + l.message.size();
  return sizeof(Job) + lines + job.spec_json.size() + job.spec_record.size() +
         (job.error ? job.error->message.size() : 0) + 512 * job.replicas.size() +
         128 * job.grants.size() + 256 * job.images.size() + trials + 1024;
}

std::string Job::ResourceName() const {
  if (dialect == Dialect::kMlV1) return "projects/" + project + "/jobs/" + spec.job_id;
  return "projects/" + project + "/locations/" + location + "/" +
         CollectionName(CollectionOf(*this)) + "/" + uid;
}

VertexCollection CollectionOf(const Job& job) {
  switch (job.kind) {
    case JobKind::kPipeline:
      return VertexCollection::kTrainingPipelines;
    case JobKind::kStudy:
    case JobKind::kTrial:
      return VertexCollection::kHyperparameterTuningJobs;
    case JobKind::kJob:
      break;
  }
  return VertexCollection::kCustomJobs;
}

const char* CollectionName(VertexCollection c) {
  switch (c) {
    case VertexCollection::kHyperparameterTuningJobs:
      return "hyperparameterTuningJobs";
    case VertexCollection::kTrainingPipelines:
      return "trainingPipelines";
    case VertexCollection::kCustomJobs:
      break;
  }
  return "customJobs";
}

const char* JobKindName(JobKind k) {
  switch (k) {
    case JobKind::kJob:
      return "JOB";
    case JobKind::kStudy:
      return "STUDY";
    case JobKind::kPipeline:
      return "PIPELINE";
    case JobKind::kTrial:
      return "TRIAL";
  }
  return "JOB";
}

std::optional<JobKind> JobKindFromName(const std::string& name) {
  for (JobKind k : {JobKind::kJob, JobKind::kStudy, JobKind::kPipeline, JobKind::kTrial}) {
    if (name == JobKindName(k)) return k;
  }
  return std::nullopt;
}

const char* MlRoleName(int pool) {
  switch (pool) {
    case 0:
      return "master";
    case 1:
      return "worker";
    case 2:
      return "ps";
    default:
      return "evaluator";
  }
}

std::string TaskName(Dialect dialect, int pool, int index) {
  if (dialect == Dialect::kVertex) {
    return "workerpool" + std::to_string(pool) + "-" + std::to_string(index);
  }
  return std::string(MlRoleName(pool)) + "-replica-" + std::to_string(index);
}

std::string ReplicaDisplayName(Dialect dialect, int pool, int index, bool use_chief) {
  if (dialect == Dialect::kVertex) return TaskName(dialect, pool, index);
  std::string role = (pool == 0 && use_chief) ? "chief" : MlRoleName(pool);
  return role + " " + std::to_string(index);
}

}  // namespace ty::model
