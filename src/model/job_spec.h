// The internal, unversioned job specification (docs/design.md §1).
//
// Both wire dialects (Vertex v1 `CustomJob`, ml v1 `Job`) are parsed into this one
// shape by wire/dialect.h; model/ never sees a wire type. Plain values,
// no behaviour, no I/O: safe to copy across threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "model/study_spec.h"

namespace ty::model {

// Which wire dialect a job was created through; responses use the same one.
enum class Dialect { kVertex, kMlV1 };

// The role of a worker pool is its index, as on Vertex:
//   0 primary (ml v1 master / chief), 1 workers, 2 parameter servers, 3 evaluators.
enum class PoolRole { kPrimary = 0, kWorker = 1, kParameterServer = 2, kEvaluator = 3 };
inline constexpr int kMaxPools = 4;

struct EnvVar {
  std::string name;
  std::string value;
};

struct ContainerSpec {
  std::string image_uri;
  std::vector<std::string> command;  // Empty: the image's ENTRYPOINT.
  std::vector<std::string> args;     // Empty: the image's CMD (when command is empty too).
  std::vector<EnvVar> env;
};

struct PythonPackageSpec {
  std::string executor_image_uri;
  std::vector<std::string> package_uris;
  std::string python_module;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
};

struct MachineSpec {
  std::string machine_type;      // "n1-standard-4", or an ml v1 legacy type ("standard").
  std::string accelerator_type;  // Enum name, e.g. "NVIDIA_TESLA_T4"; empty = none.
  int32_t accelerator_count = 0;
};

struct DiskSpec {
  std::string boot_disk_type;     // Empty = default ("pd-ssd").
  int32_t boot_disk_size_gb = 0;  // 0 = default (100).
};

struct WorkerPool {
  // Vertex allows `{}` placeholders to skip a position; such a pool has no replicas.
  bool empty() const { return replica_count == 0; }

  int64_t replica_count = 0;
  MachineSpec machine;
  DiskSpec disk;
  std::optional<ContainerSpec> container;           // Exactly one of these two
  std::optional<PythonPackageSpec> python_package;  // in a non-empty pool.
};

struct Scheduling {
  static constexpr DurationMicros kDefaultTimeout = 7LL * 24 * 3600 * 1000000;
  DurationMicros timeout = kDefaultTimeout;  // Vertex `timeout` / ml v1 `maxRunningTime`.
  DurationMicros max_wait = 0;  // ml v1 `maxWaitTime` / Vertex `maxWaitDuration`; 0 = forever.
  bool restart_job_on_worker_restart = false;
  bool disable_retries = false;
  int32_t priority = 0;  // ml v1 0..1000.
  bool spot = false;     // Vertex `strategy: SPOT`: may be preempted for a job that is not.
};

struct JobSpec {
  Dialect dialect = Dialect::kVertex;

  std::string job_id;        // ml v1 `jobId` (user-chosen). Vertex: empty (server assigns).
  std::string display_name;  // Vertex `displayName`; ml v1: empty.
  std::map<std::string, std::string> labels;

  // Index = role (PoolRole). Vertex placeholders and absent ml v1 roles are empty pools;
  // trailing empty pools are dropped, so pools.size() is 1..4 and pools[0] is never empty.
  std::vector<WorkerPool> pools;
  Scheduling scheduling;

  // Vertex `baseOutputDirectory.outputUriPrefix`, always ending in '/'; empty if unset.
  std::string base_output_directory;
  // Vertex `tensorboard`: "projects/P/locations/L/tensorboards/T", into which the job's
  // AIP_TENSORBOARD_LOG_DIR is indexed (tensorboard/indexer.h); empty if unset.
  std::string tensorboard;
  // Vertex `jobSpec.enableWebAccess` / ml v1 `trainingInput.enableWebAccess`: a terminal
  // in each running replica is offered to editors (webAccessUris; api/shell_endpoint.h).
  bool enable_web_access = false;
  // ml v1 `trainingInput.jobDir`, passed to the program as `--job-dir`; empty if unset.
  std::string job_dir;
  // ml v1 only: `chief` instead of `master` in TF_CONFIG.
  bool use_chief_in_tf_config = false;
  std::string region;      // ml v1 `trainingInput.region`.
  std::string scale_tier;  // ml v1 `scaleTier` name ("BASIC", "CUSTOM", ...).

  // A tuning job: the pools above are the spec of every trial (ml v1
  // `trainingInput.hyperparameters`; Vertex `HyperparameterTuningJob`).
  // Immutable once parsed and shared by every copy of the record (a study's search
  // space can hold 100,000 category names; each copy of a study's record, and each
  // decision about it, once copied them all).
  std::shared_ptr<const StudySpec> study;
};

}  // namespace ty::model
