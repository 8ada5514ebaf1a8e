// Shared by the crash-point tests (crash_points_test.cc, study_crash_points_test.cc):
// a JobService on a manual loop with seeded ids that "crashes" at a chosen commit.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jobstore/forwarding_job_store.h"
#include "service/job_service.h"
#include "service/loop_core.h"

namespace ty::testing {

// What a crash-point test does at a record's write: go on, or "kill" the daemon there:
// before the write lands (what the decision did before its commit happened, the rest
// never will), after it and before its actions (LoopCore::Halt), or right after its
// actions started (LoopCore::HaltAfterThisTask).
enum class AtCommit { kContinue, kCrashBeforeWrite, kCrashBeforeActions, kCrashAfterActions };

// Every way a run can crash at a commit, and how a failure message says it.
inline constexpr AtCommit kCrashModes[] = {
    AtCommit::kCrashBeforeWrite, AtCommit::kCrashBeforeActions, AtCommit::kCrashAfterActions};
inline std::string CrashWhere(int k, int commits, AtCommit mode) {
  const char* when = mode == AtCommit::kCrashBeforeWrite     ? "before its write landed"
                     : mode == AtCommit::kCrashBeforeActions ? "before its actions"
                                                             : "after its actions";
  return "crash at commit " + std::to_string(k) + " of " + std::to_string(commits) + ", " + when;
}

// Where a run crashes: at commit `crash_at` (0 = never), in `mode`. The service
// counts its commits here and sets `crashed` when it reaches that one.
struct CrashPlan {
  int crash_at = 0;
  AtCommit mode = AtCommit::kContinue;
  int commits = 0;
  bool crashed = false;
  std::unique_ptr<jobstore::JobStore> store;  // The CrashingStore the service writes to.
};

// The store a crash-point test's service writes to (LevelDB's fault-injection way: the
// fault is in the environment, not in the code under test): it forwards everything to
// `inner`, counts each record written (created or updated) in `plan`, and at the
// planned one stops the service's loop as a dying daemon would. The service's code
// holds no test branch: a loop stopped during a write is what it handles anyway.
class CrashingStore : public jobstore::ForwardingJobStore {
 public:
  CrashingStore(jobstore::JobStore* inner, CrashPlan* plan)
      : ForwardingJobStore(inner), plan_(plan) {}
  void set_core(service::LoopCore* core) { core_ = core; }

  Status CommitJob(const model::Job& job, bool create,
                   const std::vector<model::JobEvent>& events) override {
    return Write([&] { return ForwardingJobStore::CommitJob(job, create, events); });
  }

 private:
  Status Write(const std::function<Status()>& write) {
    if (++plan_->commits != plan_->crash_at || core_ == nullptr) return write();
    plan_->crashed = true;
    switch (plan_->mode) {
      case AtCommit::kContinue:
        return write();
      case AtCommit::kCrashBeforeWrite:
        core_->Halt();
        return Aborted("the daemon died (test)");
      case AtCommit::kCrashBeforeActions: {
        Status s = write();
        core_->Halt();
        return s;
      }
      case AtCommit::kCrashAfterActions:
        core_->HaltAfterThisTask();
        return write();
    }
    return write();
  }

  CrashPlan* plan_;
  service::LoopCore* core_ = nullptr;
};

// Creates and starts the service; `plan` null: it never crashes (a recovered daemon).
inline std::unique_ptr<service::JobService> StartCrashableService(
    jobstore::JobStore* store, executor::Executor* executor, logs::LogStore* logs,
    const Clock* clock, service::JobServiceOptions o, CrashPlan* plan) {
  o.manual_loop_for_test = true;
  uint64_t seq = 0;
  o.random = [seq]() mutable { return ++seq; };
  if (plan != nullptr) {
    auto crashing = std::make_unique<CrashingStore>(store, plan);
    CrashingStore* at = crashing.get();
    auto also = o.register_controllers_for_test;
    o.register_controllers_for_test = [at, also](service::LoopCore* core) {
      at->set_core(core);
      if (also) also(core);
    };
    plan->store = std::move(crashing);
    store = plan->store.get();
  }
  auto svc = service::JobService::Create(store, executor, logs, clock, std::move(o));
  EXPECT_TRUE(svc.ok()) << svc.status().ToString();
  if (!svc.ok()) return nullptr;
  EXPECT_TRUE((*svc)->Start().ok());
  return std::move(svc).value();
}

}  // namespace ty::testing
