// Crash-point enumeration (docs/style.md §6.11). Each scenario runs once without a crash,
// then once for every commit k the service makes in it, "crashing" at the k-th
// commit — before its write landed, after it but before that commit's actions ran,
// and after they started — by dropping
// the in-memory loop while the store and the executor (the outside world) live on.
// A new service then recovers from them and the scenario runs to its end. Every run
// must end like the crash-free one (state and error), start no replica more often,
// and leave nothing on the executor. Deterministic: manual loop, ManualClock,
// SimExecutor, seeded ids.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "jobstore/memory_job_store.h"
#include "logs/log_store.h"
#include "service/crash_harness.h"
#include "service/job_logs.h"
#include "service/job_service.h"
#include "service/service_lines.h"
#include "service/sim_executor.h"
#include "wire/dialect.h"

namespace ty::testing {
namespace {

using model::JobState;

constexpr DurationMicros kSecond = 1'000'000;
constexpr DurationMicros kTick = 100'000;
constexpr DurationMicros kGrace = 10 * kSecond;

struct Scenario {
  std::string name;
  int workers = 0;         // Replicas in pool 1 besides the primary.
  std::string scheduling;  // JSON of jobSpec.scheduling; "" = none.
  SimScript script;
  DurationMicros launch_delay = 0;
  std::optional<DurationMicros> cancel_at;  // After submit.
  JobState want = JobState::kSucceeded;     // How the crash-free run ends.
  // How long no daemon runs after a crash; the replicas run on (and may end) meanwhile.
  DurationMicros down_for = 0;
};

void PrintTo(const Scenario& s, std::ostream* os) { *os << s.name; }

struct Outcome {
  JobState state = JobState::kUnspecified;
  std::optional<model::JobError> error;
  std::map<std::pair<int, int>, int> starts;
  size_t leftovers = 0;
  int removed_running = 0;
  int commits = 0;
  bool crashed = false;
  bool recorded = true;  // False: the daemon died before the job's first write landed.
  // How often the job's log says how it ended ("Job completed successfully.", ...).
  std::map<std::string, int> endings;
};

// The service lines that say how a job ended, counted.
std::map<std::string, int> EndingsSaid(logs::LogStore* logs, const std::string& uid) {
  std::map<std::string, int> out;
  for (const logs::LogEntry& e : service::ReadServiceLines(logs, uid)) {
    if (e.message == "Job completed successfully." || e.message == "Job failed." ||
        e.message == "Job was cancelled.") {
      ++out[e.message];
    }
  }
  return out;
}

SimRun Forever(bool ignores_sigterm = false) {
  return SimRun{std::nullopt, 0, std::nullopt, ignores_sigterm};
}
SimRun ExitAfter(DurationMicros d, int code, std::optional<int> signal = std::nullopt) {
  return SimRun{d, code, signal, false};
}

nlohmann::json Body(const Scenario& s) {
  nlohmann::json pool = {{"machineSpec", {{"machineType", "n1-standard-4"}}},
                         {"replicaCount", "1"},
                         {"containerSpec", {{"imageUri", "img"}, {"command", {"train"}}}}};
  nlohmann::json body = {{"displayName", s.name}, {"jobSpec", {{"workerPoolSpecs", {pool}}}}};
  if (s.workers > 0) {
    pool["replicaCount"] = std::to_string(s.workers);
    body["jobSpec"]["workerPoolSpecs"].push_back(pool);
  }
  if (!s.scheduling.empty()) body["jobSpec"]["scheduling"] = nlohmann::json::parse(s.scheduling);
  return body;
}

class CrashPointsTest : public ::testing::TestWithParam<Scenario> {
 protected:
  void SetUp() override {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("ty-crash-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs the scenario, crashing after commit `crash_at` (0 = never) in `mode`.
  Outcome Run(const Scenario& s, int crash_at, AtCommit mode) {
    std::filesystem::remove_all(dir_);
    ManualClock clock;
    jobstore::MemoryJobStore store;
    auto logs = std::move(logs::LogStore::Create((dir_ / "logs").string()).value());
    SimExecutor executor(&clock, s.script, s.launch_delay);
    Outcome out;
    CrashPlan plan{crash_at, mode};
    service::JobServiceOptions o;
    o.jobs.stop_grace = kGrace;
    auto make_service = [&](bool with_crash) {
      return StartCrashableService(&store, &executor, logs.get(), &clock, o,
                                   with_crash ? &plan : nullptr);
    };
    std::unique_ptr<service::JobService> svc = make_service(true);
    svc->RunUntilIdleForTest();
    auto parsed = wire::ParseVertexCustomJob(Body(s));
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    auto job = svc->Submit(model::Dialect::kVertex, "p", "l", std::move(parsed).value());
    if (!job.ok() && plan.crashed && mode == AtCommit::kCrashBeforeWrite) {
      // The submit failed, as a dead daemon's would, and left nothing behind.
      EXPECT_TRUE(store.ListLiveJobs()->empty());
      out.crashed = true;
      out.recorded = false;
      return out;
    }
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    const std::string uid = job->uid;
    const TimeMicros submitted = clock.Now();
    bool recovered = false, cancelled = false;
    for (int step = 0; step < 5000; ++step) {
      svc->RunUntilIdleForTest();
      if (plan.crashed && !recovered) {
        svc.reset();  // The daemon died: its loop, queue and timers are gone.
        executor.DaemonDied();
        for (DurationMicros t = 0; t < s.down_for; t += kTick) {
          clock.Advance(kTick);
          executor.Tick();
        }
        svc = make_service(false);
        recovered = true;
        svc->RunUntilIdleForTest();
      }
      model::Job cur = *store.GetJob(uid);
      if (model::IsTerminal(cur.state) && executor.leftovers() == 0) break;
      if (s.cancel_at && !cancelled && clock.Now() >= submitted + *s.cancel_at) {
        // A daemon that dies before the cancel is recorded fails the call; the client
        // sends it again to the restarted one.
        Status c = svc->Cancel({model::Dialect::kVertex, "p", "l", uid});
        cancelled = c.ok();
        EXPECT_TRUE(c.ok() || plan.crashed) << c.ToString();
        continue;
      }
      clock.Advance(kTick);
      executor.Tick();
    }
    model::Job final_job = *store.GetJob(uid);
    out.state = final_job.state;
    out.error = final_job.error;
    out.starts = executor.starts();
    out.leftovers = executor.leftovers();
    out.removed_running = executor.removed_running();
    out.commits = plan.commits;
    out.crashed = plan.crashed;
    out.endings = EndingsSaid(logs.get(), uid);
    return out;
  }

  std::filesystem::path dir_;
};

void ExpectSameEnd(const Outcome& want, const Outcome& got, const std::string& where) {
  EXPECT_EQ(model::JobStateName(got.state), model::JobStateName(want.state)) << where;
  ASSERT_EQ(got.error.has_value(), want.error.has_value()) << where;
  if (want.error) {
    EXPECT_EQ(got.error->code, want.error->code) << where;
    EXPECT_EQ(got.error->message, want.error->message) << where;
  }
  for (const auto& [replica, n] : got.starts) {
    int base = want.starts.count(replica) ? want.starts.at(replica) : 0;
    EXPECT_LE(n, base) << where << ": replica " << replica.first << "-" << replica.second
                       << " started more often than without a crash";
  }
  EXPECT_EQ(got.leftovers, 0u) << where << ": replicas left on the executor";
  // The line that says how the job ended is in its log once, whenever the daemon died:
  // it is committed with the record that ends the job (model/outbox.h).
  EXPECT_EQ(got.endings, want.endings) << where;
  EXPECT_EQ(got.removed_running, 0) << where << ": a running replica was removed without a stop";
}

TEST_P(CrashPointsTest, EveryCommitIsACrashPoint) {
  const Scenario& s = GetParam();
  Outcome clean = Run(s, 0, AtCommit::kContinue);
  ASSERT_EQ(model::JobStateName(clean.state), model::JobStateName(s.want));
  EXPECT_EQ(clean.leftovers, 0u);
  ASSERT_EQ(clean.endings.size(), 1u) << "one line says how the job ended";
  EXPECT_EQ(clean.endings.begin()->second, 1);
  ASSERT_GT(clean.commits, 2);
  for (AtCommit mode : kCrashModes) {
    for (int k = 1; k <= clean.commits; ++k) {
      std::string where = s.name + ", " + CrashWhere(k, clean.commits, mode);
      Outcome got = Run(s, k, mode);
      EXPECT_TRUE(got.crashed) << where;
      if (!got.recorded) continue;
      ExpectSameEnd(clean, got, where);
    }
  }
}

// Also counts commits: the crash-free outcome each scenario must reproduce.
std::vector<Scenario> Scenarios() {
  std::vector<Scenario> out;
  out.push_back(
      {"SingleReplicaSucceeds", 0, "", [](int, int, int) { return ExitAfter(kSecond, 0); }});
  out.push_back({"SingleReplicaFails", 0, "", [](int, int, int) { return ExitAfter(kSecond, 3); },
                 0, std::nullopt, JobState::kFailed});
  out.push_back({"PrimarySucceedsWhilePeersIgnoreSigterm", 2, "", [](int pool, int, int) {
                   return pool == 0 ? ExitAfter(2 * kSecond, 0) : Forever(/*ignores_sigterm=*/true);
                 }});
  out.push_back({"WorkerFails", 2, "",
                 [](int pool, int index, int) {
                   return pool == 1 && index == 1 ? ExitAfter(kSecond, 1) : Forever(true);
                 },
                 0, std::nullopt, JobState::kFailed});
  out.push_back({"SignalDeathRestartsInPlace", 1, "", [](int pool, int, int start) {
                   if (pool == 0) return ExitAfter(3 * kSecond, 0);
                   return start == 1 ? ExitAfter(kSecond, 137, 9) : Forever();
                 }});
  out.push_back(
      {"SignalDeathWithRetriesDisabledFails", 1, R"({"disableRetries": true})",
       [](int pool, int, int) { return pool == 1 ? ExitAfter(kSecond, 139, 11) : Forever(true); },
       0, std::nullopt, JobState::kFailed});
  out.push_back(
      {"WholeJobRetry", 1, R"({"restartJobOnWorkerRestart": true})", [](int pool, int, int start) {
         if (pool == 1) return start == 1 ? ExitAfter(kSecond, 137, 9) : Forever(true);
         return start == 1 ? Forever() : ExitAfter(2 * kSecond, 0);
       }});
  Scenario preparing{
      "CancelWhilePreparing", 1, "", [](int, int, int) { return Forever(); }, 5 * kSecond, kSecond,
      JobState::kCancelled};
  out.push_back(preparing);
  Scenario running{
      "CancelWhileRunning", 1, "", [](int, int, int) { return Forever(true); }, 0, 2 * kSecond,
      JobState::kCancelled};
  out.push_back(running);
  Scenario stopping{
      "CancelWhileStopping",
      1,
      "",
      [](int pool, int, int) { return pool == 0 ? ExitAfter(kSecond, 0) : Forever(true); },
      0,
      3 * kSecond};
  out.push_back(stopping);
  Scenario max_wait{"MaxWaitExpires",
                    0,
                    R"({"maxWaitDuration": "2s"})",
                    [](int, int, int) { return Forever(); },
                    10 * kSecond,
                    std::nullopt,
                    JobState::kCancelled};
  out.push_back(max_wait);
  out.push_back({"TimeoutExpires", 1, R"({"timeout": "3s"})",
                 [](int, int, int) { return Forever(true); }, 0, std::nullopt,
                 JobState::kCancelled});
  // Five deaths restart in place, the sixth retries the job; attempt 2 succeeds.
  out.push_back({"RestartsInPlaceThenWholeJobRetry", 0, "", [](int, int, int start) {
                   return start <= 6 ? ExitAfter(kSecond, 137, 9) : ExitAfter(kSecond, 0);
                 }});
  // Issue 31 item 4: the daemon down for a while after each commit; replicas that ended
  // meanwhile are taken over as they ended (never launched again: each trainer runs
  // exactly as often as without the crash, which ExpectSameEnd checks).
  Scenario single_down{"SingleReplicaEndsWhileTheDaemonIsDown", 0, "",
                       [](int, int, int) { return ExitAfter(kSecond, 0); }};
  single_down.down_for = 3 * kSecond;
  out.push_back(single_down);
  Scenario gang_down{"GangEndsWhileTheDaemonIsDown", 2, "", [](int pool, int, int) {
                       return pool == 0 ? ExitAfter(kSecond, 0) : ExitAfter(kSecond / 2, 0);
                     }};
  gang_down.down_for = 3 * kSecond;
  out.push_back(gang_down);
  Scenario fail_down{"WorkerFailsWhileTheDaemonIsDown",
                     1,
                     "",
                     [](int pool, int, int) {
                       return pool == 1 ? ExitAfter(kSecond, 2) : ExitAfter(5 * kSecond, 0);
                     },
                     0,
                     std::nullopt,
                     JobState::kFailed};
  fail_down.down_for = 3 * kSecond;
  out.push_back(fail_down);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, CrashPointsTest, ::testing::ValuesIn(Scenarios()),
                         [](const ::testing::TestParamInfo<Scenario>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace ty::testing
