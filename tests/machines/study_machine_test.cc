// Table tests of the pure study machine (machines/study_machine.h): every phase,
// driven there through the machine itself, against every input, then the rules that
// decide how a study goes on and ends.
#include "machines/study_machine.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fakes/study_params.h"
#include "machines/job_machine.h"

namespace ty::machines {
namespace {

constexpr TimeMicros kNow = 1'000'000'000;

// A cloudml-hypertune line reporting `value` for the default tag at `step`.
std::string Report(double value, int step) {
  return R"({"global_step": ")" + std::to_string(step) +
         R"(", "timestamp": 1.0, "training/hptuning/metric": ")" + std::to_string(value) +
         R"(", "trial": "0"})" + "\n";
}

StudyRecord NewStudy(int max_trials = 6, int parallel = 3, int max_failed = 2) {
  StudyRecord r;
  r.job.uid = "100";
  r.job.project = "p";
  r.job.state = model::JobState::kQueued;
  auto spec = std::make_shared<model::StudySpec>();
  spec->params = {testing::Double("lr", 0.001, 0.1)};
  spec->max_trials = max_trials;
  spec->parallel_trials = parallel;
  spec->max_failed_trials = max_failed;
  r.spec = spec;
  return r;
}

model::Assignment Point(double lr) {
  model::ParamValue v;
  v.number = lr;
  return {{"lr", v}};
}

StudyInput Input(StudyInputKind kind, int64_t trial_id = 0) {
  StudyInput in;
  in.kind = kind;
  in.trial_id = trial_id;
  return in;
}

StudyInput Suggested(int n, int asked) {
  StudyInput in = Input(StudyInputKind::kSuggested);
  static int next_uid = 1000;
  for (int i = 0; i < n; ++i) {
    in.suggestions.push_back(Point(0.01 * (i + 1)));
    in.job_uids.push_back(std::to_string(next_uid++));
  }
  in.asked = asked;
  return in;
}

StudyInput Ended(int64_t trial_id, model::JobState state, const std::string& metrics = "") {
  StudyInput in = Input(StudyInputKind::kTrialJobEnded, trial_id);
  in.job_state = state;
  if (state == model::JobState::kFailed) in.job_error = model::JobError{3, "exit 1"};
  in.metrics_text = metrics;
  return in;
}

StudyDecision Decide(const StudyRecord& r, const StudyInput& in) {
  return DecideStudy(r, in, StudyPolicy{}, kNow);
}

StudyRecord Apply(const StudyRecord& r, const StudyInput& in) { return Decide(r, in).record; }

std::string Render(const StudyAction& a) {
  switch (a.kind) {
    case StudyActionKind::kCommit: {  // With the number of lines it carries, if any.
      const std::string verb = a.create ? "create" : "commit";
      const size_t lines = a.record.outbox.lines.size();
      return lines == 0 ? verb : verb + "[" + std::to_string(lines) + "]";
    }
    case StudyActionKind::kSuggest:
      return "suggest(" + std::to_string(a.count) + ")";
    case StudyActionKind::kSubmitTrial:
      return "submit(" + std::to_string(a.trial_id) + ")";
    case StudyActionKind::kStopTrial:
      return "stop(" + std::to_string(a.trial_id) + ")";
    case StudyActionKind::kObserve:
      return "observe(" + std::to_string(a.trial_id) + ")";
    case StudyActionKind::kForget:
      return "forget";
  }
  return "?";
}

std::string Render(const std::vector<StudyAction>& actions) {
  std::string out;
  for (const StudyAction& a : actions) out += (out.empty() ? "" : " ") + Render(a);
  return out;
}

std::vector<StudyAction> Of(const std::vector<StudyAction>& actions, StudyActionKind kind) {
  std::vector<StudyAction> out;
  for (const StudyAction& a : actions) {
    if (a.kind == kind) out.push_back(a);
  }
  return out;
}

// Each phase reached through the machine. Max 6 trials, 3 at a time, 2 failures fail it.
StudyRecord Running() {  // Trials 1-3 active.
  StudyRecord r = Apply(NewStudy(), Input(StudyInputKind::kTick));
  return Apply(r, Suggested(3, 3));
}

StudyRecord Failing() {  // Trials 1 and 2 failed, 3 active.
  StudyRecord r = Apply(Running(), Ended(1, model::JobState::kFailed));
  return Apply(r, Ended(2, model::JobState::kFailed));
}

StudyRecord Cancelling() { return Apply(Running(), Input(StudyInputKind::kCancel)); }

StudyRecord Succeeded() {
  StudyRecord r = Running();
  for (int id = 1; id <= 3; ++id) {
    r = Apply(r, Ended(id, model::JobState::kSucceeded, Report(0.5, 10)));
  }
  r = Apply(r, Suggested(3, 3));
  for (int id = 4; id <= 6; ++id) {
    r = Apply(r, Ended(id, model::JobState::kSucceeded, Report(0.6, 10)));
  }
  return r;
}

StudyRecord Failed() { return Apply(Failing(), Ended(3, model::JobState::kCancelled)); }

StudyRecord Cancelled() { return Apply(NewStudy(), Input(StudyInputKind::kCancel)); }

StudyRecord InPhase(StudyPhase phase) {
  switch (phase) {
    case StudyPhase::kQueued:
      return NewStudy();
    case StudyPhase::kRunning:
      return Running();
    case StudyPhase::kFailing:
      return Failing();
    case StudyPhase::kCancelling:
      return Cancelling();
    case StudyPhase::kSucceeded:
      return Succeeded();
    case StudyPhase::kFailed:
      return Failed();
    case StudyPhase::kCancelled:
      return Cancelled();
  }
  return NewStudy();
}

// The natural instance of each input for a study in some phase: trial inputs concern
// the first active trial (trial 1 when none is active).
StudyInput SampleInput(StudyInputKind kind, const StudyRecord& r) {
  int64_t trial = 1;
  for (const model::Trial& t : r.job.trials) {
    if (!model::IsTrialDone(t.state)) {
      trial = t.id;
      break;
    }
  }
  switch (kind) {
    case StudyInputKind::kSuggested:
      return Suggested(1, 1);
    case StudyInputKind::kTrialJobEnded:
      return Ended(trial, model::JobState::kSucceeded, Report(0.7, 5));
    case StudyInputKind::kTrialJobRefused: {
      StudyInput in = Input(kind, trial);
      in.message = "the id is taken";
      return in;
    }
    case StudyInputKind::kMetricsRead: {
      StudyInput in = Input(kind, trial);
      in.metrics_text = Report(0.7, 5);
      return in;
    }
    case StudyInputKind::kTrialJobCreated: {  // A job the study does not run (any more).
      StudyInput in = Input(kind, trial);
      in.job_uid = "999";
      in.job_state = model::JobState::kQueued;
      return in;
    }
    default:
      return Input(kind, trial);
  }
}

struct Row {
  std::string phase, input, next_phase, actions;
};

// Every phase x every input. Reading a row: in that phase, that input leaves the
// study in `next_phase` with these actions, in order.
const std::vector<Row>& Table() {
  static const std::vector<Row> rows = {
      // A queued study asks for its first trials; a cancel ends it at once. Each commit
      // carries the lines said since the one before ("commit[2]": two lines); the one
      // that ends the study carries none (its last lines are committed just before).
      {"QUEUED", "TICK", "QUEUED", "suggest(3)"},
      {"QUEUED", "CANCEL", "CANCELLED", "commit[1] commit[1] commit forget"},
      {"QUEUED", "SUGGESTED", "RUNNING", "commit[1] submit(1) suggest(2)"},
      {"QUEUED", "TRIAL_JOB_ENDED", "QUEUED", ""},
      {"QUEUED", "TRIAL_JOB_MISSING", "QUEUED", ""},
      {"QUEUED", "TRIAL_JOB_REFUSED", "QUEUED", ""},
      {"QUEUED", "METRICS_READ", "QUEUED", ""},
      {"QUEUED", "SUBMITTED", "QUEUED", "create"},
      {"QUEUED", "TRIAL_JOB_CREATED", "QUEUED", "stop(1)"},
      {"QUEUED", "SET_ASIDE", "FAILED", "commit[1] commit forget"},
      // Running: trials 1-3 active, the budget not spent.
      {"RUNNING", "TICK", "RUNNING", ""},
      {"RUNNING", "CANCEL", "CANCELLING", "commit[1] commit stop(1) stop(2) stop(3)"},
      {"RUNNING", "SUGGESTED", "RUNNING", "commit[1] submit(4)"},
      {"RUNNING", "TRIAL_JOB_ENDED", "RUNNING", "observe(1) commit[2] suggest(1)"},
      {"RUNNING", "TRIAL_JOB_MISSING", "RUNNING", "submit(1)"},
      {"RUNNING", "TRIAL_JOB_REFUSED", "RUNNING", "observe(1) commit[1] suggest(1)"},
      {"RUNNING", "METRICS_READ", "RUNNING", "commit[1]"},
      {"RUNNING", "SUBMITTED", "RUNNING", ""},
      {"RUNNING", "TRIAL_JOB_CREATED", "RUNNING", "stop(1)"},
      {"RUNNING", "SET_ASIDE", "FAILED", "commit[1] commit forget"},
      // Failing: two trials failed, trial 3 is being stopped (STOPPING: stopped once).
      {"FAILING", "TICK", "FAILING", ""},
      {"FAILING", "CANCEL", "CANCELLING", "commit[1]"},
      {"FAILING", "SUGGESTED", "FAILING", ""},
      {"FAILING", "TRIAL_JOB_ENDED", "FAILED", "observe(3) commit[2] commit[1] commit forget"},
      {"FAILING", "TRIAL_JOB_MISSING", "FAILED", "commit commit[1] commit forget"},
      {"FAILING", "TRIAL_JOB_REFUSED", "FAILED", "observe(3) commit[1] commit[1] commit forget"},
      {"FAILING", "METRICS_READ", "FAILING", "commit[1]"},
      {"FAILING", "SUBMITTED", "FAILING", ""},
      {"FAILING", "TRIAL_JOB_CREATED", "FAILING", "stop(3)"},
      {"FAILING", "SET_ASIDE", "FAILED", "commit[1] commit forget"},
      // Cancelling: trials 1-3 are being stopped, each once (STOPPING).
      {"CANCELLING", "TICK", "CANCELLING", ""},
      {"CANCELLING", "CANCEL", "CANCELLING", ""},
      {"CANCELLING", "SUGGESTED", "CANCELLING", ""},
      {"CANCELLING", "TRIAL_JOB_ENDED", "CANCELLING", "observe(1) commit[2]"},
      {"CANCELLING", "TRIAL_JOB_MISSING", "CANCELLING", "commit"},
      {"CANCELLING", "TRIAL_JOB_REFUSED", "CANCELLING", "observe(1) commit[1]"},
      {"CANCELLING", "METRICS_READ", "CANCELLING", "commit[1]"},
      {"CANCELLING", "SUBMITTED", "CANCELLING", ""},
      {"CANCELLING", "TRIAL_JOB_CREATED", "CANCELLING", "stop(1)"},
      {"CANCELLING", "SET_ASIDE", "FAILED", "commit[1] commit forget"},
  };
  return rows;
}

TEST(StudyMachineTest, EveryPhaseMeetsEveryInput) {
  std::map<std::pair<std::string, std::string>, const Row*> rows;
  for (const Row& r : Table()) rows[{r.phase, r.input}] = &r;
  std::set<std::string> terminal = {"SUCCEEDED", "FAILED", "CANCELLED"};
  int checked = 0;
  for (int p = 0; StudyPhaseName(static_cast<StudyPhase>(p)) != nullptr; ++p) {
    const StudyPhase phase = static_cast<StudyPhase>(p);
    const std::string phase_name = StudyPhaseName(phase);
    const StudyRecord start = InPhase(phase);
    ASSERT_EQ(StudyPhaseName(PhaseOf(start)), phase_name) << "the setup missed its phase";
    for (int i = 0; StudyInputKindName(static_cast<StudyInputKind>(i)) != nullptr; ++i) {
      const StudyInputKind kind = static_cast<StudyInputKind>(i);
      const std::string where = phase_name + " x " + StudyInputKindName(kind);
      StudyDecision d = Decide(start, SampleInput(kind, start));
      ++checked;
      if (terminal.count(phase_name)) {  // A finished study ignores everything.
        EXPECT_EQ(Render(d.actions), "") << where;
        EXPECT_EQ(StudyPhaseName(PhaseOf(d.record)), phase_name) << where;
        continue;
      }
      auto row = rows.find({phase_name, StudyInputKindName(kind)});
      ASSERT_NE(row, rows.end()) << "no row for " << where;
      EXPECT_EQ(Render(d.actions), row->second->actions) << where;
      EXPECT_EQ(StudyPhaseName(PhaseOf(d.record)), row->second->next_phase) << where;
    }
  }
  EXPECT_EQ(checked, 7 * 10);
}

TEST(StudyMachineTest, TrialsAreRecordedBeforeTheirJobsAreSubmitted) {
  StudyDecision d = Decide(Apply(NewStudy(), Input(StudyInputKind::kTick)), Suggested(2, 3));
  ASSERT_EQ(d.record.job.trials.size(), 2u);
  EXPECT_EQ(d.record.job.trials[0].job_uid.empty(), false);
  EXPECT_EQ(d.record.job.state, model::JobState::kRunning);
  EXPECT_EQ(d.record.job.start_time, kNow);
  // Fewer points than asked: the space is exhausted, and that is stored.
  EXPECT_TRUE(d.record.job.study_progress.exhausted);
  EXPECT_EQ(Render(d.actions), "commit[2] submit(1) submit(2)");
  // Each trial's start is said in the commit that records it (model/outbox.h).
  ASSERT_EQ(d.actions[0].record.outbox.lines.size(), 2u);
  EXPECT_EQ(d.actions[0].record.outbox.lines[0].message.rfind("Trial 1 started (job ", 0), 0u)
      << d.actions[0].record.outbox.lines[0].message;
}

// A submission is created in one commit; a study resuming another's says so in it.
TEST(StudyMachineTest, ASubmissionSaysWhichStudyItResumes) {
  StudyRecord fresh = NewStudy();
  StudyInput submitted = Input(StudyInputKind::kSubmitted);
  submitted.prior_trials = 4;
  StudyDecision plain = Decide(fresh, submitted);
  EXPECT_EQ(Render(plain.actions), "create");

  auto spec = std::make_shared<model::StudySpec>(*fresh.spec);
  spec->resume_previous_job_id = "first";
  fresh.spec = spec;
  StudyDecision resumed = Decide(fresh, submitted);
  ASSERT_EQ(Render(resumed.actions), "create[1]");
  EXPECT_EQ(resumed.actions[0].record.outbox.lines[0].message,
            "Resuming the study of job first: its 4 finished trials inform the suggestions.");
}

TEST(StudyMachineTest, OneQuestionToTheTunerAtATime) {
  StudyRecord r = Apply(NewStudy(), Input(StudyInputKind::kTick));
  EXPECT_TRUE(r.suggesting);
  EXPECT_EQ(Render(Decide(r, Input(StudyInputKind::kTick)).actions), "");
  // A restarted daemon has no question in flight: it asks again.
  r.suggesting = false;
  EXPECT_EQ(Render(Decide(r, Input(StudyInputKind::kTick)).actions), "suggest(3)");
}

TEST(StudyMachineTest, AFailingStudyIsStoredAndFinishesFailingAfterARestart) {
  StudyRecord failing = Failing();
  EXPECT_NE(failing.job.study_progress.failing.find("2 of 3 trials failed (maxFailedTrials 2)"),
            std::string::npos)
      << failing.job.study_progress.failing;
  // What a restarted daemon has: the stored record, no question in flight.
  StudyRecord restarted = failing;
  restarted.suggesting = false;
  // Trial 3's stop was decided and stored (STOPPING): the machine does not decide it
  // again; the restarted controller sends it again (StudyController::ReconcileTrials).
  EXPECT_EQ(restarted.job.trials[2].state, model::TrialState::kStopping);
  StudyDecision tick = Decide(restarted, Input(StudyInputKind::kTick));
  EXPECT_EQ(Render(tick.actions), "");
  StudyDecision end = Decide(restarted, Ended(3, model::JobState::kCancelled));
  EXPECT_EQ(end.record.job.state, model::JobState::kFailed);
  ASSERT_TRUE(end.record.job.error.has_value());
  EXPECT_EQ(end.record.job.error->code, machines::kErrorCodeInternal);
  EXPECT_EQ(end.record.job.error->message, failing.job.study_progress.failing);
  EXPECT_EQ(end.record.job.trials[2].state, model::TrialState::kCancelled);
}

TEST(StudyMachineTest, TheFirstTrialFailingEndsAStudyWithoutMaxFailedTrials) {
  StudyRecord r = Apply(Apply(NewStudy(6, 2, 0), Input(StudyInputKind::kTick)), Suggested(2, 2));
  StudyDecision d = Decide(r, Ended(1, model::JobState::kFailed));
  EXPECT_EQ(PhaseOf(d.record), StudyPhase::kFailing);
  EXPECT_EQ(Render(Of(d.actions, StudyActionKind::kStopTrial)), "stop(2)");
  // A later failure after a success does not.
  r = Apply(r, Ended(1, model::JobState::kSucceeded, Report(0.5, 1)));
  EXPECT_EQ(PhaseOf(Apply(r, Ended(2, model::JobState::kFailed))), StudyPhase::kRunning);
}

// Issue 30: a cancelled study stops each trial once. It stopped every active trial
// again at each trial's end: a 1,000-trial study sent half a million cancels and took
// minutes (and 800 MB) to end.
TEST(StudyMachineTest, ACancelledStudyStopsEachTrialExactlyOnce) {
  StudyRecord r =
      Apply(Apply(NewStudy(100, 50, 0), Input(StudyInputKind::kTick)), Suggested(50, 50));
  StudyDecision cancel = Decide(r, Input(StudyInputKind::kCancel));
  size_t stops = Of(cancel.actions, StudyActionKind::kStopTrial).size();
  r = cancel.record;
  for (int64_t id = 1; id <= 50; ++id) {
    StudyDecision d = Decide(r, Ended(id, model::JobState::kCancelled));
    stops += Of(d.actions, StudyActionKind::kStopTrial).size();
    r = d.record;
  }
  EXPECT_EQ(stops, 50u);
  EXPECT_EQ(PhaseOf(r), StudyPhase::kCancelled);
}

TEST(StudyMachineTest, TheTunersErrorFailsTheStudy) {
  StudyRecord r = Running();
  r.suggesting = true;
  StudyInput in = Input(StudyInputKind::kSuggested);
  in.asked = 1;
  in.error = "the space is empty";
  StudyDecision d = Decide(r, in);
  EXPECT_EQ(d.record.job.study_progress.failing, "the tuner failed: the space is empty");
  EXPECT_FALSE(d.record.suggesting);
  EXPECT_EQ(Render(d.actions), "commit[1] commit stop(1) stop(2) stop(3)");
}

TEST(StudyMachineTest, AStudyWithoutAReportedMetricFails) {
  StudyRecord r = Apply(Apply(NewStudy(1, 1, 5), Input(StudyInputKind::kTick)), Suggested(1, 1));
  StudyDecision d = Decide(r, Ended(1, model::JobState::kSucceeded));
  EXPECT_EQ(d.record.job.trials[0].state, model::TrialState::kInfeasible);
  EXPECT_NE(d.record.job.trials[0].infeasible_reason.find("/tmp/hypertune/output.metrics"),
            std::string::npos);
  EXPECT_EQ(d.record.job.state, model::JobState::kFailed);
  EXPECT_NE(d.record.job.error->message.find("No trial reported the metric"), std::string::npos);
  EXPECT_EQ(d.actions.back().kind, StudyActionKind::kForget);
}

TEST(StudyMachineTest, SkippedMetricLinesAreSaidOnceAndRemembered) {
  StudyInput read = Input(StudyInputKind::kMetricsRead, 1);
  read.metrics_text = "not json\n" + Report(0.4, 1);
  StudyDecision first = Decide(Running(), read);
  EXPECT_EQ(Render(first.actions), "commit[2]");
  EXPECT_EQ(first.record.job.trials[0].skipped_lines_logged, 1);
  // The same file read again (after a restart too: the count is in the record).
  EXPECT_EQ(Render(Decide(first.record, read).actions), "");
  read.metrics_text += "still not json\n";
  EXPECT_EQ(Render(Decide(first.record, read).actions), "commit[1]");
}

TEST(StudyMachineTest, EarlyStoppingCommitsBeforeItStopsTheTrial) {
  StudyRecord r = NewStudy(10, 1, 0);
  auto spec = std::make_shared<model::StudySpec>(*r.spec);
  spec->stopping = model::StoppingRule::kMedian;
  spec->goal = model::Goal::kMaximize;
  r.spec = spec;
  r = Apply(r, Input(StudyInputKind::kTick));
  std::string good;
  for (int step = 1; step <= 5; ++step) good += Report(0.9, step);
  for (int id = 1; id <= 3; ++id) {
    r = Apply(r, Suggested(1, 1));
    r = Apply(r, Ended(id, model::JobState::kSucceeded, good));
  }
  r = Apply(r, Suggested(1, 1));
  StudyInput bad = Input(StudyInputKind::kMetricsRead, 4);
  for (int step = 1; step <= 5; ++step) bad.metrics_text += Report(0.1, step);
  StudyDecision d = Decide(r, bad);
  EXPECT_EQ(d.record.job.trials[3].state, model::TrialState::kStopping);
  EXPECT_TRUE(d.record.job.trials[3].stopped_early);
  ASSERT_GE(d.actions.size(), 2u);
  EXPECT_EQ(d.actions[d.actions.size() - 2].kind, StudyActionKind::kCommit);
  EXPECT_EQ(Render(d.actions.back()), "stop(4)");
  EXPECT_EQ(d.actions.back().message.rfind("Stopped early: ", 0), 0u);
  // Its job cancelled as asked: the trial counts with what it reported.
  StudyDecision end = Decide(d.record, Ended(4, model::JobState::kCancelled, bad.metrics_text));
  EXPECT_EQ(end.record.job.trials[3].state, model::TrialState::kSucceeded);
  EXPECT_EQ(Render(Of(end.actions, StudyActionKind::kObserve)), "observe(4)");
}

TEST(StudyMachineTest, TheStudySucceedsOnceEveryTrialOfItsBudgetIsDone) {
  StudyRecord done = Succeeded();
  EXPECT_EQ(done.job.state, model::JobState::kSucceeded);
  EXPECT_EQ(done.job.trials.size(), 6u);
  EXPECT_FALSE(done.job.error.has_value());
  EXPECT_EQ(done.job.end_time, kNow);
}

// One input may commit three times (the trial's end, the study's last line, its end):
// each commit carries the record as it stood then, so a crash between them is resumable.
TEST(StudyMachineTest, EachCommitCarriesTheRecordAsItStoodThen) {
  StudyDecision d = Decide(Failing(), Ended(3, model::JobState::kCancelled));
  std::vector<StudyAction> commits = Of(d.actions, StudyActionKind::kCommit);
  ASSERT_EQ(commits.size(), 3u);
  EXPECT_EQ(commits[0].record.state, model::JobState::kRunning);
  EXPECT_EQ(commits[0].record.trials[2].state, model::TrialState::kCancelled);
  // The last line, committed before the end: a finished record carries none.
  EXPECT_EQ(commits[1].record.state, model::JobState::kRunning);
  EXPECT_TRUE(commits[1].record.study_progress.finishing);
  ASSERT_EQ(commits[1].record.outbox.lines.size(), 1u);
  EXPECT_EQ(commits[1].record.outbox.lines[0].message.rfind("Study FAILED: ", 0), 0u);
  EXPECT_EQ(commits[2].record.state, model::JobState::kFailed);
  EXPECT_TRUE(commits[2].record.outbox.lines.empty());
  EXPECT_EQ(commits[2].record.update_time, kNow);
  // A daemon that died between the two says nothing again: it only ends the study.
  StudyRecord restarted;
  restarted.job = commits[1].record;
  restarted.spec = d.record.spec;
  EXPECT_EQ(Render(Decide(restarted, Input(StudyInputKind::kTick)).actions), "commit forget");
}

// Lines are numbered across decisions, and a decision starts without the lines of
// the commit before (the controller wrote them): no line is said twice.
TEST(StudyMachineTest, EveryLineHasTheNextNumberAndTravelsInOneCommit) {
  StudyRecord r = Apply(NewStudy(), Input(StudyInputKind::kTick));
  StudyDecision d = Decide(r, Suggested(2, 3));
  ASSERT_EQ(d.record.job.outbox.lines.size(), 0u) << "the lines left with the commit";
  EXPECT_EQ(d.record.job.outbox.last_seq, 2);
  StudyDecision next = Decide(d.record, Ended(1, model::JobState::kSucceeded, Report(0.5, 3)));
  std::vector<int64_t> seqs;
  for (const StudyAction& a : Of(next.actions, StudyActionKind::kCommit)) {
    for (const model::OutboxLine& l : a.record.outbox.lines) seqs.push_back(l.seq);
  }
  EXPECT_EQ(seqs, (std::vector<int64_t>{3, 4}));  // "reported", then "succeeded".
  // The record as stored after its commit still holds them: a restart writes any missing.
  EXPECT_EQ(Of(next.actions, StudyActionKind::kCommit).back().record.outbox.lines.size(), 2u);
}

// A trial job created after the study stopped wanting it (cancelled meanwhile) is
// stopped; the trial's own job is left to run.
TEST(StudyMachineTest, OnlyATrialJobTheStudyNoLongerRunsIsStopped) {
  StudyRecord r = Running();
  StudyInput created = Input(StudyInputKind::kTrialJobCreated, 1);
  created.job_uid = r.job.trials[0].job_uid;
  created.job_state = model::JobState::kQueued;
  EXPECT_EQ(Render(Decide(r, created).actions), "");
  r = Apply(r, Input(StudyInputKind::kCancel));
  r = Apply(r, Ended(1, model::JobState::kCancelled));
  EXPECT_EQ(Render(Decide(r, created).actions), "stop(1)");
  created.job_state = model::JobState::kCancelled;  // Already ended: nothing to stop.
  EXPECT_EQ(Render(Decide(r, created).actions), "");
}

TEST(StudyMachineTest, InputsForUnknownOrFinishedTrialsAreIgnored) {
  StudyRecord r = Running();
  EXPECT_EQ(Render(Decide(r, Ended(99, model::JobState::kSucceeded)).actions), "");
  r = Apply(r, Ended(1, model::JobState::kFailed));
  r.suggesting = true;
  EXPECT_EQ(Render(Decide(r, Ended(1, model::JobState::kSucceeded)).actions), "");
  EXPECT_EQ(Render(Decide(r, Input(StudyInputKind::kTrialJobMissing, 1)).actions), "");
}

// Trial jobs ending in one burst (a cancelled study's) are one decision with one
// commit: it carries every line the one-by-one decisions' commits would have, in order;
// the commit that ends the study stays its own, after it.
TEST(StudyMachineTest, ABatchOfEndsIsOneCommitCarryingEveryLineInOrder) {
  const StudyRecord start = Cancelling();
  const std::vector<StudyInput> ends = {Ended(1, model::JobState::kCancelled),
                                        Ended(2, model::JobState::kCancelled),
                                        Ended(3, model::JobState::kCancelled)};
  StudyRecord r = start;
  std::vector<std::string> said;
  size_t terminal_commits = 0;
  for (const StudyInput& in : ends) {
    StudyDecision d = Decide(r, in);
    for (const StudyAction& a : Of(d.actions, StudyActionKind::kCommit)) {
      if (model::IsTerminal(a.record.state)) {
        ++terminal_commits;
        continue;
      }
      for (const model::OutboxLine& l : a.record.outbox.lines) said.push_back(l.message);
    }
    r = d.record;
  }
  ASSERT_GE(said.size(), 3u) << "each end says something";
  StudyDecision batch = DecideStudyBatch(start, ends, StudyPolicy{}, kNow);
  const std::string rendered = Render(batch.actions);
  ASSERT_FALSE(batch.actions.empty());
  ASSERT_EQ(batch.actions[0].kind, StudyActionKind::kCommit) << rendered;
  std::vector<std::string> carried;
  int64_t last_seq = 0;
  for (const model::OutboxLine& l : batch.actions[0].record.outbox.lines) {
    carried.push_back(l.message);
    EXPECT_GT(l.seq, last_seq) << rendered;
    last_seq = l.seq;
  }
  EXPECT_EQ(carried, said);
  const std::vector<StudyAction> commits = Of(batch.actions, StudyActionKind::kCommit);
  EXPECT_EQ(commits.size(), 1 + terminal_commits) << rendered;
  for (size_t i = 1; i < commits.size(); ++i) {
    EXPECT_TRUE(model::IsTerminal(commits[i].record.state)) << rendered;
    EXPECT_TRUE(commits[i].record.outbox.lines.empty()) << rendered;
  }
  EXPECT_EQ(model::JobStateName(batch.record.job.state), model::JobStateName(r.job.state));
}

}  // namespace
}  // namespace ty::machines
