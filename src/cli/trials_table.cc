// FormatTrialsTable (output.h): the trials of a tuning job as describe shows them.
#include <algorithm>
#include <optional>
#include <sstream>

#include "cli/output.h"

namespace ty::cli {
namespace {

struct TrialRow {
  int64_t id = 0;
  std::string state, step, params;
  std::optional<double> objective;
};

std::string Text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

int64_t IdOf(const nlohmann::json& v) {
  const std::string s = Text(v);
  return std::all_of(s.begin(), s.end(), ::isdigit) && !s.empty() && s.size() < 18 ? std::stoll(s)
                                                                                   : 0;
}

// ml v1 HyperparameterOutput[]: already best first.
std::vector<TrialRow> MlRows(const nlohmann::json& trials) {
  std::vector<TrialRow> rows;
  for (const nlohmann::json& t : trials) {
    TrialRow r{IdOf(t.value("trialId", nlohmann::json())), t.value("state", ""), "", "", {}};
    if (auto m = t.find("finalMetric"); m != t.end() && m->is_object()) {
      if (m->contains("objectiveValue") && (*m)["objectiveValue"].is_number()) {
        r.objective = (*m)["objectiveValue"].get<double>();
      }
      r.step = Text(m->value("trainingStep", nlohmann::json()));
    }
    if (auto h = t.find("hyperparameters"); h != t.end() && h->is_object()) {
      for (const auto& [name, value] : h->items()) {
        r.params += (r.params.empty() ? "" : " ") + name + "=" + Text(value);
      }
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

// Vertex Trial[]: in id order; sorted by the first metric's goal.
std::vector<TrialRow> VertexRows(const nlohmann::json& job) {
  std::vector<TrialRow> rows;
  for (const nlohmann::json& t : job["trials"]) {
    TrialRow r{IdOf(t.value("id", nlohmann::json())), t.value("state", ""), "", "", {}};
    if (auto m = t.find("finalMeasurement"); m != t.end() && m->is_object()) {
      r.step = Text(m->value("stepCount", nlohmann::json()));
      const nlohmann::json metrics = m->value("metrics", nlohmann::json::array());
      if (!metrics.empty() && metrics[0].contains("value") && metrics[0]["value"].is_number()) {
        r.objective = metrics[0]["value"].get<double>();
      }
    }
    for (const nlohmann::json& p : t.value("parameters", nlohmann::json::array())) {
      if (!r.params.empty()) r.params += ' ';
      r.params +=
          p.value("parameterId", std::string()) + "=" + Text(p.value("value", nlohmann::json()));
    }
    rows.push_back(std::move(r));
  }
  bool minimize = false;
  const nlohmann::json metrics =
      job.value("studySpec", nlohmann::json::object()).value("metrics", nlohmann::json::array());
  if (!metrics.empty()) minimize = metrics[0].value("goal", "") == "MINIMIZE";
  std::stable_sort(rows.begin(), rows.end(), [minimize](const TrialRow& a, const TrialRow& b) {
    if (a.objective.has_value() != b.objective.has_value()) return a.objective.has_value();
    if (!a.objective.has_value()) return a.id < b.id;
    return minimize ? *a.objective < *b.objective : *a.objective > *b.objective;
  });
  return rows;
}

std::string Number(double v) {
  std::ostringstream out;
  out.precision(6);
  out << v;
  return out.str();
}

}  // namespace

std::string FormatTrialsTable(const nlohmann::json& job) {
  if (!job.is_object()) return "";
  std::vector<TrialRow> rows;
  const nlohmann::json output = job.value("trainingOutput", nlohmann::json::object());
  if (output.contains("trials") && output["trials"].is_array()) {
    rows = MlRows(output["trials"]);
  } else if (job.contains("trials") && job["trials"].is_array()) {
    rows = VertexRows(job);
  }
  if (rows.empty()) return "";
  std::vector<std::vector<std::string>> cells = {
      {"TRIAL", "STATE", "OBJECTIVE", "STEP", "PARAMETERS"}};
  for (const TrialRow& r : rows) {
    cells.push_back({std::to_string(r.id), r.state, r.objective ? Number(*r.objective) : "-",
                     r.step.empty() ? "-" : r.step, r.params});
  }
  return "# Trials, best first:\n" + FormatColumns(cells, "# ");
}

}  // namespace ty::cli
