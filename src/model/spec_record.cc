#include "model/spec_record.h"

#include <nlohmann/json.hpp>

namespace ty::model {
namespace {

using nlohmann::json;

// The study: every field, the parameter tree included; Decode never validates
// (records are trusted).
const char* ScaleText(Scale s) {
  switch (s) {
    case Scale::kLinear:
      return "UNIT_LINEAR_SCALE";
    case Scale::kLog:
      return "UNIT_LOG_SCALE";
    case Scale::kReverseLog:
      return "UNIT_REVERSE_LOG_SCALE";
  }
  return "UNIT_LINEAR_SCALE";
}

json EncodeParam(const ParamSpec& p) {
  json out = {{"name", p.name},
              {"type", ParamTypeName(p.type)},
              {"scale", ScaleText(p.scale)},
              {"min", p.min},
              {"max", p.max},
              {"discrete", p.discrete},
              {"categories", p.categories}};
  json children = json::array();
  for (const ConditionalChild& c : p.children) {
    children.push_back({{"parentNumbers", c.parent_numbers},
                        {"parentCategories", c.parent_categories},
                        {"spec", EncodeParam(c.spec)}});
  }
  out["children"] = std::move(children);
  return out;
}

ParamSpec DecodeParam(const json& j) {
  ParamSpec p;
  p.name = j.value("name", "");
  const std::string type = j.value("type", "DOUBLE");
  p.type = type == "INTEGER"       ? ParamType::kInteger
           : type == "CATEGORICAL" ? ParamType::kCategorical
           : type == "DISCRETE"    ? ParamType::kDiscrete
                                   : ParamType::kDouble;
  const std::string scale = j.value("scale", "");
  p.scale = scale == "UNIT_LOG_SCALE"           ? Scale::kLog
            : scale == "UNIT_REVERSE_LOG_SCALE" ? Scale::kReverseLog
                                                : Scale::kLinear;
  p.min = j.value("min", 0.0);
  p.max = j.value("max", 0.0);
  p.discrete = j.value("discrete", std::vector<double>{});
  p.categories = j.value("categories", std::vector<std::string>{});
  for (const json& c : j.value("children", json::array())) {
    ConditionalChild child;
    child.parent_numbers = c.value("parentNumbers", std::vector<double>{});
    child.parent_categories = c.value("parentCategories", std::vector<std::string>{});
    child.spec = DecodeParam(c.value("spec", json::object()));
    p.children.push_back(std::move(child));
  }
  return p;
}

}  // namespace

json EncodeStudy(const StudySpec& s) {
  json params = json::array();
  for (const ParamSpec& p : s.params) params.push_back(EncodeParam(p));
  return {{"params", params},
          {"goal", s.goal == Goal::kMinimize ? "MINIMIZE" : "MAXIMIZE"},
          {"metricTag", s.metric_tag},
          {"maxTrials", s.max_trials},
          {"parallelTrials", s.parallel_trials},
          {"maxFailedTrials", s.max_failed_trials},
          {"algorithm", AlgorithmName(s.algorithm)},
          {"stopping", s.stopping == StoppingRule::kMedian       ? "MEDIAN"
                       : s.stopping == StoppingRule::kDecayCurve ? "DECAY_CURVE"
                                                                 : "NONE"},
          {"stoppingUseElapsed", s.stopping_use_elapsed},
          {"selection", s.selection == MeasurementSelection::kBest ? "BEST" : "LAST"},
          {"resumePreviousJobId", s.resume_previous_job_id}};
}

StudySpec DecodeStudy(const json& j) {
  StudySpec s;
  for (const json& p : j.value("params", json::array())) s.params.push_back(DecodeParam(p));
  s.goal = j.value("goal", "") == "MINIMIZE" ? Goal::kMinimize : Goal::kMaximize;
  s.metric_tag = j.value("metricTag", "");
  s.max_trials = j.value("maxTrials", 1);
  s.parallel_trials = j.value("parallelTrials", 1);
  s.max_failed_trials = j.value("maxFailedTrials", 0);
  auto algorithm = ParseAlgorithm(j.value("algorithm", ""));
  s.algorithm = algorithm.ok() ? *algorithm : Algorithm::kBayesian;
  const std::string stopping = j.value("stopping", "");
  s.stopping = stopping == "MEDIAN"        ? StoppingRule::kMedian
               : stopping == "DECAY_CURVE" ? StoppingRule::kDecayCurve
                                           : StoppingRule::kNone;
  s.stopping_use_elapsed = j.value("stoppingUseElapsed", false);
  s.selection = j.value("selection", "") == "BEST" ? MeasurementSelection::kBest
                                                   : MeasurementSelection::kLast;
  s.resume_previous_job_id = j.value("resumePreviousJobId", "");
  return s;
}

namespace {

json EncodeEnv(const std::vector<EnvVar>& env) {
  json out = json::array();
  for (const EnvVar& e : env) out.push_back({e.name, e.value});
  return out;
}

std::vector<EnvVar> DecodeEnv(const json& j) {
  std::vector<EnvVar> out;
  if (!j.is_array()) return out;
  for (const json& e : j) out.push_back({e.at(0).get<std::string>(), e.at(1).get<std::string>()});
  return out;
}

json EncodePool(const WorkerPool& p) {
  json out = {{"replicaCount", p.replica_count},
              {"machine",
               {{"type", p.machine.machine_type},
                {"acceleratorType", p.machine.accelerator_type},
                {"acceleratorCount", p.machine.accelerator_count}}},
              {"disk", {{"type", p.disk.boot_disk_type}, {"sizeGb", p.disk.boot_disk_size_gb}}}};
  if (p.container) {
    out["container"] = {{"imageUri", p.container->image_uri},
                        {"command", p.container->command},
                        {"args", p.container->args},
                        {"env", EncodeEnv(p.container->env)}};
  }
  if (p.python_package) {
    out["pythonPackage"] = {{"executorImageUri", p.python_package->executor_image_uri},
                            {"packageUris", p.python_package->package_uris},
                            {"pythonModule", p.python_package->python_module},
                            {"args", p.python_package->args},
                            {"env", EncodeEnv(p.python_package->env)}};
  }
  return out;
}

template <typename T>
T Get(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->get<T>();
}

WorkerPool DecodePool(const json& j) {
  WorkerPool p;
  p.replica_count = Get<int64_t>(j, "replicaCount", 0);
  const json& m = j.value("machine", json::object());
  p.machine.machine_type = Get<std::string>(m, "type", "");
  p.machine.accelerator_type = Get<std::string>(m, "acceleratorType", "");
  p.machine.accelerator_count = Get<int32_t>(m, "acceleratorCount", 0);
  const json& d = j.value("disk", json::object());
  p.disk.boot_disk_type = Get<std::string>(d, "type", "");
  p.disk.boot_disk_size_gb = Get<int32_t>(d, "sizeGb", 0);
  if (auto c = j.find("container"); c != j.end()) {
    p.container = ContainerSpec{
        Get<std::string>(*c, "imageUri", ""), Get<std::vector<std::string>>(*c, "command", {}),
        Get<std::vector<std::string>>(*c, "args", {}), DecodeEnv(c->value("env", json::array()))};
  }
  if (auto py = j.find("pythonPackage"); py != j.end()) {
    p.python_package = PythonPackageSpec{Get<std::string>(*py, "executorImageUri", ""),
                                         Get<std::vector<std::string>>(*py, "packageUris", {}),
                                         Get<std::string>(*py, "pythonModule", ""),
                                         Get<std::vector<std::string>>(*py, "args", {}),
                                         DecodeEnv(py->value("env", json::array()))};
  }
  return p;
}

JobSpec DecodeRecord(const json& j) {
  JobSpec spec;
  spec.dialect =
      Get<std::string>(j, "dialect", "VERTEX") == "ML_V1" ? Dialect::kMlV1 : Dialect::kVertex;
  spec.job_id = Get<std::string>(j, "jobId", "");
  spec.display_name = Get<std::string>(j, "displayName", "");
  spec.labels = Get<std::map<std::string, std::string>>(j, "labels", {});
  for (const json& p : j.value("pools", json::array())) spec.pools.push_back(DecodePool(p));
  const json& s = j.value("scheduling", json::object());
  spec.scheduling.timeout = Get<int64_t>(s, "timeoutMicros", Scheduling::kDefaultTimeout);
  spec.scheduling.max_wait = Get<int64_t>(s, "maxWaitMicros", 0);
  spec.scheduling.restart_job_on_worker_restart = Get<bool>(s, "restartJobOnWorkerRestart", false);
  spec.scheduling.disable_retries = Get<bool>(s, "disableRetries", false);
  spec.scheduling.priority = Get<int32_t>(s, "priority", 0);
  spec.scheduling.spot = Get<bool>(s, "spot", false);
  spec.base_output_directory = Get<std::string>(j, "baseOutputDirectory", "");
  spec.tensorboard = Get<std::string>(j, "tensorboard", "");
  spec.enable_web_access = Get<bool>(j, "enableWebAccess", false);
  spec.job_dir = Get<std::string>(j, "jobDir", "");
  spec.use_chief_in_tf_config = Get<bool>(j, "useChiefInTfConfig", false);
  spec.region = Get<std::string>(j, "region", "");
  spec.scale_tier = Get<std::string>(j, "scaleTier", "");
  if (auto st = j.find("study"); st != j.end() && st->is_object())
    spec.study = std::make_shared<const StudySpec>(DecodeStudy(*st));
  return spec;
}

}  // namespace

std::string EncodeSpecRecord(const JobSpec& spec) {
  json pools = json::array();
  for (const WorkerPool& p : spec.pools) pools.push_back(EncodePool(p));
  json out = {{"v", kSpecRecordVersion},
              {"dialect", spec.dialect == Dialect::kMlV1 ? "ML_V1" : "VERTEX"},
              {"jobId", spec.job_id},
              {"displayName", spec.display_name},
              {"labels", spec.labels},
              {"pools", pools},
              {"scheduling",
               {{"timeoutMicros", spec.scheduling.timeout},
                {"maxWaitMicros", spec.scheduling.max_wait},
                {"restartJobOnWorkerRestart", spec.scheduling.restart_job_on_worker_restart},
                {"disableRetries", spec.scheduling.disable_retries},
                {"priority", spec.scheduling.priority},
                {"spot", spec.scheduling.spot}}},
              {"baseOutputDirectory", spec.base_output_directory},
              {"tensorboard", spec.tensorboard},
              {"enableWebAccess", spec.enable_web_access},
              {"jobDir", spec.job_dir},
              {"useChiefInTfConfig", spec.use_chief_in_tf_config},
              {"region", spec.region},
              {"scaleTier", spec.scale_tier}};
  if (spec.study) out["study"] = EncodeStudy(*spec.study);
  return out.dump();
}

Result<JobSpec> DecodeSpecRecord(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("v") || !j["v"].is_number_integer()) {
    return Status(StatusCode::kDataLoss, "not a stored spec record");
  }
  int version = j["v"].get<int>();
  if (version > kSpecRecordVersion) {
    return FailedPrecondition("stored spec record version " + std::to_string(version) +
                              " is newer than this build reads (" +
                              std::to_string(kSpecRecordVersion) + "); upgrade Trainyard");
  }
  try {
    return DecodeRecord(j);
  } catch (const json::exception& e) {
    return Status(StatusCode::kDataLoss, std::string("malformed stored spec record: ") + e.what());
  }
}

}  // namespace ty::model
