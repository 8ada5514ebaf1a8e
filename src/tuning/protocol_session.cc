#include "tuning/protocol_session.h"

#include <cmath>
#include <vector>

#include "tuning/assignment_json.h"
#include "wire/study_json.h"

namespace ty::tuning {

namespace {

using nlohmann::json;

json Error(const std::string& message) { return {{"ok", false}, {"error", message}}; }

}  // namespace

json ProtocolSession::Handle(const json& request) {
  try {
    return Dispatch(request);
  } catch (const json::exception& e) {
    // A field of the wrong JSON type (value() of a string key holding a number...).
    return Error(std::string("malformed request: ") + e.what());
  }
}

json ProtocolSession::Dispatch(const json& request) {
  if (!request.is_object() || !request.contains("op") || !request["op"].is_string()) {
    return Error("a request needs a string \"op\"");
  }
  const std::string op = request["op"].get<std::string>();
  if (op == "close") {
    closed_ = true;
    return {{"ok", true}};
  }
  if (op == "create") return Create(request);
  if (!tuner_.has_value()) return Error("'" + op + "' before 'create'");
  if (op == "suggest") return Suggest(request);
  if (op == "report") return Report(request);
  if (op == "add") return Add(request);
  return Error("unknown op '" + op + "'");
}

json ProtocolSession::Create(const json& request) {
  const json study = request.value("study", json::object());
  auto params = wire::ParseMlParams(study.value("params", json()), "study.params");
  if (!params.ok()) return Error(params.status().message());
  auto space = SearchSpace::Create(std::move(*params));
  if (!space.ok()) return Error(space.status().message());
  StudyOptions options;
  options.goal = study.value("goal", "MAXIMIZE") == "MINIMIZE" ? Goal::kMinimize : Goal::kMaximize;
  options.algorithm = algorithm_;
  options.max_trials = study.value("maxTrials", 1);
  options.parallel = study.value("maxParallelTrials", 1);
  const json seed = request.value("seed", json(0));
  options.seed = seed.is_number_unsigned() ? seed.get<uint64_t>() : 0;
  auto tuner = Tuner::Create(std::move(*space), options);
  if (!tuner.ok()) return Error(tuner.status().message());
  tuner_.emplace(std::move(*tuner));
  pending_.clear();
  next_trial_ = 0;
  return {
      {"ok", true},
      {"tuner", "trainyard"},
      {"version", "1"},
      {"algorithm", algorithm_ == Algorithm::kBayesian ? "GP_LOGEI" : AlgorithmName(algorithm_)}};
}

json ProtocolSession::Suggest(const json& request) {
  const int count = request.value("count", 1);
  if (count < 1) return Error("count must be at least 1");
  std::vector<Assignment> pending;
  for (const auto& [id, a] : pending_) pending.push_back(a);
  std::vector<Assignment> next = tuner_->Suggest(count, pending);
  if (static_cast<int>(next.size()) < count) {
    return Error("the search space has only " + std::to_string(next.size()) +
                 " unseen points left for " + std::to_string(count) + " trials");
  }
  json trials = json::array();
  for (auto& a : next) {
    const int64_t id = next_trial_++;
    trials.push_back({{"trial", id}, {"params", AssignmentToJson(tuner_->space(), a)}});
    pending_[id] = std::move(a);
  }
  return {{"ok", true}, {"trials", trials}};
}

json ProtocolSession::Report(const json& request) {
  if (!request.contains("trial") || !request["trial"].is_number_integer()) {
    return Error("report needs the integer \"trial\" a suggest returned");
  }
  auto it = pending_.find(request["trial"].get<int64_t>());
  if (it == pending_.end()) return Error("trial " + request["trial"].dump() + " is not pending");
  std::optional<double> value;
  if (request.contains("value") && request["value"].is_number()) {
    value = request["value"].get<double>();
    if (!std::isfinite(*value)) value.reset();
  }
  tuner_->Observe({std::move(it->second), value});
  pending_.erase(it);
  return {{"ok", true}};
}

json ProtocolSession::Add(const json& request) {
  auto a = AssignmentFromJson(tuner_->space(), request.value("params", json()));
  if (!a.ok()) return Error(a.status().message());
  if (!request.contains("value") || !request["value"].is_number()) {
    return Error("add needs a numeric \"value\"");
  }
  tuner_->Observe({std::move(*a), request["value"].get<double>()});
  return {{"ok", true}};
}

}  // namespace ty::tuning
