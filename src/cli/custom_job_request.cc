// `ai custom-jobs create` request building; see custom_job_request.h. The error texts
// are gcloud's (validation.py), so scripts and users see familiar messages.
#include "cli/custom_job_request.h"

#include <algorithm>
#include <map>

#include "cli/flag_values.h"

namespace ty::cli {
namespace {

constexpr char kFlag[] = "--worker-pool-spec";

const std::vector<std::string>& KnownKeys() {
  static const std::vector<std::string> keys = {"accelerator-count",
                                                "accelerator-type",
                                                "container-image-uri",
                                                "executor-image-uri",
                                                "extra-dirs",
                                                "extra-packages",
                                                "local-package-path",
                                                "machine-type",
                                                "output-image-uri",
                                                "python-module",
                                                "replica-count",
                                                "requirements",
                                                "script"};
  return keys;
}

// MachineSpec.AcceleratorType names gcloud offers (NVIDIA* and TPU*), sorted.
const std::vector<std::string>& AcceleratorTypes() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> t = {"NVIDIA_TESLA_K80",
                                  "NVIDIA_TESLA_P100",
                                  "NVIDIA_TESLA_V100",
                                  "NVIDIA_TESLA_P4",
                                  "NVIDIA_TESLA_T4",
                                  "NVIDIA_TESLA_A100",
                                  "NVIDIA_A100_80GB",
                                  "NVIDIA_L4",
                                  "NVIDIA_H100_80GB",
                                  "NVIDIA_H100_MEGA_80GB",
                                  "NVIDIA_H200_141GB",
                                  "NVIDIA_B200",
                                  "NVIDIA_GB200",
                                  "NVIDIA_RTX_PRO_6000",
                                  "TPU_V2",
                                  "TPU_V3",
                                  "TPU_V4_POD",
                                  "TPU_V5_LITEPOD"};
    std::sort(t.begin(), t.end());
    return t;
  }();
  return types;
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// gcloud's per-spec checks, in gcloud's order (hardware first, then software).
Status ValidateSpecKeys(const std::map<std::string, std::string>& spec) {
  if (!spec.count("machine-type")) {
    return InvalidFlag(kFlag, "Key [machine-type] required in dict arg but not provided.");
  }
  if (spec.count("accelerator-count") && !spec.count("accelerator-type")) {
    return InvalidFlag(kFlag,
                       "Key [accelerator-type] required as [accelerator-count] is specified.");
  }
  if (auto it = spec.find("accelerator-type"); it != spec.end() && !it->second.empty()) {
    const auto& valid = AcceleratorTypes();
    if (std::find(valid.begin(), valid.end(), it->second) == valid.end()) {
      return InvalidFlag(kFlag, "Found invalid value of [accelerator-type]: " + it->second +
                                    ". Available values are [" + Join(valid, ", ") + "].");
    }
  }
  if (spec.count("local-package-path")) {
    return InvalidFlag(kFlag,
                       "Key [local-package-path] is not supported by trainyard: build the "
                       "image yourself (podman build) and use [container-image-uri].");
  }
  bool executor = spec.count("executor-image-uri");
  bool container = spec.count("container-image-uri");
  bool module = spec.count("python-module");
  if (executor + container != 1) {
    return InvalidFlag(
        kFlag, "Exactly one of keys [executor-image-uri, container-image-uri] is required.");
  }
  if (container && module) {
    return InvalidFlag(
        kFlag, "Key [python-module] is not allowed together with key [container-image-uri].");
  }
  if (executor && !module) return InvalidFlag(kFlag, "Key [python-module] is required.");
  std::vector<std::string> unexpected;
  for (const char* k : {"extra-dirs", "extra-packages", "requirements", "script"}) {
    if (spec.count(k)) unexpected.push_back(k);
  }
  if (!unexpected.empty()) {
    return InvalidFlag(kFlag, "Keys [" + Join(unexpected, ", ") +
                                  "] are not allowed: Only allow to specify together with "
                                  "`local-package-path` in the first `--worker-pool-spec` flag.");
  }
  return Status::Ok();
}

// Recursively rejects snake_case keys: gcloud maps the YAML onto the API message and
// only knows camelCase field names. Map-valued fields (labels, env values) are lists
// or user keys, so only keys of this schema's objects are inspected.
Status CheckCamelCase(const nlohmann::json& value, const std::string& path) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it.key().find('_') != std::string::npos) {
        return InvalidFlag("--config", "Invalid field [" + it.key() + "] in " +
                                           (path.empty() ? std::string("the config file") : path) +
                                           ": keys must be camelCase, as in the API.");
      }
      RETURN_IF_ERROR(CheckCamelCase(it.value(), path.empty() ? it.key() : path + "." + it.key()));
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      RETURN_IF_ERROR(CheckCamelCase(value[i], path + "[" + std::to_string(i) + "]"));
    }
  }
  return Status::Ok();
}

bool NonEmptyString(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() && !it->get<std::string>().empty();
}

Status ValidateConfigPools(const nlohmann::json& spec) {
  auto pools = spec.find("workerPoolSpecs");
  if (pools == spec.end() || !pools->is_array() || pools->empty()) {
    return InvalidFlag("--config",
                       "At least one [workerPoolSpecs] is required in the YAML config file.");
  }
  for (const nlohmann::json& pool : *pools) {
    bool package = false, container = false;
    if (pool.is_object()) {
      if (auto p = pool.find("pythonPackageSpec"); p != pool.end() && p->is_object()) {
        package = NonEmptyString(*p, "executorImageUri") || NonEmptyString(*p, "pythonModule");
      }
      if (auto c = pool.find("containerSpec"); c != pool.end() && c->is_object()) {
        container = NonEmptyString(*c, "imageUri");
      }
    }
    if (package == container) {
      return InvalidFlag("--config",
                         "Exactly one of fields [pythonPackageSpec, containerSpec] is required "
                         "for a [workerPoolSpecs] in the YAML config file.");
    }
  }
  return Status::Ok();
}

nlohmann::json StringArray(const std::vector<std::string>& items) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : items) a.push_back(s);
  return a;
}

}  // namespace

Result<nlohmann::json> ParseWorkerPoolSpec(const std::string& value) {
  if (value.empty()) return nlohmann::json::object();
  auto pairs = ParseDict(value);
  if (!pairs.ok())
    return Status(InvalidArgument("argument --worker-pool-spec: " + pairs.status().message()));
  std::map<std::string, std::string> spec;
  for (const auto& [k, v] : *pairs) {
    const auto& known = KnownKeys();
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      return Status(InvalidArgument("argument --worker-pool-spec: valid keys are [" +
                                    Join(known, ", ") + "]; received: " + k));
    }
    spec[k] = v;
  }
  RETURN_IF_ERROR(ValidateSpecKeys(spec));

  nlohmann::json pool = nlohmann::json::object();
  nlohmann::json machine = {{"machineType", spec["machine-type"]}};
  if (auto it = spec.find("accelerator-type"); it != spec.end() && !it->second.empty()) {
    int64_t count = 1;
    if (auto c = spec.find("accelerator-count"); c != spec.end()) {
      std::optional<int64_t> n = ParseInt(c->second);
      if (!n || *n < 1) {
        return Status(
            InvalidArgument("argument --worker-pool-spec: Value of [accelerator-count] must be "
                            "a positive integer; received: " +
                            c->second));
      }
      count = *n;
    }
    machine["acceleratorType"] = it->second;
    machine["acceleratorCount"] = count;  // int32: a JSON number.
  }
  pool["machineSpec"] = machine;
  int64_t replicas = 1;
  if (auto it = spec.find("replica-count"); it != spec.end()) {
    std::optional<int64_t> n = ParseInt(it->second);
    if (!n || *n < 1) {
      return Status(
          InvalidArgument("argument --worker-pool-spec: Value of [replica-count] must be a "
                          "positive integer; received: " +
                          it->second));
    }
    replicas = *n;
  }
  pool["replicaCount"] = std::to_string(replicas);  // int64: a JSON string (proto3 JSON).
  if (spec.count("container-image-uri")) {
    pool["containerSpec"] = {{"imageUri", spec["container-image-uri"]}};
  } else {
    pool["pythonPackageSpec"] = {{"executorImageUri", spec["executor-image-uri"]},
                                 {"pythonModule", spec["python-module"]}};
  }
  return pool;
}

namespace {

// --args, --command and --python-package-uris, over every pool of the spec (as gcloud
// does: they replace what the config says).
void ApplyContainerFlags(const CustomJobFlags& flags, nlohmann::json& spec) {
  // Repeated --args append, as gcloud's `action=append` list flag does.
  std::optional<std::vector<std::string>> args;
  for (const std::string& a : flags.args) {
    if (!args) args.emplace();
    for (std::string& item : SplitList(a)) args->push_back(std::move(item));
  }
  std::optional<std::vector<std::string>> command;
  if (flags.command) command = SplitList(*flags.command);
  std::optional<std::vector<std::string>> package_uris;
  if (flags.python_package_uris) package_uris = SplitList(*flags.python_package_uris);
  for (nlohmann::json& pool : spec["workerPoolSpecs"]) {
    if (!pool.is_object()) continue;
    if (auto c = pool.find("containerSpec"); c != pool.end() && c->is_object()) {
      if (args) (*c)["args"] = StringArray(*args);
      if (command) (*c)["command"] = StringArray(*command);
    }
    if (auto p = pool.find("pythonPackageSpec"); p != pool.end() && p->is_object()) {
      if (args) (*p)["args"] = StringArray(*args);
      if (package_uris) (*p)["packageUris"] = StringArray(*package_uris);
    }
  }
}

}  // namespace

Result<nlohmann::json> BuildCustomJob(const CustomJobFlags& flags) {
  if (flags.display_name.empty()) {
    return Status(InvalidArgument("argument --display-name: Must be specified."));
  }
  if (flags.worker_pool_specs.empty() && !flags.config) {
    return Status(
        InvalidArgument("argument (--config=CONFIG --worker-pool-spec=[WORKER_POOL_SPEC,...]): "
                        "Must be specified."));
  }
  nlohmann::json spec = nlohmann::json::object();
  if (flags.config) {
    if (!flags.config->is_object()) {
      return Status(
          InvalidFlag("--config", "the file must hold a CustomJobSpec (a YAML mapping)."));
    }
    RETURN_IF_ERROR(CheckCamelCase(*flags.config, ""));
    spec = *flags.config;
  }

  if (!flags.worker_pool_specs.empty()) {
    if (flags.worker_pool_specs.front().empty()) {
      return Status(InvalidFlag(
          kFlag, "Empty value is not allowed for the first `--worker-pool-spec` flag."));
    }
    nlohmann::json pools = nlohmann::json::array();
    for (const std::string& value : flags.worker_pool_specs) {
      ASSIGN_OR_RETURN(nlohmann::json pool, ParseWorkerPoolSpec(value));
      pools.push_back(std::move(pool));
    }
    spec["workerPoolSpecs"] = std::move(pools);
  } else {
    RETURN_IF_ERROR(ValidateConfigPools(spec));
  }

  ApplyContainerFlags(flags, spec);
  if (flags.service_account) spec["serviceAccount"] = *flags.service_account;
  if (flags.network) spec["network"] = *flags.network;
  if (flags.persistent_resource_id) spec["persistentResourceId"] = *flags.persistent_resource_id;
  if (flags.enable_web_access) spec["enableWebAccess"] = true;
  if (flags.enable_dashboard_access) spec["enableDashboardAccess"] = true;

  nlohmann::json job = {{"displayName", flags.display_name}, {"jobSpec", std::move(spec)}};
  if (flags.labels) {
    ASSIGN_OR_RETURN(nlohmann::json labels, ParseLabels("--labels", *flags.labels));
    job["labels"] = std::move(labels);
  }
  return job;
}

}  // namespace ty::cli
