// Crash points of a tuning job (docs/style.md §6.11, as crash_points_test.cc does for one
// job): a 4-trial, 2-at-a-time ml v1 study on the SimExecutor, whose trials report
// their objective through the hypertune file, is run once without a crash, then once
// for every commit it makes (the study's records and its trial jobs' alike), "crashing"
// there: before the write landed (after the lines the decision logs first), and after
// it, before and after its actions. A new service recovers from the store, the executor
// and the files, and the study runs to its end. Every run must end like the crash-free
// one, with exactly its trials, no trial run more often, nothing left on the executor,
// and each trial's start, report and end logged exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "jobstore/memory_job_store.h"
#include "logs/log_store.h"
#include "service/crash_harness.h"
#include "service/job_service.h"
#include "service/sim_executor.h"
#include "wire/dialect.h"

namespace ty::testing {
namespace {

constexpr DurationMicros kSecond = 1'000'000;
constexpr DurationMicros kTick = 250'000;
constexpr int kTrials = 4;

// The memory store whose disk is full for `kFullFor` writes from write number
// `full_from` (0 = never): each refused as SQLite's SQLITE_FULL is, retries counted.
class FillingStore : public jobstore::MemoryJobStore {
 public:
  static constexpr int kFullFor = 3;
  explicit FillingStore(int full_from) : full_from_(full_from) {}
  Status CommitJob(const model::Job& job, bool create,
                   const std::vector<model::JobEvent>& events) override {
    return Full() ? Refuse() : MemoryJobStore::CommitJob(job, create, events);
  }
  int writes() const { return writes_; }
  int refused() const { return refused_; }

 private:
  bool Full() {
    ++writes_;
    return full_from_ > 0 && writes_ >= full_from_ && writes_ < full_from_ + kFullFor;
  }
  Status Refuse() {
    ++refused_;
    return ResourceExhausted("COMMIT: database or disk is full");
  }
  const int full_from_;
  std::atomic<int> writes_{0};
  std::atomic<int> refused_{0};
};

struct StudyOutcome {
  model::JobState state = model::JobState::kUnspecified;
  std::vector<std::string> trial_states;
  int trial_runs = 0;  // Starts of trial replicas, over every trial.
  size_t leftovers = 0;
  std::vector<std::string> log;  // The study's service lines.
  int commits = 0;
  bool crashed = false;
  int writes = 0;             // Record writes tried (creates and updates, jobs and the study's).
  int refused = 0;            // Of them, refused for a full disk.
  bool study_waited = false;  // /healthz's view named the study as waiting for the store.
  bool store_failing_at_end = false;
};

nlohmann::json StudyBody() {
  return {
      {"jobId", "tuned"},
      {"trainingInput",
       {{"scaleTier", "CUSTOM"},
        {"masterType", "n1-standard-4"},
        {"masterConfig", {{"imageUri", "img"}}},
        {"args", {"train"}},
        {"region", "us-central1"},
        {"hyperparameters",
         {{"goal", "MAXIMIZE"},
          {"hyperparameterMetricTag", "accuracy"},
          {"maxTrials", kTrials},
          {"maxParallelTrials", 2},
          {"params",
           {{{"parameterName", "x"}, {"type", "DOUBLE"}, {"minValue", 0}, {"maxValue", 1}}}}}}}}};
}

class StudyCrashPointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("ty-study-crash-" + std::to_string(::getpid()));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // `full_from`: the store refuses writes from that one on for a while (FillingStore).
  StudyOutcome Run(int crash_at, AtCommit mode, int full_from = 0) {
    std::filesystem::remove_all(dir_);
    ManualClock clock;
    FillingStore store(full_from);
    auto logs = std::move(logs::LogStore::Create((dir_ / "logs").string()).value());
    // Every trial's replica trains for two seconds and reports.
    SimExecutor executor(&clock, [](int, int, int) {
      return SimRun{2 * kSecond, 0, std::nullopt, false};
    });
    StudyOutcome out;
    CrashPlan plan{crash_at, mode};
    service::JobServiceOptions o;
    o.jobs.stop_grace = kSecond;
    o.jobs.trial_root = (dir_ / "trials").string();
    auto make_service = [&](bool with_crash) {
      return StartCrashableService(&store, &executor, logs.get(), &clock, o,
                                   with_crash ? &plan : nullptr);
    };
    std::unique_ptr<service::JobService> svc = make_service(true);
    svc->RunUntilIdleForTest();
    auto parsed = wire::ParseMlJob(StudyBody());
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    // A crash inside the submit itself fails the call, as a dead daemon's would.
    auto submitted = svc->Submit(model::Dialect::kMlV1, "p", "", std::move(parsed).value());
    EXPECT_TRUE(submitted.ok() || plan.crashed) << submitted.status().ToString();
    bool recovered = false;
    for (int step = 0; step < 2000; ++step) {
      svc->RunUntilIdleForTest();
      if (plan.crashed && !recovered) {
        svc.reset();  // The daemon died: its loop, queue and timers are gone.
        svc = make_service(false);
        recovered = true;
        svc->RunUntilIdleForTest();
      }
      Result<model::Job> study = store.FindMlJob("p", "tuned");
      if (study.ok() && svc->store_health().waiting.count(study->uid) > 0) out.study_waited = true;
      if (study.ok() && model::IsTerminal(study->state) && executor.leftovers() == 0) break;
      clock.Advance(kTick);
      executor.Tick();
    }
    out.commits = plan.commits;
    out.crashed = plan.crashed;
    out.writes = store.writes();
    out.store_failing_at_end = svc->store_health().failing;
    out.refused = store.refused();
    Result<model::Job> study = store.FindMlJob("p", "tuned");
    if (!study.ok()) return out;  // Crashed before the record existed: nothing to compare.
    out.state = study->state;
    for (const model::Trial& t : study->trials) {
      out.trial_states.push_back(model::TrialStateName(t.state));
    }
    for (const auto& [replica, n] : executor.starts()) out.trial_runs += n;
    out.leftovers = executor.leftovers();
    logs->Scan(study->uid,
               [&](const logs::LogEntry& e) {
                 if (e.task == "service") out.log.push_back(e.message);
                 return true;
               })
        .IgnoreError();
    return out;
  }

  // The outcome a recovered or delayed run must share with the clean one.
  static void ExpectEndsLike(const StudyOutcome& clean, const StudyOutcome& got,
                             const std::string& where) {
    EXPECT_EQ(model::JobStateName(got.state), model::JobStateName(clean.state)) << where;
    EXPECT_EQ(got.trial_states, clean.trial_states) << where;
    EXPECT_EQ(got.leftovers, 0u) << where;
    for (int t = 1; t <= kTrials; ++t) {
      const std::string id = "Trial " + std::to_string(t);
      EXPECT_EQ(CountPrefixed(got.log, id + " started "), 1) << where << ": " << id;
      EXPECT_EQ(CountPrefixed(got.log, id + " reported accuracy"), 1) << where << ": " << id;
      EXPECT_EQ(CountPrefixed(got.log, id + " succeeded"), 1) << where << ": " << id;
    }
    EXPECT_EQ(CountPrefixed(got.log, "Study SUCCEEDED"), 1) << where;
  }

  static int CountPrefixed(const std::vector<std::string>& lines, const std::string& prefix) {
    int n = 0;
    for (const std::string& l : lines) n += l.rfind(prefix, 0) == 0;
    return n;
  }

  std::filesystem::path dir_;
};

TEST_F(StudyCrashPointsTest, EveryCommitOfAStudyIsACrashPoint) {
  StudyOutcome clean = Run(0, AtCommit::kContinue);
  ASSERT_EQ(model::JobStateName(clean.state), model::JobStateName(model::JobState::kSucceeded));
  ASSERT_EQ(clean.trial_states, std::vector<std::string>(kTrials, "SUCCEEDED"));
  ASSERT_EQ(clean.trial_runs, kTrials);
  ASSERT_GT(clean.commits, 2 * kTrials);
  for (AtCommit mode : kCrashModes) {
    for (int k = 1; k <= clean.commits; ++k) {
      const std::string where = CrashWhere(k, clean.commits, mode);
      StudyOutcome got = Run(k, mode);
      EXPECT_TRUE(got.crashed) << where;
      if (k == 1 && got.state == model::JobState::kUnspecified) continue;  // Never recorded.
      ExpectEndsLike(clean, got, where);
      EXPECT_LE(got.trial_runs, clean.trial_runs) << where << ": a trial ran twice";
    }
  }
}

// Issue 31: a full disk at any write of a study (its record's, a trial job's create or
// update) holds what was decided until the store writes again; the study then goes on
// without a restart and ends as the run without a full disk did: every trial run once,
// each line once. Before, the study's decision was dropped (its trial jobs never
// created, or a trial failed with "its job could not be created: database or disk is
// full") and the study never ended.
TEST_F(StudyCrashPointsTest, AFullDiskAtAnyWriteOfAStudyOnlyDelaysIt) {
  StudyOutcome clean = Run(0, AtCommit::kContinue);
  ASSERT_EQ(model::JobStateName(clean.state), model::JobStateName(model::JobState::kSucceeded));
  ASSERT_EQ(clean.refused, 0);
  int study_waited = 0;
  for (int k = 2; k <= clean.writes; ++k) {  // Write 1 is the submit's: its caller hears 429.
    const std::string where =
        "disk full from write " + std::to_string(k) + " of " + std::to_string(clean.writes);
    StudyOutcome got = Run(0, AtCommit::kContinue, k);
    EXPECT_EQ(got.refused, FillingStore::kFullFor) << where << ": each refused write retried";
    ExpectEndsLike(clean, got, where);
    EXPECT_EQ(got.trial_runs, clean.trial_runs) << where << ": a trial ran twice or not at all";
    EXPECT_FALSE(got.store_failing_at_end) << where;
    study_waited += got.study_waited;
  }
  EXPECT_GT(study_waited, 0) << "the study's own writes were among those refused";
}

}  // namespace
}  // namespace ty::testing
