// BackgroundWork: the threads an executor runs behind the Executor interface,
// shared by ContainerExecutor and ProcessExecutor (each owns one as a member).
//
//  - Launch threads: Launch() returns at once and does the work on one thread
//    per launch; finished ones are joined on the next StartLaunch().
//  - Watcher threads: one per replica name, each following a replica until it
//    ends; Cleanup() waits for those of an attempt (WaitForWatchers) so that the
//    replica's last log lines are in the sink before it is removed.
//  - The event callback, and Emit() to it from any of these threads.
//  - Shutdown: Shutdown() raises a flag the work polls (shutting_down()), then
//    joins the launch threads first (a launch may still start watchers) and the
//    watcher threads second.
//
// Also the checks and event building both executors' Launch() share.
//
// Thread-safety: every method may be called from any thread, including from the
// work it runs, except Shutdown(), which must not be called from that work.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/random.h"
#include "common/status.h"
#include "common/time.h"
#include "executor/executor.h"

namespace ty::executor::internal {

class BackgroundWork {
 public:
  BackgroundWork() = default;
  BackgroundWork(const BackgroundWork&) = delete;
  BackgroundWork& operator=(const BackgroundWork&) = delete;
  // Shutdown(). The owner should call Shutdown() itself first, in its own
  // destructor, while what the work uses is still alive.
  ~BackgroundWork();

  void SetEventCallback(EventCallback callback);
  // Calls the callback (if set) on the calling thread, without holding a lock.
  void Emit(const ExecutorEvent& event) const;

  bool shutting_down() const { return shutting_down_.load(); }
  // Sleeps `ms`, or less when Shutdown() begins meanwhile.
  void SleepUnlessShuttingDown(int ms);
  // For engine calls that take a cancel flag: true once Shutdown() began.
  const std::atomic<bool>* cancel_flag() const { return &shutting_down_; }

  // Runs `work` on a new launch thread. Unavailable once Shutdown() began.
  Status StartLaunch(std::function<void()> work);

  // Runs `work` on a watcher thread for replica `name` of `job_uid`/`attempt`,
  // unless a watcher of `name` still runs (Recover() called twice) or Shutdown()
  // began. A finished watcher of the same name (an earlier replica) is replaced.
  void StartWatcher(const std::string& job_uid, int attempt, const std::string& name,
                    std::function<void()> work);
  // True while there is (or was, until WaitForWatchers) a watcher of `name`: its
  // replica's output is then captured, or being captured, to the end.
  bool IsWatched(const std::string& name) const;
  // Blocks until the watcher of `name` (if any) has finished, keeping it, so a
  // replica restarted afterwards gets a new one (StartWatcher replaces it) and not
  // the old one reporting the new run's end. False after `timeout`, and at once
  // when called from that watcher itself (from the event callback), which would
  // wait for itself.
  bool WaitForWatcher(const std::string& name, DurationMicros timeout = 30LL * 1000000);
  // Blocks until every watcher of `job_uid`/`attempt` has finished, then forgets
  // them; false if some still run after `timeout` (they are then kept), so a caller
  // can end their streams (remove the replica) instead of waiting forever.
  bool WaitForWatchers(const std::string& job_uid, int attempt,
                       DurationMicros timeout = 30LL * 1000000);

  // Raises shutting_down() (work polling it gives up), joining nothing. Idempotent.
  void BeginShutdown();
  // BeginShutdown, then joins launch threads, then watcher threads. Idempotent.
  void Shutdown();

 private:
  struct Watcher {
    std::string job_uid;
    int attempt = 0;
    std::thread thread;
    bool done = false;  // GUARDED_BY(mu_)
  };

  std::atomic<bool> shutting_down_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;   // Signalled when a watcher finishes or shutdown begins.
  EventCallback callback_;       // GUARDED_BY(mu_)
  uint64_t next_launch_id_ = 0;  // GUARDED_BY(mu_)
  std::map<uint64_t, std::thread> launch_threads_;            // GUARDED_BY(mu_)
  std::vector<uint64_t> finished_launches_;                   // Joinable now. GUARDED_BY(mu_)
  std::map<std::string, std::unique_ptr<Watcher>> watchers_;  // By replica name. GUARDED_BY(mu_)
};

// Checks what every executor needs of an attempt: a job uid, at least one
// replica, unique replica names; `check_replica` adds the backend's own checks
// and runs on each replica before its name's uniqueness is checked.
Status ValidateAttempt(const AttemptSpec& attempt,
                       const std::function<Status(const ReplicaLaunch&)>& check_replica);

// Makes <bucket_root>/<bucket> for every bucket (nothing when `bucket_root` is
// empty), so replicas can write into the buckets their job names. Unavailable when
// a directory cannot be made.
Status EnsureBucketDirs(const std::string& bucket_root, const std::vector<std::string>& buckets);

// The attempt's `buckets` and `visible_buckets`, sorted, once each.
std::vector<std::string> MountedBuckets(const AttemptSpec& attempt);

// Makes `uid` (and gid) own the directory at each writable mount's host path of the
// attempt's replicas, so that root in a replica's user namespace (kUsernsSize ids from
// `uid`) may write there. The directories only, never what is in them and never through
// a symlink. Internal if one cannot be given.
Status GiveWritableMountsTo(const AttemptSpec& attempt, uint32_t uid);

// kAttemptStarted (with `image_ready_time`) when `launched` is OK, else
// kLaunchFailed with its message.
ExecutorEvent LaunchOutcomeEvent(const AttemptSpec& attempt, const Status& launched,
                                 TimeMicros image_ready_time, TimeMicros now);

// kReplicaExited of replica `pool`/`index` with `exit_code`, and the signal
// that code stands for.
ExecutorEvent ReplicaExitedEvent(const std::string& job_uid, int attempt, int pool, int index,
                                 int exit_code, TimeMicros now);

// The signal of an exit code by the shell convention (128 + N), as engines and
// the process executor's wrapper report a death by signal N.
std::optional<int> SignalOf(int exit_code);

// Engine calls of one launch phase (image checks, creates, starts, removals) run
// on at most this many threads. The engine serializes parts of every create and
// start on its own locks, so more threads add contention, not speed.
inline constexpr size_t kMaxLaunchThreads = 8;

// Calls fn(i) for every i in [0, n) from up to kMaxLaunchThreads threads (the
// caller's among them) and returns when all calls have. Once a call returns
// false no further i is begun; calls already under way finish.
void ForEachConcurrently(size_t n, const std::function<bool(size_t)>& fn);

// A short random hex name part, unique within the process (gangs, holders).
std::string UniqueHexId(Random& random);

// The first failure in launch order, so the reported cause does not depend on
// which thread lost a race.
Status FirstError(const std::vector<Status>& results);

}  // namespace ty::executor::internal
