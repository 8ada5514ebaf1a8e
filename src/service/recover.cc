// Start-up recovery (loop thread): reconcile what the store says with what the
// executor still has. Healthy running replicas are adopted, never killed
// (DESIGN.md §3); exits that happened while the daemon was down are replayed as
// events; replicas that vanished are treated as killed (retryable).
#include <spdlog/spdlog.h>

#include <map>
#include <set>
#include <tuple>

#include "service/loop.h"

namespace ty::service {

using model::Job;
using model::JobState;
using model::ReplicaState;

void JobService::Loop::Recover(const std::vector<executor::ObservedReplica>& observed) {
  using Key = std::tuple<std::string, int, int, int>;  // uid, attempt, pool, index
  std::map<Key, executor::ObservedReplica> seen;
  for (const auto& o : observed) seen[{o.job_uid, o.attempt, o.pool, o.index}] = o;

  std::vector<std::string> uids;
  for (const auto& [uid, job] : jobs_) uids.push_back(uid);

  std::set<std::pair<std::string, int>> attempts_in_use;
  for (const std::string& uid : uids) {
    Job job = *Find(uid);
    if (model::IsTerminal(job.state)) continue;
    if (job.state == JobState::kQueued) {
      Admit(uid);  // Arms its timers.
      continue;
    }
    attempts_in_use.insert({uid, job.attempt});
    bool all_running = !job.replicas.empty();
    bool any_present = false;
    for (const auto& r : job.replicas) {
      auto it = seen.find({uid, job.attempt, r.pool, r.index});
      all_running &= it != seen.end() && it->second.running;
      any_present |= it != seen.end();
    }
    if (job.state == JobState::kPreparing && !all_running) {
      // The launch was interrupted: remove what it left and start a fresh attempt.
      spdlog::info("job {}: launch of attempt {} was interrupted; relaunching", uid, job.attempt);
      if (any_present) CleanupAttempt(uid, job.attempt);
      ArmTimers(job);
      StartAttempt(job);
      continue;
    }
    if (job.state == JobState::kPreparing) {
      executor::ExecutorEvent started;
      started.kind = executor::ExecutorEventKind::kAttemptStarted;
      started.job_uid = uid;
      started.attempt = job.attempt;
      started.time = clock_->Now();
      OnExecutorEvent(started);
      job = *Find(uid);
    }
    ArmTimers(job);
    if (job.state == JobState::kCancelling) {
      endings_[uid] = Ending{JobState::kCancelled,
                             model::JobError{1, "Job was cancelled by a user request."}, false};
      StopAttempt(job);
    }
    ServiceLog(job, "Trainyard restarted; re-attached to the running job.");
    for (const auto& r : job.replicas) {
      if (r.state != ReplicaState::kRunning && r.state != ReplicaState::kPending) continue;
      auto it = seen.find({uid, job.attempt, r.pool, r.index});
      if (it != seen.end() && it->second.running) continue;  // Its exit arrives as an event.
      executor::ExecutorEvent exited;
      exited.kind = executor::ExecutorEventKind::kReplicaExited;
      exited.job_uid = uid;
      exited.attempt = job.attempt;
      exited.pool = r.pool;
      exited.index = r.index;
      exited.time = clock_->Now();
      if (it != seen.end()) {
        exited.exit_code = it->second.exit_code;
        exited.signal = it->second.signal;
        exited.oom_killed = it->second.oom_killed;
      } else {
        // Gone without a trace while we were down: count it as killed.
        exited.exit_code = 137;
        exited.signal = 9;
      }
      Post([this, exited] { OnExecutorEvent(exited); });
    }
  }
  // Leftovers of finished jobs or superseded attempts: every attempt a live job
  // still uses is in `attempts_in_use`.
  std::set<std::pair<std::string, int>> stale;
  for (const auto& o : observed) {
    if (!attempts_in_use.count({o.job_uid, o.attempt})) stale.insert({o.job_uid, o.attempt});
  }
  for (const auto& [uid, attempt] : stale) {
    workers_->Submit([this, uid, attempt] {
      executor_->Stop(uid, attempt, options_.stop_grace).IgnoreError();
      executor_->Cleanup(uid, attempt).IgnoreError();
    });
  }
}

}  // namespace ty::service
