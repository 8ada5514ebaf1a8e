// Gang admission: one pure pass over a snapshot (capacity, what runs, what waits)
// that says which queued jobs start now and where, which spot jobs to preempt, and
// why every other job waits.
//
// Rules (issue 9):
//  - Gang: all replicas of a job are placed together or the job waits.
//  - Order: priority (higher first), then fair share between projects (the project
//    holding the fewest vCPUs, counting the jobs ordered ahead of it, goes next),
//    then submit time.
//  - Quotas: a job that would take its project past `jobs`, `cpus` or `gpus` waits
//    ("project quota: 8 of 8 vCPUs in use") without holding anyone else back.
//  - Backfill with one reservation (EASY backfill, as Slurm): the first job that
//    does not fit (the head) gets a reservation at the earliest time the running
//    jobs' timeouts guarantee room for it. A later job starts now only if it ends
//    (by its timeout) before that time, or fits in what the head will not need then;
//    so backfilling never delays the head.
//  - Spot: when the head is not spot and does not fit, running spot jobs are
//    preempted to make room: the lowest-priority victims first, as few as will do.
//    While preemptions are under way nothing more is preempted for it.
//
// Pure: no I/O, no clock (now is an argument); thread-safe.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "scheduler/capacity.h"

namespace ty::scheduler {

struct WaitInfo {
  int position = 0;    // 1-based, in admission order, among jobs still waiting.
  std::string reason;  // "waiting for 2 GPUs of NVIDIA_TESLA_T4: 1 free"
};

// The queued jobs a pass did not admit, in admission order (entry i has position
// i + 1). A list, not a map: a pass over 100,000 queued jobs spent a fifth of its
// time inserting them into a hash map, which the service then copied into its own;
// it now builds that one map itself. at() and count() scan: for tests and small lists.
class WaitList {
 public:
  struct Entry {
    std::string uid;
    WaitInfo info;
  };
  void reserve(size_t n) { entries_.reserve(n); }
  WaitInfo& Add(const std::string& uid) { return entries_.emplace_back(Entry{uid, {}}).info; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }
  std::vector<Entry>::iterator begin() { return entries_.begin(); }
  std::vector<Entry>::iterator end() { return entries_.end(); }
  const WaitInfo& at(const std::string& uid) const;  // std::out_of_range when absent.
  size_t count(const std::string& uid) const;

 private:
  std::vector<Entry> entries_;
};

struct Admitted {
  std::string uid;
  std::vector<ReplicaPlacement> placement;  // Same order as JobDemand::replicas.
};

struct AdmissionDecisions {
  std::vector<Admitted> admit;       // In admission order.
  std::vector<std::string> preempt;  // Spot jobs to stop (uids).
  WaitList waiting;                  // Every queued job not admitted.
  // The head's reservation, when one was made: the latest it will start, as the
  // running jobs' timeouts guarantee (backfill never moves this later).
  std::string reserved_uid;
  TimeMicros reserved_start = 0;
};

AdmissionDecisions Admit(const Capacity& capacity, const std::vector<Allocation>& running,
                         const std::vector<JobDemand>& queued, TimeMicros now);

// The demand as admission treats it: without `strict`, a gang bigger than the
// biggest node (in CPUs or memory) is scaled down to exactly fill it.
JobDemand EffectiveDemand(const JobDemand& job, const Capacity& capacity);

// At submit: InvalidArgument naming the field when the job could never be admitted
// (needs GPUs no node has, is bigger than every node with `strict`, or than its
// project's quota), with the biggest node's size.
Status CheckCanEverFit(const JobDemand& job, const Capacity& capacity);

}  // namespace ty::scheduler
