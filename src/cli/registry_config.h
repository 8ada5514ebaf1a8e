// `trainyard config registry`: what makes `docker push gcr.io/P/IMG` and
// `docker pull us-central1-docker.pkg.dev/P/R/IMG` (podman, through podman-docker)
// reach the daemon's registry (executor/local_registry.h) by Google's names.
//
// podman 4.3 applies a registries.conf `location` remap to pulls but not to pushes,
// so the names must resolve to the registry itself: a marked block in /etc/hosts maps
// each Google registry host to the registry's loopback address, and a
// registries.conf.d drop-in marks those hosts insecure (plain HTTP, on port 80). The
// daemon itself needs neither: it pulls from the registry's address directly.
// Pure text functions here; the command in config_commands.cc writes the files.
#pragma once

#include <string>
#include <vector>

namespace ty::cli {

inline constexpr char kHostsBlockBegin[] = "# BEGIN trainyard registry";
inline constexpr char kHostsBlockEnd[] = "# END trainyard registry";

// `hosts_file` with the marked block replaced by one mapping `hosts` to `ip` (added
// at the end when absent); `ip` empty removes the block. Other lines stay as they are.
std::string MergeHostsBlock(const std::string& hosts_file, const std::string& ip,
                            const std::vector<std::string>& hosts);

// The registries.conf drop-in: each host a plain-HTTP registry.
std::string RegistriesConfDropIn(const std::vector<std::string>& hosts);

}  // namespace ty::cli
