// ProcessExecutor: runs each replica as a local process group, for hosts without
// a container engine (no isolation). See executor.h for the contract.
//
// A replica runs `command + args` (the `image` is ignored; `command` is required)
// under a tiny `/bin/sh -c` wrapper that records the exit status in a file, so a
// restarted daemon still learns how a replica ended. Each wrapper is a session
// leader (setsid), so Stop() signals the whole process group. Environment: exactly
// `ReplicaLaunch::env`, plus the daemon's PATH when `env` sets none (otherwise
// `command` could not be found); nothing else is inherited. Mounts are ignored:
// a process sees the host's files, and the service passes locations through env.
//
// On-disk layout, one set per replica (`name` = ReplicaLaunch::name):
//
//   <state_dir>/<name>.json    meta: job uid, attempt, pool, index, task (Recover);
//                              command, args, env (RestartReplica)
//   <state_dir>/<name>.pid     "<pid> <start time in clock ticks>" (pid reuse check)
//   <state_dir>/<name>.exit    exit status, written by the wrapper when it ends
//   <state_dir>/<name>.out     stdout  \  appended by the process, followed by a
//   <state_dir>/<name>.err     stderr  /  watcher thread into the LogSink
//   <state_dir>/<name>.cursor  log capture position (write-ahead, see below)
//   <state_dir>/<name>/        working directory
//
// Log capture: a watcher polls .out/.err every 50 ms and takes complete lines
// through executor/file_log_capture.h (write-ahead .cursor: no line is lost or
// duplicated across a crash). Recover() resumes a running replica's watcher that
// way, and for an exited replica does the same once, before it returns (its output
// written while no daemon watched).
//
// RestartReplica runs the replica's command again from the meta file, in the same
// working directory, with the same environment; the new run appends to .out/.err,
// and its watcher resumes from .cursor (which ends where the previous run's output
// ended), so the previous run's lines are not taken twice. A line the previous run
// left without "\n" was already taken whole, so nothing is joined.
//
// Ownership: the LogSink is borrowed and must outlive the executor. The
// destructor stops watching but leaves processes running (daemon restart).
// Thread-safety: every method may be called from any thread (executor.h).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/time.h"
#include "executor/background_work.h"
#include "executor/executor.h"
#include "executor/file_log_capture.h"
#include "logs/log_store.h"

namespace ty::executor {

class ProcessExecutor : public Executor {
 public:
  struct Options {
    std::string state_dir;              // Required; created if missing.
    logs::LogSink* log_sink = nullptr;  // Required; borrowed.
    const Clock* clock = nullptr;       // Required: only main wires the system's.
    // Host directory with one directory per bucket. Processes see it as it is:
    // ReplicaBucketRoot() is this path, so gs://B/x reaches them as <root>/B/x.
    std::string bucket_root;
  };

  // InvalidArgument without state_dir or sink; Internal if state_dir cannot be made.
  static Result<std::unique_ptr<ProcessExecutor>> Create(Options options);
  ~ProcessExecutor() override;

  void SetEventCallback(EventCallback callback) override;
  // InvalidArgument also when a replica has no `command` or a name unfit for a file.
  Status Launch(const AttemptSpec& attempt) override;
  Status Stop(const std::string& job_uid, int attempt, DurationMicros grace) override;
  // Must not be called from the event callback (it waits for the replica's
  // previous watcher, which may be the caller); FailedPrecondition if it is, and
  // for a replica launched before the meta file recorded its command.
  Status RestartReplica(const std::string& job_uid, int attempt, int pool, int index) override;
  Status Cleanup(const std::string& job_uid, int attempt) override;
  std::string ReplicaBucketRoot() const override { return options_.bucket_root; }
  // A replica whose wrapper vanished without writing its status (SIGKILL) is
  // reported with exit code 137 (signal 9); one with no pid file with -1.
  Result<std::vector<ObservedReplica>> Recover() override;

 private:
  struct Replica {  // What <name>.json and <name>.pid hold.
    std::string job_uid;
    int attempt = 0;
    int pool = 0;
    int index = 0;
    std::string name;
    std::string task;
    int pid = 0;
    unsigned long long start_ticks = 0;
  };

  explicit ProcessExecutor(Options options);

  void RunLaunch(const AttemptSpec& attempt);
  // `append`: keep .out/.err (a restart) instead of starting them empty.
  Status Spawn(const AttemptSpec& attempt, const ReplicaLaunch& r, bool append, Replica* out);
  // `resume`: continue from .cursor (after a restart).
  void StartWatcher(const Replica& r, bool resume);
  void RunWatcher(const Replica& r, bool resume);
  // The log capture of `r`'s .out/.err (executor/file_log_capture.h).
  internal::FileLogCapture CaptureOf(const Replica& r) const;
  // Replicas of `job_uid`/`attempt` found in state_dir ("" = every job).
  std::vector<Replica> ReplicasOnDisk(const std::string& job_uid, int attempt);
  void KillGroupAndWait(const Replica& r, int signal, DurationMicros timeout);
  void RemoveFiles(const std::string& name);
  std::string PathOf(const std::string& name, const char* suffix) const;

  Options options_;
  const Clock* clock_;

  // Serializes Recover() and RestartReplica(): two log catch-ups of one exited
  // replica at once would both append its missing lines, and a restart racing
  // either would be captured by both.
  std::mutex recover_mu_;
  // Launch and watcher threads (watchers keyed by replica name), the callback.
  internal::BackgroundWork work_;
};

}  // namespace ty::executor
