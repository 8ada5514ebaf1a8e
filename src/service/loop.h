// Internal to service/: the reconcile loop behind JobService.
//
// One thread (the loop) owns every job's state. Everything that may change a job
// (API requests, executor events, timers) becomes a task on its queue. A change is
// committed to the store first, then published to `jobs_` (which API threads read
// under `mu_`), then its side effect (executor call) is started on the worker pool,
// whose result comes back as another task. Names of side effects are deterministic
// (executor::ReplicaName), so replaying after a crash is safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "service/job_service.h"
#include "service/worker_pool.h"

namespace ty::service {

class JobService::Loop {
 public:
  Loop(store::JobStore* store, executor::Executor* executor, logs::LogStore* logs,
       const Clock* clock, JobServiceOptions options);
  ~Loop();

  Status Start();
  void Shutdown();

  // --- Called from API threads (job_service.cc).
  Result<model::Job> Submit(model::Job job);
  Result<model::Job> Get(const JobRef& ref) const;
  Result<ListResponse> List(const ListRequest& request) const;
  Status Cancel(const JobRef& ref);
  Result<Operation> Delete(const JobRef& ref);
  Result<Operation> GetOperation(const std::string& name) const;
  Result<std::vector<model::JobEvent>> Events(const JobRef& ref) const;
  Result<std::string> ResolveUid(const JobRef& ref) const;
  logs::LogStore* logs() const { return logs_; }

 private:
  // Why the current attempt is being stopped, and what the job becomes once every
  // replica has exited. Loop-thread only; rebuilt from records after a restart.
  struct Ending {
    model::JobState state = model::JobState::kFailed;
    std::optional<model::JobError> error;
    bool retry = false;  // Start a new attempt instead of ending the job.
  };

  // --- Queue plumbing.
  void Post(std::function<void()> task);
  template <typename T>
  T PostAndWait(std::function<T()> task);
  void RunLoop();
  void ScheduleAt(TimeMicros when, std::function<void()> task);

  // --- Loop-thread operations (reconcile.cc).
  Status Commit(model::Job& job, const std::string& event_kind, const std::string& event);
  void Admit(const std::string& uid);
  void StartAttempt(model::Job& job);
  void OnExecutorEvent(const executor::ExecutorEvent& event);
  void OnAttemptStarted(model::Job& job, const executor::ExecutorEvent& event);
  void OnLaunchFailed(model::Job& job, const std::string& message);
  void OnReplicaExited(model::Job& job, const executor::ExecutorEvent& event);
  void RestartReplica(model::Job& job, model::ReplicaRecord& rec);
  // Ends the attempt and starts the next one, or fails the job with `error` when
  // retries are disabled or used up.
  void RetryJobOrFail(model::Job& job, model::JobError error);
  void BeginEnding(model::Job& job, Ending ending);
  void MaybeFinishEnding(model::Job& job);
  void Finish(model::Job& job, model::JobState state, std::optional<model::JobError> error);
  void StopAttempt(const model::Job& job);
  void CleanupAttempt(const std::string& uid, int attempt);
  Status CancelOnLoop(const std::string& uid, const std::string& reason);
  void ArmTimers(const model::Job& job);
  void Recover(const std::vector<executor::ObservedReplica>& observed);
  void ServiceLog(const model::Job& job, const std::string& message,
                  const std::string& severity = "INFO");
  std::string FailureMessage(const model::Job& job, const model::ReplicaRecord& r,
                             const executor::ExecutorEvent& event);
  model::Job* Find(const std::string& uid);  // Loop thread; null if absent.
  std::string NewUid();

  store::JobStore* const store_;
  executor::Executor* const executor_;
  logs::LogStore* const logs_;
  const Clock* const clock_;
  const JobServiceOptions options_;

  // Queue (any thread).
  std::mutex q_mu_;
  std::condition_variable q_cv_;
  std::deque<std::function<void()>> queue_;              // Guarded by q_mu_.
  std::multimap<TimeMicros, std::function<void()>> timers_;  // Guarded by q_mu_.
  bool stopping_ = false;                                // Guarded by q_mu_.
  std::thread thread_;
  std::thread::id loop_thread_id_;
  std::unique_ptr<WorkerPool> workers_;

  // Published state: written by the loop thread only, read by API threads.
  mutable std::mutex mu_;
  // uid -> job. Guarded by mu_. Iteration order is creation order because every
  // uid the service mints has 19 digits (NewUid), so text order is numeric order.
  std::map<std::string, model::Job> jobs_;
  std::map<std::string, Operation> operations_;          // Guarded by mu_.

  // Loop-thread only.
  std::map<std::string, Ending> endings_;  // uid -> pending ending of current attempt.
  std::string last_uid_;
};

}  // namespace ty::service
