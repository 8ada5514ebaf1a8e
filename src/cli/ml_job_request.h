// Builds the body of `POST /v1/projects/{p}/jobs` (an ml v1 Job) from the flags of
// `trainyard ai-platform jobs submit training` (docs/contracts/gcloud-cli.md §1): the `--config`
// Job is loaded first, then every flag that was given overwrites its field, and user
// args after `--` replace the config's `trainingInput.args`. Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace ty::cli {

struct MlSubmitFlags {
  std::string job_id;                    // Positional JOB.
  std::optional<nlohmann::json> config;  // Job read from --config.
  std::optional<std::string> region;
  std::optional<std::string> module_name;
  std::optional<std::string> packages;  // gs:// URIs only (no uploader here).
  std::optional<std::string> job_dir;
  std::optional<std::string>
      scale_tier;  // basic, standard-1, premium-1, basic-gpu, basic-tpu, custom
  std::optional<std::string> runtime_version;
  std::optional<std::string> python_version;
  std::optional<std::string> master_machine_type;
  std::optional<std::string> master_accelerator;  // type=T,count=N
  std::optional<std::string> master_image_uri;
  std::optional<std::string> worker_machine_type;
  std::optional<int64_t> worker_count;
  std::optional<std::string> worker_accelerator;
  std::optional<std::string> worker_image_uri;
  std::optional<std::string> parameter_server_machine_type;
  std::optional<int64_t> parameter_server_count;
  std::optional<std::string> parameter_server_accelerator;
  std::optional<std::string> parameter_server_image_uri;
  std::optional<std::string> use_chief_in_tf_config;  // "true" / "false"
  std::optional<std::string> service_account;
  std::optional<std::string> labels;
  bool enable_web_access = false;
  std::vector<std::string> user_args;  // After a bare `--`; empty = keep config args.
};

// The Job body, jobId included. InvalidArgument with gcloud's texts: both
// --master-image-uri and --runtime-version, CUSTOM tier without a master type, an
// incomplete worker/parameter-server group, a bad accelerator, local packages, no
// region, and a job with neither packages nor a master image.
Result<nlohmann::json> BuildMlJob(const MlSubmitFlags& flags);

}  // namespace ty::cli
