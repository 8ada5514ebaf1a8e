// `trainyard config registry`: what makes `docker push gcr.io/P/IMG` and
// `docker pull us-central1-docker.pkg.dev/P/R/IMG` (podman, through podman-docker)
// reach the daemon's registry (executor/container/local_registry.h) by Google's names.
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

#include "common/status.h"

namespace ty::cli {

inline constexpr char kHostsBlockBegin[] = "# BEGIN trainyard registry";
inline constexpr char kHostsBlockEnd[] = "# END trainyard registry";

// `hosts_file` with the marked block replaced by one mapping `hosts` to `ip` (added
// at the end when absent); `ip` empty removes the block. Other lines stay as they are.
std::string MergeHostsBlock(const std::string& hosts_file, const std::string& ip,
                            const std::vector<std::string>& hosts);

// The registries.conf drop-in: each host a plain-HTTP registry.
std::string RegistriesConfDropIn(const std::vector<std::string>& hosts);

// `gcloud auth configure-docker` names `docker-credential-gcloud` as the credential
// helper of Google's hosts in ~/.docker/config.json, which podman reads too. That
// helper hands gcloud's access token, which is the daemon's token where gcloud is set
// up for it (`trainyard config gcloud` with a token: auth/access_token_file), and
// fails without a Google account otherwise: every push failed. An auth file podman
// reads first (containers-auth.json: ~/.config/containers/auth.json comes before the
// docker config) with an entry per host wins over the helper. Our entries are those of
// user "trainyard":
//   kPlaceholder  "trainyard:local" where a host has no entry: a daemon without tokens
//                 asks for none; one with tokens takes it as no credential (the shared
//                 runtimes' pulls only). It keeps a failing helper from running.
//   kToken        "trainyard:TOKEN" for each host (ours replaced, others' kept): pushes
//                 as that token's grant, as `podman login -u trainyard` would.
//   kRemove       ours removed (`--remove`, and `--credential-helper`: gcloud's helper
//                 then answers for those hosts).
inline constexpr char kRegistryAuth[] = "dHJhaW55YXJkOmxvY2Fs";  // base64 "trainyard:local"
inline constexpr char kRegistryAuthUser[] = "trainyard";

enum class AuthEntries { kPlaceholder, kToken, kRemove };

// `auth_json` (containers-auth.json text, "" = none) with our entries as `mode` says
// (`token` for kToken). InvalidArgument when it is not a JSON object, so a file we
// cannot read is never overwritten.
Result<std::string> MergeAuthFile(const std::string& auth_json,
                                  const std::vector<std::string>& hosts, AuthEntries mode,
                                  const std::string& token = "");

}  // namespace ty::cli
