#include "executor/slurm/slurm_context.h"

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "executor/container/container_body.h"
#include "images/google_names.h"
#include "model/runtime_env.h"

namespace ty::executor {
namespace {

using json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

json ReplicaToJson(const ReplicaLaunch& r) {
  json env = json::array();
  for (const model::EnvVar& e : r.env) env.push_back({e.name, e.value});
  json mounts = json::array();
  for (const Mount& m : r.mounts) {
    mounts.push_back({{"host", m.host_path}, {"container", m.container_path}, {"ro", m.read_only}});
  }
  return {{"pool", r.pool},
          {"index", r.index},
          {"name", r.name},
          {"task", r.task_name},
          {"hostname", r.hostname},
          {"image", r.image},
          {"command", r.command},
          {"args", r.args},
          {"env", env},
          {"mounts", mounts},
          {"accelerators", r.accelerator_count},
          {"cpu_limit", r.cpu_limit},
          {"memory_limit_gb", r.memory_limit_gb}};
}

ReplicaLaunch ReplicaFromJson(const json& j) {  // Throws json::exception.
  ReplicaLaunch r;
  r.pool = j.at("pool").get<int>();
  r.index = j.at("index").get<int>();
  r.name = j.at("name").get<std::string>();
  r.task_name = j.at("task").get<std::string>();
  r.hostname = j.at("hostname").get<std::string>();
  r.image = j.at("image").get<std::string>();
  r.command = j.at("command").get<std::vector<std::string>>();
  r.args = j.at("args").get<std::vector<std::string>>();
  for (const json& e : j.at("env")) {
    r.env.push_back({e.at(0).get<std::string>(), e.at(1).get<std::string>()});
  }
  for (const json& m : j.at("mounts")) {
    r.mounts.push_back({m.at("host").get<std::string>(), m.at("container").get<std::string>(),
                        m.at("ro").get<bool>()});
  }
  r.accelerator_count = j.value("accelerators", 0);
  r.cpu_limit = j.value("cpu_limit", 0.0);
  r.memory_limit_gb = j.value("memory_limit_gb", 0.0);
  return r;
}

// Replaces every string in `doc` that is a key of `to` (exact match).
void ReplaceStrings(OrderedJson* doc, const std::map<std::string, std::string>& to) {
  if (doc->is_string()) {
    auto it = to.find(doc->get<std::string>());
    if (it != to.end()) *doc = it->second;
  } else if (doc->is_structured()) {
    for (auto& child : *doc) ReplaceStrings(&child, to);
  }
}

}  // namespace

std::string SlurmContextToJson(const SlurmContext& c) {
  json replicas = json::array();
  for (const ReplicaLaunch& r : c.replicas) replicas.push_back(ReplicaToJson(r));
  return json{{"job_uid", c.job_uid},
              {"attempt", c.attempt},
              {"labels", c.labels},
              {"userns_base", c.userns_base},
              {"stop_grace_s", c.stop_grace_s},
              {"replicas", replicas},
              {"registry_password", c.registry_password}}
      .dump();
}

Result<SlurmContext> SlurmContextFromJson(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return InvalidArgument("slurm context: not a JSON object");
  SlurmContext c;
  try {
    c.job_uid = j.at("job_uid").get<std::string>();
    c.attempt = j.at("attempt").get<int>();
    c.labels = j.at("labels").get<std::map<std::string, std::string>>();
    c.userns_base = j.at("userns_base").get<uint32_t>();
    c.stop_grace_s = j.at("stop_grace_s").get<int>();
    for (const json& r : j.at("replicas")) c.replicas.push_back(ReplicaFromJson(r));
    // Absent in the contexts of attempts launched before registry tokens.
    c.registry_password = j.value("registry_password", "");
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("slurm context: ") + e.what());
  }
  if (c.replicas.empty()) return InvalidArgument("slurm context: no replicas");
  return c;
}

std::vector<model::EnvVar> PlaceEnvironment(const std::vector<model::EnvVar>& env,
                                            const std::vector<ReplicaLaunch>& replicas,
                                            const SlurmTopology& placed) {
  std::map<std::string, std::string> to;  // "hostname:2222" -> "host:port".
  std::string primary_host, primary_placed;
  for (const ReplicaLaunch& r : replicas) {
    if (static_cast<size_t>(r.pool) >= placed.addresses.size() ||
        static_cast<size_t>(r.index) >= placed.addresses[r.pool].size()) {
      continue;
    }
    const std::string& where = placed.addresses[r.pool][r.index];
    to[r.hostname + ":" + std::to_string(model::kClusterPort)] = where;
    if (r.pool == 0 && r.index == 0) {
      primary_host = r.hostname;
      primary_placed = where;
    }
  }
  const size_t colon = primary_placed.rfind(':');
  std::vector<model::EnvVar> out = env;
  for (model::EnvVar& e : out) {
    if (e.name == "TF_CONFIG" || e.name == "CLUSTER_SPEC") {
      OrderedJson doc = OrderedJson::parse(e.value, nullptr, false);
      if (doc.is_discarded()) continue;
      ReplaceStrings(&doc, to);
      e.value = doc.dump();
    } else if (colon != std::string::npos && e.name == "MASTER_ADDR" && e.value == primary_host) {
      e.value = primary_placed.substr(0, colon);
      for (model::EnvVar& port : out) {
        if (port.name == "MASTER_PORT") port.value = primary_placed.substr(colon + 1);
      }
    }
  }
  return out;
}

PodmanEnvironment SplitEnvironment(const std::vector<model::EnvVar>& env) {
  PodmanEnvironment out;
  for (const model::EnvVar& e : env) {
    if (e.value.find_first_of("\r\n") != std::string::npos) {
      out.on_command_line.push_back(e);
    } else {
      out.env_file_text += e.name + "=" + e.value + "\n";
    }
  }
  return out;
}

std::string RegistryAuthFile(const SlurmContext& c, const ReplicaLaunch& r) {
  std::optional<std::string> host = images::GoogleRegistryHostOf(r.image);
  if (c.registry_password.empty() || !host) return "";
  const std::string userinfo = "trainyard-job:" + c.registry_password;
  return json{{"auths", {{*host, {{"auth", Base64Encode(userinfo)}}}}}}.dump();
}

std::vector<std::string> PodmanRunArgs(const SlurmContext& c, const ReplicaLaunch& r,
                                       const std::string& env_file, const std::string& auth_file,
                                       const PodmanEnvironment& env,
                                       const std::string& slurm_job_id,
                                       const std::vector<int>& gpu_indices) {
  // No --rm: the launcher keeps the container for a restart in place and removes it
  // when its task ends. Passthrough logging: the container writes into the files the
  // launcher gave the client as stdout and stderr, whatever becomes of the client.
  // No signal proxy: Slurm signals every process of the job (SIGCONT with a
  // preemption), and the client's forwarding then failed into the replica's stderr;
  // the launcher stops the container itself on TERM.
  std::vector<std::string> a = {
      "podman",    "run",          "--name",      r.name,
      "--network", "host",         "--pull",      auth_file.empty() ? "missing" : "always",
      "--quiet",   "--log-driver", "passthrough", "--sig-proxy=false"};
  if (!auth_file.empty()) a.insert(a.end(), {"--authfile", auth_file});
  std::map<std::string, std::string> labels = c.labels;
  labels[kLabelPool] = std::to_string(r.pool);
  labels[kLabelIndex] = std::to_string(r.index);
  labels[kLabelTask] = r.task_name;
  labels[kLabelSlurmJob] = slurm_job_id;
  for (const auto& [k, v] : labels) a.insert(a.end(), {"--label", k + "=" + v});
  a.insert(a.end(), {"--security-opt", "no-new-privileges"});
  for (const std::string& cap : internal::DroppedCapabilities()) {
    a.insert(a.end(), {"--cap-drop", cap});
  }
  if (c.userns_base > 0) {
    const std::string map =
        "0:" + std::to_string(c.userns_base) + ":" + std::to_string(internal::kUsernsSize);
    a.insert(a.end(), {"--uidmap", map, "--gidmap", map});
  }
  if (r.cpu_limit > 0) a.insert(a.end(), {"--cpus", std::to_string(r.cpu_limit)});
  if (r.memory_limit_gb > 0) {
    const auto bytes = static_cast<int64_t>(r.memory_limit_gb * (1LL << 30));
    a.insert(a.end(), {"--memory", std::to_string(bytes) + "b"});
  }
  for (int gpu : gpu_indices)
    a.insert(a.end(), {"--device", "nvidia.com/gpu=" + std::to_string(gpu)});
  for (const Mount& m : r.mounts) {
    a.insert(a.end(),
             {"--volume", m.host_path + ":" + m.container_path + (m.read_only ? ":ro" : "")});
  }
  if (!env_file.empty()) a.insert(a.end(), {"--env-file", env_file});
  for (const model::EnvVar& e : env.on_command_line) {
    a.insert(a.end(), {"--env", e.name + "=" + e.value});
  }
  if (!r.command.empty()) {
    // Docker's semantics: a command replaces ENTRYPOINT and, given alone, also CMD
    // (podman drops the image's CMD once --entrypoint is given).
    a.insert(a.end(), {"--entrypoint", json(r.command).dump()});
  }
  a.push_back(r.image);
  a.insert(a.end(), r.args.begin(), r.args.end());
  return a;
}

}  // namespace ty::executor
