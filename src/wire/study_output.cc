#include "wire/study_output.h"

#include <algorithm>

#include "common/time.h"

namespace ty::wire {

using namespace model;  // The domain the wire dialects read and write.

namespace {

const char* MlTrialState(TrialState s) {
  switch (s) {
    case TrialState::kActive:
      return "RUNNING";
    case TrialState::kStopping:
      return "CANCELLING";
    case TrialState::kSucceeded:
      return "SUCCEEDED";
    case TrialState::kCancelled:
      return "CANCELLED";
    case TrialState::kInfeasible:
    case TrialState::kFailed:
      return "FAILED";
  }
  return "STATE_UNSPECIFIED";
}

// Every value as text; the parameter's type is not at hand here, so integral
// numbers print without a fraction (INTEGER values always are; a DOUBLE that
// happens to be integral reads the same either way).
std::string ValueText(const ParamValue& v) {
  if (!v.category.empty()) return v.category;
  ParamSpec as_double;
  return FormatValue(as_double, v);
}

}  // namespace

nlohmann::json MlHyperparametersOf(const nlohmann::json& rendered) {
  auto ti = rendered.find("trainingInput");
  if (ti == rendered.end() || !ti->is_object()) return nlohmann::json::object();
  auto h = ti->find("hyperparameters");
  return h != ti->end() && h->is_object() ? *h : nlohmann::json::object();
}

std::vector<const Trial*> TrialsBestFirst(const std::vector<Trial>& trials, Goal goal) {
  std::vector<const Trial*> out;
  for (const Trial& t : trials) out.push_back(&t);
  std::stable_sort(out.begin(), out.end(), [goal](const Trial* a, const Trial* b) {
    std::optional<double> va = ObjectiveOf(*a), vb = ObjectiveOf(*b);
    if (va.has_value() != vb.has_value()) return va.has_value();
    if (!va.has_value()) return a->id < b->id;
    return goal == Goal::kMaximize ? *va > *vb : *va < *vb;
  });
  return out;
}

nlohmann::json MlStudyTrainingOutput(const Job& job, const nlohmann::json& rendered) {
  const nlohmann::json h = MlHyperparametersOf(rendered);
  const Goal goal = h.value("goal", "") == "MINIMIZE" ? Goal::kMinimize : Goal::kMaximize;
  const std::string tag = h.value("hyperparameterMetricTag", std::string(kDefaultMetricTag));
  nlohmann::json trials = nlohmann::json::array();
  int64_t completed = 0;
  for (const Trial* t : TrialsBestFirst(job.trials, goal)) {
    completed += t->state == TrialState::kSucceeded;
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [name, v] : t->params) params[name] = ValueText(v);
    nlohmann::json out = {{"trialId", std::to_string(t->id)},
                          {"hyperparameters", params},
                          {"state", MlTrialState(t->state)}};
    if (t->final_measurement) {
      out["finalMetric"] = {{"trainingStep", std::to_string(t->final_measurement->step)},
                            {"objectiveValue", t->final_measurement->value}};
    }
    // Google documents allMetrics as "not currently populated"; here it carries the
    // trial's intermediate reports so describe shows them.
    if (!t->measurements.empty()) {
      nlohmann::json all = nlohmann::json::array();
      for (const TrialMeasurement& m : t->measurements) {
        all.push_back({{"trainingStep", std::to_string(m.step)}, {"objectiveValue", m.value}});
      }
      out["allMetrics"] = std::move(all);
    }
    if (t->stopped_early) out["isTrialStoppedEarly"] = true;
    if (t->start_time != 0) out["startTime"] = FormatRfc3339(t->start_time);
    if (t->end_time != 0) out["endTime"] = FormatRfc3339(t->end_time);
    trials.push_back(std::move(out));
  }
  nlohmann::json output = {{"isHyperparameterTuningJob", true},
                           {"hyperparameterMetricTag", tag},
                           {"completedTrialCount", std::to_string(completed)}};
  if (!trials.empty()) output["trials"] = std::move(trials);
  return output;
}

nlohmann::json VertexTrials(const Job& job, const nlohmann::json& rendered) {
  std::string metric = kDefaultMetricTag;
  auto study = rendered.find("studySpec");
  if (study != rendered.end() && study->is_object() && study->contains("metrics") &&
      (*study)["metrics"].is_array() && !(*study)["metrics"].empty()) {
    metric = (*study)["metrics"][0].value("metricId", metric);
  }
  auto measurement = [&metric](const TrialMeasurement& m) {
    return nlohmann::json{{"stepCount", std::to_string(m.step)},
                          {"metrics", {{{"metricId", metric}, {"value", m.value}}}}};
  };
  nlohmann::json out = nlohmann::json::array();
  for (const Trial& t : job.trials) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& [name, v] : t.params) {
      params.push_back(
          {{"parameterId", name},
           {"value", v.category.empty() ? nlohmann::json(v.number) : nlohmann::json(v.category)}});
    }
    const char* state = "ACTIVE";
    std::string reason = t.infeasible_reason;
    switch (t.state) {
      case TrialState::kActive:
        break;
      case TrialState::kStopping:
        state = "STOPPING";
        break;
      case TrialState::kSucceeded:
        state = "SUCCEEDED";
        break;
      case TrialState::kCancelled:
        reason = "the trial was cancelled";
        state = "INFEASIBLE";
        break;
      case TrialState::kInfeasible:
      case TrialState::kFailed:
        state = "INFEASIBLE";
        break;
    }
    nlohmann::json trial = {{"id", std::to_string(t.id)}, {"state", state}, {"parameters", params}};
    if (t.final_measurement) trial["finalMeasurement"] = measurement(*t.final_measurement);
    if (!t.measurements.empty()) {
      nlohmann::json all = nlohmann::json::array();
      for (const auto& m : t.measurements) all.push_back(measurement(m));
      trial["measurements"] = std::move(all);
    }
    if (t.start_time != 0) trial["startTime"] = FormatRfc3339(t.start_time);
    if (t.end_time != 0) trial["endTime"] = FormatRfc3339(t.end_time);
    if (!reason.empty() && std::string(state) == "INFEASIBLE") trial["infeasibleReason"] = reason;
    out.push_back(std::move(trial));
  }
  return out;
}

}  // namespace ty::wire
