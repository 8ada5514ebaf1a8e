// Text for `trainyard config registry`; see registry_config.h.
#include "cli/registry_config.h"

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

}  // namespace ty::cli
