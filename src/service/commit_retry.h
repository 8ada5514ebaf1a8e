// What a failed commit of a job's input means, decided in one place (issue 31), and the
// inputs kept for a job until its commits land again.
//
// A commit that fails because the store cannot write (the disk full, the database busy,
// read-only or damaged, an I/O error) acted on nothing: the job machine's decision is
// dropped with it. The input that led to it (a replica's exit, a timer, an admission) is
// still true, so it is kept and committed again, in order with the job's later inputs,
// with a growing delay, until it lands; nothing needs a restart. A commit that fails for
// a reason a retry cannot change (the job is gone, a test's simulated death) is not kept.
//
// Pure apart from the caller's clock; not thread-safe (the loop thread owns it).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "common/status.h"
#include "common/time.h"
#include "machines/job_machine.h"

namespace ty::service {

enum class CommitFailure {
  kRetry,  // The store could not write: keep the input, commit it again later.
  kDrop,   // Nothing a retry changes: the input is not kept.
};

CommitFailure MeaningOf(const Status& failed_commit);

// What a submit's create commit answers its caller: a failure is never retried (the
// request fails, nothing was stored), and an ml v1 job id taken is the error gcloud
// shows for it, naming job.job_id.
Status SubmitOutcome(Status create_commit, model::Dialect dialect);

// The wait before retry number `tries` (1-based): 100 ms, doubling, at most 10 s.
DurationMicros RetryDelay(int tries);

// How the store's writes fare, for /healthz and /metrics.
struct StoreWriteHealth {
  bool failing = false;           // Some job's input waits for a commit that failed.
  std::string detail;             // The last failure's message.
  TimeMicros since = 0;           // When writes began failing (0 = they do not).
  size_t jobs_waiting = 0;        // Jobs with inputs held.
  std::set<std::string> waiting;  // Their uids (describe says why they do not move).
  uint64_t failed_writes = 0;     // Commits that failed since start, retries included.
};

// Both controllers' views as one (/healthz shows the store once).
StoreWriteHealth Combined(StoreWriteHealth a, const StoreWriteHealth& b);

// Which records wait for the store, and the daemon's log of it: one line when a record's
// writes start failing and one when they land, however long the disk stays full (a line
// per retry filled the daemon's own log on the very disk that was full). Thread-safe: the
// loop writes, API threads read.
class StoreWriteWatch {
 public:
  // `what` names the record in the log ("job", "study"); `first`: the first failure of
  // this record's stretch (a retry's failure counts, but is not logged again).
  void Failed(const std::string& what, const std::string& uid, const Status& why, TimeMicros now,
              bool first);
  void Landed(const std::string& what, const std::string& uid);
  StoreWriteHealth health() const;

 private:
  mutable std::mutex mu_;
  StoreWriteHealth health_;  // Guarded by mu_.
};

// Inputs whose commit failed, per job, in arrival order.
class HeldInputs {
 public:
  // At most this many inputs per job: a job's inputs are its replicas' exits, restarts
  // and timers, a handful each; past it the oldest goes (said by Add's result).
  static constexpr size_t kMaxPerJob = 4096;

  bool Holding(const std::string& uid) const { return held_.count(uid) > 0; }
  // Appends `input`; false when the job already held kMaxPerJob and its oldest was lost.
  bool Add(const std::string& uid, machines::JobInput input);
  // The job's oldest held input; nullopt when it holds none.
  std::optional<machines::JobInput> Front(const std::string& uid) const;
  // Drops the job's oldest input (it committed, or no retry helps); forgets the job
  // once it holds none.
  void Pop(const std::string& uid);
  // Counts one more failed try of the job's oldest input; returns the count.
  int CountTry(const std::string& uid);
  size_t jobs() const { return held_.size(); }

 private:
  struct Held {
    std::deque<machines::JobInput> inputs;
    int tries = 0;
  };
  std::map<std::string, Held> held_;
};

}  // namespace ty::service
