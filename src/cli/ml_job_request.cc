// `ai-platform jobs submit training` request building; see ml_job_request.h.
#include "cli/ml_job_request.h"

#include <algorithm>
#include <cctype>

#include "cli/flag_values.h"

namespace ty::cli {
namespace {

// `--master-accelerator=type=nvidia-tesla-t4,count=1` -> {"type": "NVIDIA_TESLA_T4",
// "count": "1"}; gcloud upper-cases and turns '-' into '_'.
Result<nlohmann::json> ParseAccelerator(const std::string& flag, const std::string& value) {
  auto pairs = ParseDict(value);
  if (!pairs.ok())
    return Status(InvalidArgument("argument " + flag + ": " + pairs.status().message()));
  std::string type, count;
  for (const auto& [k, v] : *pairs) {
    if (k == "type") {
      type = v;
    } else if (k == "count") {
      count = v;
    } else {
      return Status(
          InvalidArgument("argument " + flag + ": valid keys are [count, type]; received: " + k));
    }
  }
  if (type.empty()) {
    return Status(
        InvalidArgument("argument " + flag + ": Key [type] required in dict arg but not provided"));
  }
  if (count.empty()) {
    return Status(InvalidArgument("argument " + flag +
                                  ": Key [count] required in dict arg but not provided"));
  }
  std::optional<int64_t> n = ParseInt(count);
  if (!n || *n <= 0)
    return Status(InvalidFlag(flag, "The count of the accelerator must be greater than 0."));
  for (char& c : type)
    c = (c == '-') ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return nlohmann::json{{"type", type}, {"count", std::to_string(*n)}};
}

std::string TierName(std::string tier) {
  for (char& c : tier)
    c = (c == '-') ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return tier;
}

bool HasString(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() && !it->get<std::string>().empty();
}

// The flags gcloud checks before it builds anything, with gcloud's messages.
Status CheckMlFlags(const MlSubmitFlags& flags) {
  if (flags.master_image_uri && flags.runtime_version) {
    return InvalidArgument("Only one of --master-image-uri, --runtime-version can be set.");
  }
  if (flags.worker_machine_type.has_value() != flags.worker_count.has_value()) {
    return InvalidArgument(
        "argument --worker-count --worker-machine-type: Both must be specified.");
  }
  if (flags.parameter_server_machine_type.has_value() != flags.parameter_server_count.has_value()) {
    return InvalidArgument(
        "argument --parameter-server-count --parameter-server-machine-type: Both "
        "must be specified.");
  }
  if (flags.worker_count && *flags.worker_count < 1) {
    return InvalidFlag("--worker-count", "Value must be greater than or equal to 1; received: " +
                                             std::to_string(*flags.worker_count));
  }
  if (flags.parameter_server_count && *flags.parameter_server_count < 1) {
    return InvalidFlag("--parameter-server-count",
                       "Value must be greater than or equal to 1; received: " +
                           std::to_string(*flags.parameter_server_count));
  }
  static const std::vector<std::string> kTiers = {"basic",     "standard-1", "premium-1",
                                                  "basic-gpu", "basic-tpu",  "custom"};
  if (flags.scale_tier &&
      std::find(kTiers.begin(), kTiers.end(), *flags.scale_tier) == kTiers.end()) {
    return InvalidArgument("argument --scale-tier: Invalid choice: '" + *flags.scale_tier +
                           "'. Valid choices are [basic, basic-gpu, basic-tpu, custom, "
                           "premium-1, standard-1].");
  }
  return Status::Ok();
}

// --packages: gs:// URIs only (there is no uploader).
Result<nlohmann::json> PackageUris(const std::string& packages) {
  nlohmann::json uris = nlohmann::json::array();
  for (const std::string& p : SplitList(packages)) {
    if (p.rfind("gs://", 0) != 0) {
      return InvalidFlag("--packages", "[" + p +
                                           "] is a local file; trainyard has no uploader: "
                                           "copy it into a bucket and pass its gs:// URI.");
    }
    uris.push_back(p);
  }
  return uris;
}

// The master, worker and parameter-server flags into trainingInput.
Status ApplyPoolFlags(const MlSubmitFlags& flags, nlohmann::json& input) {
  if (flags.master_machine_type) input["masterType"] = *flags.master_machine_type;
  if (flags.master_image_uri) input["masterConfig"]["imageUri"] = *flags.master_image_uri;
  if (flags.master_accelerator) {
    ASSIGN_OR_RETURN(input["masterConfig"]["acceleratorConfig"],
                     ParseAccelerator("--master-accelerator", *flags.master_accelerator));
  }
  if (flags.worker_machine_type) {
    input["workerType"] = *flags.worker_machine_type;
    input["workerCount"] = std::to_string(*flags.worker_count);  // int64 as string.
  }
  if (flags.worker_image_uri) input["workerConfig"]["imageUri"] = *flags.worker_image_uri;
  if (flags.worker_accelerator) {
    ASSIGN_OR_RETURN(input["workerConfig"]["acceleratorConfig"],
                     ParseAccelerator("--worker-accelerator", *flags.worker_accelerator));
  }
  if (flags.parameter_server_machine_type) {
    input["parameterServerType"] = *flags.parameter_server_machine_type;
    input["parameterServerCount"] = std::to_string(*flags.parameter_server_count);
  }
  if (flags.parameter_server_image_uri) {
    input["parameterServerConfig"]["imageUri"] = *flags.parameter_server_image_uri;
  }
  if (flags.parameter_server_accelerator) {
    ASSIGN_OR_RETURN(
        input["parameterServerConfig"]["acceleratorConfig"],
        ParseAccelerator("--parameter-server-accelerator", *flags.parameter_server_accelerator));
  }
  return Status::Ok();
}

// What gcloud requires of the finished trainingInput (flags and --config together).
Status CheckMlInput(const nlohmann::json& input) {
  if (!HasString(input, "region")) {
    return InvalidArgument(
        "The required property [region] is not currently set.\n"
        "It can be set on a per-command basis by re-running your command with the "
        "[--region] flag.");
  }
  if (HasString(input, "scaleTier") && input["scaleTier"] == "CUSTOM" &&
      !HasString(input, "masterType")) {
    return InvalidArgument("--master-machine-type is required if scale-tier is set to CUSTOM.");
  }
  bool has_packages = input.contains("packageUris") && input["packageUris"].is_array() &&
                      !input["packageUris"].empty();
  bool has_image = input.contains("masterConfig") && input["masterConfig"].is_object() &&
                   HasString(input["masterConfig"], "imageUri");
  if (!has_packages && !has_image) return InvalidArgument("Non-custom jobs must have packages.");
  return Status::Ok();
}

}  // namespace

Result<nlohmann::json> BuildMlJob(const MlSubmitFlags& flags) {
  RETURN_IF_ERROR(CheckMlFlags(flags));
  nlohmann::json job = nlohmann::json::object();
  if (flags.config) {
    if (!flags.config->is_object()) {
      return Status(InvalidFlag("--config", "the file must hold a Job (a YAML mapping)."));
    }
    job = *flags.config;
  }
  job["jobId"] = flags.job_id;
  nlohmann::json& input = job["trainingInput"];
  if (!input.is_object()) input = nlohmann::json::object();

  if (flags.labels) {
    ASSIGN_OR_RETURN(nlohmann::json labels, ParseLabels("--labels", *flags.labels));
    job["labels"] = std::move(labels);
  }
  if (flags.region) input["region"] = *flags.region;
  if (flags.module_name) input["pythonModule"] = *flags.module_name;
  if (flags.packages) {
    ASSIGN_OR_RETURN(input["packageUris"], PackageUris(*flags.packages));
  }
  if (flags.job_dir) input["jobDir"] = *flags.job_dir;
  if (flags.scale_tier) input["scaleTier"] = TierName(*flags.scale_tier);
  if (flags.runtime_version) input["runtimeVersion"] = *flags.runtime_version;
  if (flags.python_version) input["pythonVersion"] = *flags.python_version;
  RETURN_IF_ERROR(ApplyPoolFlags(flags, input));
  if (flags.use_chief_in_tf_config) {
    if (*flags.use_chief_in_tf_config != "true" && *flags.use_chief_in_tf_config != "false") {
      return Status(InvalidFlag("--use-chief-in-tf-config", "expected true or false."));
    }
    input["useChiefInTfConfig"] = *flags.use_chief_in_tf_config == "true";
  }
  if (flags.service_account) input["serviceAccount"] = *flags.service_account;
  if (flags.enable_web_access) input["enableWebAccess"] = true;
  // gcloud: user args replace the config's args entirely (an absent `--` keeps them).
  if (!flags.user_args.empty()) input["args"] = flags.user_args;
  RETURN_IF_ERROR(CheckMlInput(input));
  return job;
}

}  // namespace ty::cli
