// Internal to service/: studies whose commit the store could not write (a full disk;
// service/commit_retry.h says which failures are retried), and what waits behind each.
//
// The study controller keeps the record it decided in memory; the failed commit is
// written again, with a growing delay, until it lands. Then the decision's actions that
// followed the commit are done and the inputs that came meanwhile are decided, in order
// (the `landed` callback). A restart meanwhile decides again from the stored record.
// A study's decision can hold two commits (its last lines, then its end), so the study
// machine's input cannot simply be decided again, as the job controller does.
//
// Loop thread only, but for health().
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "machines/study_machine.h"
#include "model/job.h"
#include "service/commit_retry.h"
#include "service/loop_core.h"

namespace ty::service {

struct StalledStudyCommit {
  model::Job record;                         // The commit that failed.
  std::vector<machines::StudyAction> after;  // The decision's actions after it.
  std::deque<machines::StudyInput> inputs;   // Arrived since, in order.
  int tries = 1;
};

class StudyStalls {
 public:
  // Writes a study's record again (the controller's commit).
  using Commit = std::function<Status(const std::string& uid, const model::Job& record)>;
  // The commit landed: what waited behind it is the caller's to do.
  using Landed = std::function<void(const std::string& uid, StalledStudyCommit done)>;

  StudyStalls(LoopCore* core, Commit commit, Landed landed);

  bool Holding(const std::string& uid) const { return stalled_.count(uid) > 0; }
  // After `record`'s commit failed with `why`: the study waits for the store (Holding;
  // the retries are scheduled), unless no retry helps (the decision is dropped, said in
  // the daemon's log) or the service is stopping.
  void Stall(const std::string& uid, const model::Job& record,
             std::vector<machines::StudyAction> after, const Status& why);
  // Keeps `inputs[from..]` behind the study's commit, in order. A metrics read is not
  // kept (the next poll reads the file again); past HeldInputs::kMaxPerJob inputs the
  // oldest goes, said in the daemon's log.
  void Keep(const std::string& uid, std::vector<machines::StudyInput>& inputs, size_t from = 0);
  // Any thread: studies whose decisions wait for a store that cannot write.
  StoreWriteHealth health() const { return writes_.health(); }

 private:
  void ScheduleRetry(const std::string& uid, int tries);
  void Retry(const std::string& uid);

  LoopCore* const core_;
  const Commit commit_;
  const Landed landed_;
  std::map<std::string, StalledStudyCommit> stalled_;
  StoreWriteWatch writes_;  // For /healthz and describe.
};

}  // namespace ty::service
