#include "service/capacity_config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace ty::service {

namespace {

constexpr double kDefaultCpuOvercommit = 8;
constexpr double kDefaultMemoryOvercommit = 3;

// Words of a GPU name, upper case, split at spaces, dashes and underscores.
std::vector<std::string> Words(const std::string& name) {
  std::vector<std::string> out;
  std::string w;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_') {
      if (!w.empty()) out.push_back(w);
      w.clear();
    } else {
      w += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  if (!w.empty()) out.push_back(w);
  return out;
}

std::string AcceleratorTypeOf(const std::string& model) {
  std::vector<std::string> w = Words(model);
  auto has = [&](const char* word) { return std::find(w.begin(), w.end(), word) != w.end(); };
  auto has_prefix = [&](const char* prefix) {
    return std::any_of(w.begin(), w.end(),
                       [&](const std::string& x) { return x.rfind(prefix, 0) == 0; });
  };
  if (has("GB200")) return "NVIDIA_GB200";
  if (has("B200")) return "NVIDIA_B200";
  if (has("H200")) return "NVIDIA_H200_141GB";
  if (has("H100")) return has("MEGA") ? "NVIDIA_H100_MEGA_80GB" : "NVIDIA_H100_80GB";
  if (has("A100")) return has_prefix("80GB") ? "NVIDIA_A100_80GB" : "NVIDIA_TESLA_A100";
  if (has("L4")) return "NVIDIA_L4";
  if (has("T4")) return "NVIDIA_TESLA_T4";
  if (has("V100")) return "NVIDIA_TESLA_V100";
  if (has("P100")) return "NVIDIA_TESLA_P100";
  if (has("P4")) return "NVIDIA_TESLA_P4";
  if (has("K80")) return "NVIDIA_TESLA_K80";
  if (has("RTX") && has("PRO") && has("6000")) return "NVIDIA_RTX_PRO_6000";
  std::string out = "NVIDIA";
  for (const std::string& x : w) {
    if (x != "NVIDIA" && x != "TESLA") out += "_" + x;
  }
  return out;
}

Status NeedObject(const nlohmann::json& v, const std::string& key) {
  if (!v.is_object()) return InvalidArgument("config: " + key + " must be a mapping");
  return Status::Ok();
}

Result<double> PositiveNumber(const nlohmann::json& v, const std::string& key, bool allow_zero) {
  if (!v.is_number() || v.get<double>() < 0 || (!allow_zero && v.get<double>() == 0)) {
    return InvalidArgument("config: " + key + " must be a " +
                           (allow_zero ? "non-negative" : "positive") + " number");
  }
  return v.get<double>();
}

Status ReadOnly(const nlohmann::json& v, const std::string& key,
                std::initializer_list<const char*> known) {
  RETURN_IF_ERROR(NeedObject(v, key));
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; })) {
      return InvalidArgument("config: " + key + ": unknown key \"" + it.key() + "\"");
    }
  }
  return Status::Ok();
}

Result<scheduler::Node> DeclaredNode(const nlohmann::json& v) {
  RETURN_IF_ERROR(ReadOnly(v, "capacity", {"cpus", "memory_gb", "gpus"}));
  if (!v.contains("cpus") || !v.contains("memory_gb")) {
    return InvalidArgument("config: capacity needs cpus and memory_gb");
  }
  scheduler::Node n;
  n.name = "host";
  ASSIGN_OR_RETURN(n.cpus, PositiveNumber(v["cpus"], "capacity.cpus", false));
  ASSIGN_OR_RETURN(n.memory_gb, PositiveNumber(v["memory_gb"], "capacity.memory_gb", false));
  if (v.contains("gpus")) {
    RETURN_IF_ERROR(NeedObject(v["gpus"], "capacity.gpus"));
    int index = 0;
    for (auto it = v["gpus"].begin(); it != v["gpus"].end(); ++it) {
      if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 64) {
        return InvalidArgument("config: capacity.gpus." + it.key() +
                               " must be an integer from 0 to 64");
      }
      for (int64_t i = 0; i < it->get<int64_t>(); ++i) n.gpus.push_back({it.key(), index++});
    }
  }
  return n;
}

Status ReadQuotas(const nlohmann::json& v, std::map<std::string, scheduler::Quota>* out) {
  RETURN_IF_ERROR(NeedObject(v, "quotas"));
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string key = "quotas." + it.key();
    RETURN_IF_ERROR(ReadOnly(*it, key, {"jobs", "cpus", "gpus"}));
    scheduler::Quota q;
    if (it->contains("jobs")) {
      ASSIGN_OR_RETURN(double jobs, PositiveNumber((*it)["jobs"], key + ".jobs", true));
      q.jobs = static_cast<int64_t>(jobs);
    }
    if (it->contains("cpus")) {
      ASSIGN_OR_RETURN(q.cpus, PositiveNumber((*it)["cpus"], key + ".cpus", true));
    }
    if (it->contains("gpus")) {
      ASSIGN_OR_RETURN(double gpus, PositiveNumber((*it)["gpus"], key + ".gpus", true));
      q.gpus = static_cast<int64_t>(gpus);
    }
    (*out)[it.key()] = q;
  }
  return Status::Ok();
}

Status ReadMachineTypes(const nlohmann::json& v, model::MachineOverrides* out) {
  RETURN_IF_ERROR(NeedObject(v, "machine_types"));
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string key = "machine_types." + it.key();
    RETURN_IF_ERROR(ReadOnly(*it, key, {"cpus", "memory_gb"}));
    if (!it->contains("cpus") || !it->contains("memory_gb")) {
      return InvalidArgument("config: " + key + " needs cpus and memory_gb");
    }
    model::MachineShape shape;
    ASSIGN_OR_RETURN(shape.vcpus, PositiveNumber((*it)["cpus"], key + ".cpus", false));
    ASSIGN_OR_RETURN(shape.memory_gb,
                     PositiveNumber((*it)["memory_gb"], key + ".memory_gb", false));
    (*out)[it.key()] = shape;
  }
  return Status::Ok();
}

}  // namespace

std::vector<scheduler::Gpu> ParseNvidiaSmiList(const std::string& text) {
  std::vector<scheduler::Gpu> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    int index = -1;
    int consumed = 0;
    if (std::sscanf(line.c_str(), "GPU %d: %n", &index, &consumed) < 1 || consumed == 0) continue;
    std::string model = line.substr(static_cast<size_t>(consumed));
    if (size_t paren = model.find(" ("); paren != std::string::npos) model.resize(paren);
    out.push_back({AcceleratorTypeOf(model), index});
  }
  return out;
}

HostInventory DetectHost() {
  HostInventory h;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) == 0 && name[0]) h.name = name;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 0) h.cpus = static_cast<double>(cpus);
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  long long kb = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemTotal:") {
      h.memory_gb = static_cast<double>(kb) / (1024.0 * 1024.0);
      break;
    }
    meminfo.ignore(256, '\n');
  }
  // nvidia-smi is there only where a driver is; absent is the common case.
  if (FILE* p = popen("nvidia-smi -L 2>/dev/null", "r")) {
    std::string text;
    char buf[512];
    while (fgets(buf, sizeof(buf), p)) text += buf;
    pclose(p);
    h.gpus = ParseNvidiaSmiList(text);
  }
  return h;
}

const std::vector<std::string>& AdmissionConfigKeys() {
  static const std::vector<std::string> keys = {"capacity", "overcommit", "strict", "quotas",
                                                "machine_types"};
  return keys;
}

// The keys besides `capacity` (overcommit, strict, quotas, machine_types) onto `out`.
Status ApplyAdmissionKeys(const nlohmann::json& doc, AdmissionOptions* out);

Result<AdmissionOptions> AdmissionOptionsFromConfig(const nlohmann::json& doc,
                                                    const HostInventory& host) {
  AdmissionOptions o;
  scheduler::Capacity& c = o.capacity;
  const bool declared = doc.is_object() && doc.contains("capacity");
  if (declared) {
    ASSIGN_OR_RETURN(scheduler::Node node, DeclaredNode(doc["capacity"]));
    node.name = host.name;
    c.nodes.push_back(std::move(node));
    c.strict = true;
  } else {
    c.nodes.push_back({host.name, host.cpus, host.memory_gb, host.gpus});
    c.cpu_overcommit = kDefaultCpuOvercommit;
    c.memory_overcommit = kDefaultMemoryOvercommit;
    c.strict = false;
  }
  RETURN_IF_ERROR(ApplyAdmissionKeys(doc, &o));
  return o;
}

Result<AdmissionOptions> AdmissionOptionsForCluster(const nlohmann::json& doc,
                                                    const std::vector<HostInventory>& hosts) {
  if (hosts.empty()) return InvalidArgument("the cluster has no nodes");
  if (doc.is_object() && doc.contains("capacity")) return AdmissionOptionsFromConfig(doc, hosts[0]);
  AdmissionOptions o;
  for (const HostInventory& h : hosts)
    o.capacity.nodes.push_back({h.name, h.cpus, h.memory_gb, h.gpus});
  o.capacity.strict = false;
  RETURN_IF_ERROR(ApplyAdmissionKeys(doc, &o));
  return o;
}

Status ApplyAdmissionKeys(const nlohmann::json& doc, AdmissionOptions* out) {
  AdmissionOptions& o = *out;
  scheduler::Capacity& c = o.capacity;
  if (!doc.is_object()) return Status::Ok();
  if (doc.contains("overcommit")) {
    const nlohmann::json& v = doc["overcommit"];
    RETURN_IF_ERROR(ReadOnly(v, "overcommit", {"cpu", "memory"}));
    if (v.contains("cpu")) {
      ASSIGN_OR_RETURN(c.cpu_overcommit, PositiveNumber(v["cpu"], "overcommit.cpu", false));
    }
    if (v.contains("memory")) {
      ASSIGN_OR_RETURN(c.memory_overcommit,
                       PositiveNumber(v["memory"], "overcommit.memory", false));
    }
  }
  if (doc.contains("strict")) {
    if (!doc["strict"].is_boolean()) return InvalidArgument("config: strict must be true or false");
    c.strict = doc["strict"].get<bool>();
  }
  if (doc.contains("quotas")) RETURN_IF_ERROR(ReadQuotas(doc["quotas"], &c.quotas));
  if (doc.contains("machine_types")) {
    RETURN_IF_ERROR(ReadMachineTypes(doc["machine_types"], &o.machine_types));
  }
  return Status::Ok();
}

}  // namespace ty::service
