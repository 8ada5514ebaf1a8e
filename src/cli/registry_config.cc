// Text for `trainyard config registry`; see registry_config.h.
#include "cli/registry_config.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "auth/replica_credentials.h"
#include "common/files.h"

namespace ty::cli {

std::string MergeHostsBlock(const std::string& hosts_file, const std::string& ip,
                            const std::vector<std::string>& hosts) {
  std::istringstream in(hosts_file);
  std::string out;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line == kHostsBlockBegin) {
      inside = true;
    } else if (inside && line == kHostsBlockEnd) {
      inside = false;
    } else if (!inside) {
      out += line + "\n";
    }
  }
  if (ip.empty()) return out;
  out += std::string(kHostsBlockBegin) + "\n";
  // One host per line: some resolvers cap a line's length.
  for (const std::string& host : hosts) out += ip + " " + host + "\n";
  out += std::string(kHostsBlockEnd) + "\n";
  return out;
}

std::string RegistriesConfDropIn(const std::vector<std::string>& hosts) {
  std::string out =
      "# Written by `trainyard config registry`: Google's registry names are served by\n"
      "# trainyardd's registry over plain HTTP (/etc/hosts maps them to it).\n";
  for (const std::string& host : hosts) {
    out += "\n[[registry]]\nlocation = \"" + host + "\"\ninsecure = true\n";
  }
  return out;
}

namespace {

// Whether an auths entry is one of ours (user "trainyard").
bool IsOurs(const nlohmann::json& entry) {
  if (!entry.is_object() || !entry.contains("auth") || !entry["auth"].is_string()) return false;
  const std::string userinfo = auth::BasicUserinfo("Basic " + entry["auth"].get<std::string>());
  return userinfo.rfind(std::string(kRegistryAuthUser) + ":", 0) == 0;
}

}  // namespace

Result<std::string> MergeAuthFile(const std::string& auth_json,
                                  const std::vector<std::string>& hosts, AuthEntries mode,
                                  const std::string& token) {
  nlohmann::json doc = auth_json.empty() ? nlohmann::json::object()
                                         : nlohmann::json::parse(auth_json, nullptr, false);
  if (!doc.is_object()) return InvalidArgument("the auth file is not a JSON object");
  if (!doc.contains("auths")) doc["auths"] = nlohmann::json::object();
  nlohmann::json& auths = doc["auths"];
  if (!auths.is_object()) return InvalidArgument("the auth file's \"auths\" is not an object");
  const nlohmann::json placeholder = {{"auth", kRegistryAuth}};
  const nlohmann::json with_token = {
      {"auth", Base64Encode(std::string(kRegistryAuthUser) + ":" + token)}};
  for (const std::string& host : hosts) {
    const bool present = auths.contains(host);
    const bool ours = present && IsOurs(auths[host]);
    switch (mode) {
      case AuthEntries::kRemove:
        if (ours) auths.erase(host);
        break;
      case AuthEntries::kPlaceholder:
        if (!present) auths[host] = placeholder;
        break;
      case AuthEntries::kToken:
        if (!present || ours) auths[host] = with_token;
        break;
    }
  }
  return doc.dump(2) + "\n";
}

}  // namespace ty::cli
