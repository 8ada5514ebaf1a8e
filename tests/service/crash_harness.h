// Shared by the crash-point tests (crash_points_test.cc, study_crash_points_test.cc):
// a JobService on a manual loop with seeded ids that "crashes" at a chosen commit.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "service/job_service.h"

namespace ty::testing {

// Every way a run can crash at a commit, and how a failure message says it.
inline constexpr service::AtCommit kCrashModes[] = {service::AtCommit::kCrashBeforeWrite,
                                                    service::AtCommit::kCrashBeforeActions,
                                                    service::AtCommit::kCrashAfterActions};
inline std::string CrashWhere(int k, int commits, service::AtCommit mode) {
  const char* when = mode == service::AtCommit::kCrashBeforeWrite     ? "before its write landed"
                     : mode == service::AtCommit::kCrashBeforeActions ? "before its actions"
                                                                      : "after its actions";
  return "crash at commit " + std::to_string(k) + " of " + std::to_string(commits) + ", " + when;
}

// Where a run crashes: at commit `crash_at` (0 = never), in `mode`. The service
// counts its commits here and sets `crashed` when it reaches that one.
struct CrashPlan {
  int crash_at = 0;
  service::AtCommit mode = service::AtCommit::kContinue;
  int commits = 0;
  bool crashed = false;
};

// Creates and starts the service; `plan` null: it never crashes (a recovered daemon).
inline std::unique_ptr<service::JobService> StartCrashableService(
    jobstore::JobStore* store, executor::Executor* executor, logs::LogStore* logs,
    const Clock* clock, service::JobServiceOptions o, CrashPlan* plan) {
  o.manual_loop_for_test = true;
  uint64_t seq = 0;
  o.random = [seq]() mutable { return ++seq; };
  if (plan != nullptr) {
    o.at_commit_for_test = [plan] {
      if (++plan->commits != plan->crash_at) return service::AtCommit::kContinue;
      plan->crashed = true;
      return plan->mode;
    };
  }
  auto svc = service::JobService::Create(store, executor, logs, clock, std::move(o));
  EXPECT_TRUE(svc.ok()) << svc.status().ToString();
  if (!svc.ok()) return nullptr;
  EXPECT_TRUE((*svc)->Start().ok());
  return std::move(svc).value();
}

}  // namespace ty::testing
