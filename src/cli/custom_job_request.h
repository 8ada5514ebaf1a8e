// Builds the body of `POST /v1/projects/{p}/locations/{l}/customJobs` from the flags
// of `trainyard ai custom-jobs create`, with gcloud's validation rules and error texts
// (docs/contracts/gcloud-cli.md §4; gcloud command_lib/ai/custom_jobs/validation.py) and its
// precedence between `--config` and flags. Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace ty::cli {

struct CustomJobFlags {
  std::string display_name;
  std::vector<std::string> worker_pool_specs;  // Raw values, in flag order ("" = placeholder).
  std::optional<nlohmann::json> config;        // CustomJobSpec read from --config.
  std::vector<std::string> args;               // Raw --args values; each one appends.
  std::optional<std::string> command;          // Raw --command value.
  std::optional<std::string> python_package_uris;
  std::optional<std::string> labels;
  std::optional<std::string> service_account;
  std::optional<std::string> network;
  std::optional<std::string> persistent_resource_id;
  bool enable_web_access = false;
  bool enable_dashboard_access = false;
};

// One `--worker-pool-spec` value -> a WorkerPoolSpec ({} for the empty placeholder).
// InvalidArgument with gcloud's text for unknown keys, bad numbers and every
// per-spec rule (machine-type required, exactly one image, python-module pairing,
// accelerator rules). `local-package-path` (autopackaging) is refused: Trainyard has
// no image builder in the CLI.
Result<nlohmann::json> ParseWorkerPoolSpec(const std::string& value);

// The CustomJob request body. Precedence: the config's spec first; any
// `--worker-pool-spec` replaces its workerPoolSpecs; --args/--command/
// --python-package-uris are set on every pool of the matching kind; --network,
// --service-account, --enable-*, --persistent-resource-id overwrite the spec's.
// InvalidArgument for every gcloud rule (including a missing --config and
// --worker-pool-spec, an empty first pool, underscore keys in the config, and config
// pools without exactly one of containerSpec/pythonPackageSpec).
Result<nlohmann::json> BuildCustomJob(const CustomJobFlags& flags);

}  // namespace ty::cli
