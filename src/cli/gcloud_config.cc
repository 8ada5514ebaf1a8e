#include "cli/gcloud_config.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace ty::cli {

namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::vector<GcloudSetting> TrainyardSettings(const std::string& endpoint,
                                             const std::string& project, const std::string& region,
                                             const std::string& access_token_file) {
  // The trailing '/' matters: gcloud appends its paths (v1/..., v2/entries:list).
  const std::string base = endpoint + "/";
  return {
      {"api_endpoint_overrides/aiplatform", base},
      {"api_endpoint_overrides/ml", base},
      {"api_endpoint_overrides/logging", base},
      {"api_endpoint_overrides/storage", base},
      {"api_endpoint_overrides/artifactregistry", base},
      // No Google login. A daemon with tokens gets the file's token as a bearer token
      // (gcloud reads the file at each command); one without, no credentials at all.
      {"auth/disable_credentials", access_token_file.empty() ? "True" : "False"},
      {"auth/access_token_file", access_token_file},
      {"core/project", project},
      // `gcloud ai ...` and `ai-platform jobs submit training` need a region.
      {"ai/region", region},
      {"compute/region", region},
      // `gcloud artifacts repositories ...` without --location.
      {"artifacts/location", region},
      // gcloud polls job logs every 60 s by default (`ai-platform jobs submit training
      // --stream-logs`, `ai-platform jobs stream-logs`): a first line a minute late and
      // a job that failed in a second reported after three. Google's quota is the reason
      // for that default, and there is none here. (`ai custom-jobs stream-logs` has no
      // property, only its --polling-interval flag.)
      {"ml_engine/polling_interval", "1"},
  };
}

std::string MergeIni(const std::string& ini, const std::vector<GcloudSetting>& settings) {
  // section -> (key -> value) still to write.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> pending;
  for (const GcloudSetting& s : settings) {
    size_t slash = s.property.find('/');
    pending[s.property.substr(0, slash)].emplace_back(s.property.substr(slash + 1), s.value);
  }
  std::ostringstream out;
  std::string section;
  // Writes what is left of `section` (keys the file did not have yet).
  auto flush = [&](const std::string& name) {
    auto it = pending.find(name);
    if (it == pending.end()) return;
    for (const auto& [k, v] : it->second) out << k << " = " << v << "\n";
    pending.erase(it);
  };
  std::istringstream in(ini);
  std::string line;
  while (std::getline(in, line)) {
    std::string t = Trim(line);
    if (t.size() > 2 && t.front() == '[' && t.back() == ']') {
      flush(section);
      section = t.substr(1, t.size() - 2);
      out << line << "\n";
      continue;
    }
    size_t eq = t.find('=');
    auto it = pending.find(section);
    if (eq != std::string::npos && it != pending.end()) {
      std::string key = Trim(t.substr(0, eq));
      auto& keys = it->second;
      auto k =
          std::find_if(keys.begin(), keys.end(), [&](const auto& kv) { return kv.first == key; });
      if (k != keys.end()) {
        out << key << " = " << k->second << "\n";
        keys.erase(k);
        continue;
      }
    }
    out << line << "\n";
  }
  flush(section);
  for (const auto& [name, keys] : pending) {
    out << "[" << name << "]\n";
    for (const auto& [k, v] : keys) out << k << " = " << v << "\n";
  }
  return out.str();
}

Status CheckConfigurationName(const std::string& name) {
  bool ok = !name.empty() && std::islower(static_cast<unsigned char>(name[0]));
  for (char c : name) {
    ok = ok && (std::islower(static_cast<unsigned char>(c)) ||
                std::isdigit(static_cast<unsigned char>(c)) || c == '-');
  }
  if (ok) return Status::Ok();
  return InvalidArgument("argument --configuration: \"" + name +
                         "\" must start with a lowercase letter and hold only lowercase "
                         "letters, digits and hyphens");
}

}  // namespace ty::cli
