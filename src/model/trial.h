// The trials of a study (a tuning job), kept in the study's job record.
//
// A trial runs as a job of its own (a "trial job": Job::study_uid names the study and
// Job::trial_id the trial), so it is admitted, launched, logged, retried and
// recovered like any job. The study's record holds what the study decided and
// observed: each trial's parameters, state, measurements and final measurement.
//
// Trial states (Vertex Trial.State; ml v1 reports them with the Job state names):
//   ACTIVE --job succeeded, metric reported--> SUCCEEDED
//     |    --job succeeded, no metric-------> INFEASIBLE (infeasible_reason says why)
//     |    --job failed---------------------> FAILED     (infeasible_reason: the job's error)
//     |    --job cancelled (study cancelled)> CANCELLED
//     +--early stopping--> STOPPING --job down--> SUCCEEDED (stopped_early) or INFEASIBLE
// Plain values; safe to copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "model/study_spec.h"

namespace ty::model {

enum class TrialState { kActive, kStopping, kSucceeded, kInfeasible, kFailed, kCancelled };
const char* TrialStateName(TrialState s);  // "ACTIVE", "STOPPING", ...
bool IsTrialDone(TrialState s);

struct TrialMeasurement {
  int64_t step = 0;            // global_step as reported.
  double value = 0;            // The study's metric.
  double elapsed_seconds = 0;  // Since the trial started (by the report's timestamp).
};

struct Trial {
  int64_t id = 0;  // 1, 2, ... in creation order.
  Assignment params;
  TrialState state = TrialState::kActive;
  std::string job_uid;  // The trial job; "" until it is created.
  std::vector<TrialMeasurement> measurements;
  std::optional<TrialMeasurement> final_measurement;
  bool stopped_early = false;
  std::string infeasible_reason;
  TimeMicros start_time = 0;
  TimeMicros end_time = 0;
  // Lines of its metrics file the study has already said it skipped (malformed, or no
  // report of the study's metric): each such note is logged once, across restarts.
  int64_t skipped_lines_logged = 0;
};

// ACTIVE or STOPPING: its job may still run.
inline bool IsTrialActive(const Trial& t) { return !IsTrialDone(t.state); }

// What a study remembers beyond its trials (machines/study_machine.h), stored with
// the study's record so a restarted daemon goes on exactly where it stopped.
struct StudyProgress {
  std::string failing;     // Why the study fails once its trials are down; "" = it does not.
  bool exhausted = false;  // The search space has no unseen point left.
  // Its last lines are committed; the commit that ends it follows (machines/study_machine.h).
  bool finishing = false;
  bool operator==(const StudyProgress& o) const {
    return failing == o.failing && exhausted == o.exhausted && finishing == o.finishing;
  }
};

// The trials as stored (a JSON array) and back. An unreadable text reads as no
// trials; the study then fails on load rather than running its budget again.
std::string EncodeTrials(const std::vector<Trial>& trials);
Result<std::vector<Trial>> DecodeTrials(const std::string& text);

// The progress as stored (a JSON object) and back; "" or "{}" read as a fresh study.
std::string EncodeStudyProgress(const StudyProgress& progress);
Result<StudyProgress> DecodeStudyProgress(const std::string& text);

// The trial's value the study counts: final measurement, if any.
std::optional<double> ObjectiveOf(const Trial& t);

}  // namespace ty::model
