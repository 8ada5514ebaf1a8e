#include "model/trial.h"

#include <nlohmann/json.hpp>

namespace ty::model {

namespace {

using nlohmann::json;

constexpr std::pair<TrialState, const char*> kNames[] = {
    {TrialState::kActive, "ACTIVE"},       {TrialState::kStopping, "STOPPING"},
    {TrialState::kSucceeded, "SUCCEEDED"}, {TrialState::kInfeasible, "INFEASIBLE"},
    {TrialState::kFailed, "FAILED"},       {TrialState::kCancelled, "CANCELLED"}};

json EncodeMeasurement(const TrialMeasurement& m) {
  return {{"step", m.step}, {"value", m.value}, {"elapsed", m.elapsed_seconds}};
}

TrialMeasurement DecodeMeasurement(const json& j) {
  return {j.value("step", int64_t{0}), j.value("value", 0.0), j.value("elapsed", 0.0)};
}

}  // namespace

const char* TrialStateName(TrialState s) {
  for (const auto& [state, name] : kNames) {
    if (state == s) return name;
  }
  return "ACTIVE";
}

bool IsTrialDone(TrialState s) { return s != TrialState::kActive && s != TrialState::kStopping; }

std::optional<double> ObjectiveOf(const Trial& t) {
  if (t.state != TrialState::kSucceeded || !t.final_measurement) return std::nullopt;
  return t.final_measurement->value;
}

std::string EncodeTrials(const std::vector<Trial>& trials) {
  json out = json::array();
  for (const Trial& t : trials) {
    json params = json::object();
    for (const auto& [name, v] : t.params) {
      params[name] = v.category.empty() ? json(v.number) : json({{"category", v.category}});
    }
    json measurements = json::array();
    for (const auto& m : t.measurements) measurements.push_back(EncodeMeasurement(m));
    json j = {{"id", t.id},
              {"params", params},
              {"state", TrialStateName(t.state)},
              {"jobUid", t.job_uid},
              {"measurements", measurements},
              {"stoppedEarly", t.stopped_early},
              {"infeasibleReason", t.infeasible_reason},
              {"startTime", t.start_time},
              {"endTime", t.end_time}};
    if (t.skipped_lines_logged > 0) j["skippedLogged"] = t.skipped_lines_logged;
    if (t.final_measurement) j["final"] = EncodeMeasurement(*t.final_measurement);
    out.push_back(std::move(j));
  }
  return out.dump();
}

Result<std::vector<Trial>> DecodeTrials(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return Status(StatusCode::kDataLoss, "stored trials are not a JSON array");
  std::vector<Trial> out;
  try {
    for (const json& e : j) {
      Trial t;
      t.id = e.value("id", int64_t{0});
      const json params = e.value("params", json::object());
      for (const auto& [name, v] : params.items()) {
        ParamValue pv;
        if (v.is_object()) {
          pv.category = v.value("category", "");
        } else {
          pv.number = v.get<double>();
        }
        t.params[name] = pv;
      }
      const std::string state = e.value("state", "ACTIVE");
      for (const auto& [s, name] : kNames) {
        if (state == name) t.state = s;
      }
      t.job_uid = e.value("jobUid", "");
      for (const json& m : e.value("measurements", json::array())) {
        t.measurements.push_back(DecodeMeasurement(m));
      }
      if (e.contains("final")) t.final_measurement = DecodeMeasurement(e["final"]);
      t.stopped_early = e.value("stoppedEarly", false);
      t.infeasible_reason = e.value("infeasibleReason", "");
      t.start_time = e.value("startTime", TimeMicros{0});
      t.end_time = e.value("endTime", TimeMicros{0});
      t.skipped_lines_logged = e.value("skippedLogged", int64_t{0});
      out.push_back(std::move(t));
    }
  } catch (const json::exception& e) {
    return Status(StatusCode::kDataLoss, std::string("stored trials are malformed: ") + e.what());
  }
  return out;
}

std::string EncodeStudyProgress(const StudyProgress& progress) {
  json j = json::object();
  if (!progress.failing.empty()) j["failing"] = progress.failing;
  if (progress.exhausted) j["exhausted"] = true;
  if (progress.finishing) j["finishing"] = true;
  return j.dump();
}

Result<StudyProgress> DecodeStudyProgress(const std::string& text) {
  StudyProgress out;
  if (text.empty()) return out;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status(StatusCode::kDataLoss, "stored study progress is no object");
  try {
    out.failing = j.value("failing", "");
    out.exhausted = j.value("exhausted", false);
    out.finishing = j.value("finishing", false);
  } catch (const json::exception& e) {
    return Status(StatusCode::kDataLoss, std::string("stored study progress: ") + e.what());
  }
  return out;
}

}  // namespace ty::model
