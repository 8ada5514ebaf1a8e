// Text for `trainyard config registry`; see registry_config.h.
#include "cli/registry_config.h"

#include <nlohmann/json.hpp>
#include <sstream>

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

Result<std::string> MergeAuthFile(const std::string& auth_json,
                                  const std::vector<std::string>& hosts, bool remove) {
  nlohmann::json doc = auth_json.empty() ? nlohmann::json::object()
                                         : nlohmann::json::parse(auth_json, nullptr, false);
  if (!doc.is_object()) return InvalidArgument("the auth file is not a JSON object");
  if (!doc.contains("auths")) doc["auths"] = nlohmann::json::object();
  nlohmann::json& auths = doc["auths"];
  if (!auths.is_object()) return InvalidArgument("the auth file's \"auths\" is not an object");
  const nlohmann::json ours = {{"auth", kRegistryAuth}};
  for (const std::string& host : hosts) {
    if (remove) {
      if (auths.contains(host) && auths[host] == ours) auths.erase(host);
    } else if (!auths.contains(host)) {
      auths[host] = ours;
    }
  }
  return doc.dump(2) + "\n";
}

}  // namespace ty::cli
