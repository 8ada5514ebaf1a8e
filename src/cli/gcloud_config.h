// Pointing the real gcloud at trainyardd in one step (`trainyard config gcloud`):
// a named gcloud configuration whose endpoint overrides send the training, logging
// and storage APIs to the daemon (what the installed gcloud's source reads; docs/api.md).
//
// gcloud keeps each named configuration as an INI file,
// `<CLOUDSDK_CONFIG or ~/.config/gcloud>/configurations/config_<NAME>`, and the
// active one's name in `<dir>/active_config`. Writing those files directly (rather
// than running `gcloud config set` seven times, ~1 s each) also works where gcloud
// is not installed yet. Settings other than ours in an existing file are kept.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace ty::cli {

// One property: "section/key" = value, as `gcloud config set` names it.
struct GcloudSetting {
  std::string property;  // "api_endpoint_overrides/logging"
  std::string value;
};

// The settings for a daemon at `endpoint` (no trailing '/'), `project`, `region`.
std::vector<GcloudSetting> TrainyardSettings(const std::string& endpoint,
                                             const std::string& project, const std::string& region,
                                             const std::string& access_token_file = "");

// `ini` with every setting set (sections and keys added or replaced in place,
// everything else kept as it was).
std::string MergeIni(const std::string& ini, const std::vector<GcloudSetting>& settings);

// The configuration name gcloud rejects: it allows lowercase letters, digits and
// '-', starting with a letter. InvalidArgument naming the flag otherwise.
Status CheckConfigurationName(const std::string& name);

}  // namespace ty::cli
