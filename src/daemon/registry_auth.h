// The daemon's registry with tokens (auth/registry_tokens.h): a daemon with `tokens:`
// runs its registry with docker-registry's token auth, itself the token service at
// GET /registry/token of its main listener; a daemon without keeps it open, and then
// on loopback only.
#pragma once

#include <memory>
#include <string>

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

// The issuer of registry tokens when this daemon serves a registry and has tokens
// (its key in <data-dir>/registry, a replaced one said in the log); null otherwise.
Result<std::unique_ptr<auth::RegistryTokenIssuer>> OpenRegistryIssuer(
    const DaemonConfig& cfg, const auth::TokenTable& tokens);

// The token service's URL as registry clients reach it: the main listener's host, or,
// where it listens on every address, the registry's own host (which every client of
// the registry reaches), at the bound port; https with TLS.
std::string RegistryRealm(const DaemonConfig& cfg, const std::string& listen_host, int port);

// Starts supervising the daemon's registry where it serves one (null otherwise),
// taking `issuer`'s tokens when there is one (null: no authentication). `port`: the
// main listener's bound port, where the token service answers.
Result<std::unique_ptr<executor::LocalRegistry>> StartRegistry(
    const DaemonConfig& cfg, const std::string& listen_host, int port,
    const auth::RegistryTokenIssuer* issuer);

}  // namespace ty::daemon
