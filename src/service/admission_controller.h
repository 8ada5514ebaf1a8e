// Internal to service/: the admission controller (docs/design.md §2: a controller beside
// the job controller on the same loop core). It keeps what waits and what holds
// resources, hands a snapshot to scheduler::Admit after every change, and turns the
// decisions into job inputs (kAdmitted with the grants, kPreempt) that it sends the
// job controller (service/messages.h), which commits them. It learns what to queue
// (AdmissionWanted), hold (JobLoaded) and release (a JobCommitted record that is
// finished or back in the queue) from messages too. Why each job waits is published
// for describe, and written to the job's service log when it changes.
//
// With no nodes in the capacity it admits every job at once (service tests that do
// not care about resources).
//
// Request/Hold/Release run on the loop (from its messages). Published state (waits,
// metrics) is guarded by `mu_`.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "machines/job_machine.h"
#include "model/job.h"
#include "model/machine_catalog.h"
#include "scheduler/admission.h"
#include "service/job_demand.h"
#include "service/loop_core.h"
#include "service/messages.h"

namespace ty::service {

struct AdmissionOptions {
  scheduler::Capacity capacity;  // No nodes: admit everything at once.
  model::MachineOverrides machine_types;
};

// Counters and gauges for GET /metrics.
struct AdmissionStats {
  int64_t queued = 0;
  TimeMicros oldest_queued_since = 0;  // 0 when none waits.
  double admitted_cpus = 0;
  double admitted_memory_gb = 0;
  std::map<std::string, int64_t> admitted_gpus;  // By type.
  int64_t passes = 0;
  int64_t admissions = 0;
  int64_t preemptions = 0;
  double pass_seconds_total = 0;
  double last_pass_seconds = 0;
};

class AdmissionController {
 public:
  // Whether a project's jobs are admitted here (a daemon has one admission per executor).
  using OwnsFn = std::function<bool(const std::string& project)>;
  using LogFn = std::function<void(const std::string& uid, const std::string& message,
                                   const std::string& severity)>;

  // Registers its receivers on `core`: construct it before the loop starts.
  AdmissionController(LoopCore* core, AdmissionOptions options, OwnsFn owns, LogFn log);

  // Any thread, at submit: InvalidArgument naming the field when the job could never
  // be admitted here.
  Status CheckSubmittable(const model::Job& job) const;

  // Loop thread. The job waits for admission (again, after a preemption). One whose
  // machine types have no size here (the config changed since it was queued) is
  // failed with why, by an input posted to the loop.
  void Request(const model::Job& job);
  // Loop thread, daemon start: the job holds its stored grants.
  void Hold(const model::Job& job);
  // Loop thread. The job neither waits nor holds anything any more.
  void Release(const std::string& uid);

  // Any thread.
  std::optional<scheduler::WaitInfo> WaitOf(const std::string& uid) const;
  AdmissionStats stats() const;
  const scheduler::Capacity& capacity() const { return options_.capacity; }

 private:
  void SendInput(const std::string& uid, machines::JobInput input);  // To the job controller.
  void SchedulePass();
  void RunPass();
  void PublishWaits(const scheduler::WaitList& waiting);

  LoopCore* const core_;
  const AdmissionOptions options_;
  const OwnsFn owns_;
  const LogFn log_;

  // Loop thread only.
  std::map<std::string, QueuedDemand> queued_;  // By uid: what it asked for when queued.
  std::map<std::string, scheduler::Allocation> holding_;
  std::map<std::string, std::string> last_reason_;
  bool pass_pending_ = false;

  mutable std::mutex mu_;
  std::unordered_map<std::string, scheduler::WaitInfo> waits_;  // Guarded by mu_.
  AdmissionStats stats_;                                        // Guarded by mu_.
};

}  // namespace ty::service
