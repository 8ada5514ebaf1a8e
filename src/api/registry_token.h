// GET /registry/token: the token service of the daemon's registry (auth/registry_tokens.h
// says why and how). Served on the main listener, outside the Google gate: its clients
// (podman, docker, containerd) send Basic auth, not Google's bearer tokens.
//
//   credential (Basic password, or Bearer)        speaks for
//   a token of the daemon's `tokens:`             that token's grant
//   a job's credential (replica_credentials.h)    a viewer of that live job's project:
//                                                 the daemon's own pulls for the job
//   none, or `trainyard config registry`'s        nobody: the shared runtimes' pulls
//     placeholder (user "trainyard", "local")
//   anything else                                 401 (a mistyped token is said, not
//                                                 quietly anonymous)
// A request naming scopes it may not have still gets a token, with the actions it may
// have (Docker's token protocol); the registry refuses the rest.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/http_types.h"
#include "auth/registry_tokens.h"
#include "auth/tokens.h"

namespace ty::api {

inline constexpr char kRegistryTokenPath[] = "/registry/token";

struct RegistryTokenService {
  const auth::RegistryTokenIssuer* issuer = nullptr;  // Not owned; null = no route.
  const auth::TokenTable* tokens = nullptr;           // Not owned.
  // The principal of a job's credential while its job lives; nullopt otherwise.
  std::function<std::optional<auth::Principal>(const std::string& credential)> job;
  std::vector<std::string> shared_projects;  // images::SharedImageProjects().
  std::string service;                       // The registry's `service` and `issuer`.
  std::string issuer_name;
  std::function<int64_t()> now_s;
  int64_t ttl_s = 300;  // A 500 MB push over a slow link outlives it: clients fetch anew.
  // The registry's HTTPS authority (auth/registry_tls.h), served to anyone at
  // kRegistryCaPath for `trainyard config registry` to install; "" = no HTTPS registry.
  std::string ca_pem;
};

inline constexpr char kRegistryCaPath[] = "/registry/ca.crt";

// The answer to a GET of kRegistryCaPath: the authority's certificate (PEM), or 404.
HttpResponse RegistryCaCertificate(const RegistryTokenService& service);

// The answer to `request` (a GET of kRegistryTokenPath).
HttpResponse IssueRegistryToken(const RegistryTokenService& service, const HttpRequest& request);

}  // namespace ty::api
