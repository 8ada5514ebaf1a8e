// The daemon's registry with tokens (auth/registry_tokens.h): a daemon with `tokens:`
// runs its registry with docker-registry's token auth, itself the token service at
// GET /registry/token of its main listener; a daemon without keeps it open, and then
// on loopback only.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/registry_tls.h"
#include "auth/registry_tokens.h"
#include "auth/tokens.h"
#include "common/status.h"
#include "daemon/daemon_config.h"
#include "executor/container/local_registry.h"

namespace ty::daemon {

inline constexpr char kRegistryService[] = "trainyard-registry";
inline constexpr char kRegistryIssuer[] = "trainyardd";

// InvalidArgument when the registry's address is beyond loopback on a daemon without
// tokens (anyone reaching it would push and pull every project's images); the daemon
// refuses to start. With tokens it is fine; said in the log when the token service
// (the main listener) is on loopback, where other hosts cannot reach it.
Status CheckRegistryAddress(const DaemonConfig& cfg, const auth::TokenTable& tokens);

// What the daemon's registry is run with, made when missing: the issuer of its tokens
// when this daemon serves a registry and has tokens (its key in <data-dir>/registry, a
// replaced one said in the log), and its HTTPS files where it is served over HTTPS too
// (RegistryTlsAddress).
struct RegistryKeys {
  std::unique_ptr<auth::RegistryTokenIssuer> issuer;  // Null: no authentication.
  std::optional<auth::RegistryTlsFiles> tls;          // Nullopt: plain HTTP only.
};
Result<RegistryKeys> OpenRegistryKeys(const DaemonConfig& cfg, const auth::TokenTable& tokens);

// The token service's URL as registry clients reach it: the main listener's host, or,
// where it listens on every address, the registry's own host (which every client of
// the registry reaches), at the bound port; https with TLS.
std::string RegistryRealm(const DaemonConfig& cfg, const std::string& listen_host, int port);

// Where the registry is also served over HTTPS (auth/registry_tls.h): HOST:443 for a
// registry the daemon runs on HOST:80, the port the Google names reach it on (clients
// speak HTTPS to those names unless a host is configured plain), when the daemon may
// bind port 443 (root); "" otherwise.
std::string RegistryTlsAddress(const DaemonConfig& cfg);

// Starts supervising the daemon's registry where it serves one (none otherwise), and
// its HTTPS twin over the same storage where `keys` has TLS files, each taking the
// issuer's tokens when there is one. `port`: the main listener's bound port, where the
// token service answers.
Result<std::vector<std::unique_ptr<executor::LocalRegistry>>> StartRegistry(
    const DaemonConfig& cfg, const std::string& listen_host, int port, const RegistryKeys& keys);

}  // namespace ty::daemon
