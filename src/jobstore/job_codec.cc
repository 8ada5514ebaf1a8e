#include "jobstore/job_codec.h"

#include <nlohmann/json.hpp>

namespace ty::jobstore::internal {

const char* DialectName(model::Dialect d) {
  return d == model::Dialect::kMlV1 ? "ML_V1" : "VERTEX";
}

std::optional<model::Dialect> DialectFromName(const std::string& name) {
  if (name == "VERTEX") return model::Dialect::kVertex;
  if (name == "ML_V1") return model::Dialect::kMlV1;
  return std::nullopt;
}

model::Job StoredCopy(const model::Job& job) {
  model::Job copy = job;
  copy.spec = model::JobSpec();
  copy.spec.job_id = MlJobIdOf(job);
  copy.spec.display_name = job.spec.display_name;
  copy.spec.labels = job.spec.labels;
  return copy;
}

std::string MlJobIdOf(const model::Job& job) {
  return job.dialect == model::Dialect::kMlV1 ? job.spec.job_id : std::string();
}

std::string LabelsToJson(const std::map<std::string, std::string>& labels) {
  return nlohmann::json(labels).dump();
}

std::string GrantsToJson(const std::vector<model::ReplicaGrant>& grants) {
  nlohmann::json out = nlohmann::json::array();
  for (const model::ReplicaGrant& g : grants) {
    out.push_back({{"pool", g.pool},
                   {"index", g.index},
                   {"node", g.node},
                   {"nodeName", g.node_name},
                   {"cpus", g.cpus},
                   {"memoryGb", g.memory_gb},
                   {"cpuLimit", g.cpu_limit},
                   {"memoryLimitGb", g.memory_limit_gb},
                   {"gpuType", g.gpu_type},
                   {"gpuIndices", g.gpu_indices}});
  }
  return out.dump();
}

std::vector<model::ReplicaGrant> GrantsFromJson(const std::string& text) {
  std::vector<model::ReplicaGrant> out;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return out;
  try {
    for (const auto& g : j) {
      model::ReplicaGrant r;
      r.pool = g.value("pool", 0);
      r.index = g.value("index", 0);
      r.node = g.value("node", 0);
      r.node_name = g.value("nodeName", "");
      r.cpus = g.value("cpus", 0.0);
      r.memory_gb = g.value("memoryGb", 0.0);
      r.cpu_limit = g.value("cpuLimit", 0.0);
      r.memory_limit_gb = g.value("memoryLimitGb", 0.0);
      r.gpu_type = g.value("gpuType", "");
      r.gpu_indices = g.value("gpuIndices", std::vector<int>{});
      out.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception&) {
    return {};
  }
  return out;
}

std::map<std::string, std::string> LabelsFromJson(const std::string& text) {
  std::map<std::string, std::string> out;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

std::string ImagesToJson(const std::vector<model::ImageRan>& images) {
  nlohmann::json out = nlohmann::json::array();
  for (const model::ImageRan& i : images) {
    out.push_back({{"image", i.image}, {"digest", i.digest}, {"id", i.id}});
  }
  return out.dump();
}

std::vector<model::ImageRan> ImagesFromJson(const std::string& text) {
  std::vector<model::ImageRan> out;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return out;
  for (const nlohmann::json& i : j) {
    if (!i.is_object()) return {};
    model::ImageRan ran;
    for (auto [key, field] : {std::pair{"image", &ran.image}, std::pair{"digest", &ran.digest},
                              std::pair{"id", &ran.id}}) {
      auto it = i.find(key);
      if (it == i.end() || !it->is_string()) return {};
      *field = it->get<std::string>();
    }
    out.push_back(std::move(ran));
  }
  return out;
}

int64_t UidNumber(const std::string& uid) {
  if (uid.empty() || uid.size() > 18 + 1) return 0;
  int64_t n = 0;
  for (char c : uid) {
    if (c < '0' || c > '9') return 0;
    if (n > (INT64_MAX - (c - '0')) / 10) return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

Status JobNotFound(const std::string& uid) { return NotFound("job " + uid + " not found"); }

}  // namespace ty::jobstore::internal
