// The daemon as the token service of its registry (docker-registry's `token` auth).
//
// Why a token service and not the daemon in front of the registry: image layers are
// hundreds of MB and go straight between the client and docker-registry, never
// through the daemon's memory or its request limits; the registry checks every
// request against the token's repository and actions itself; the daemon only decides
// who gets which actions (a pure function here) and signs a short-lived token.
//
// The protocol (Docker's token authentication, as podman, docker and containerd speak
// it): the registry answers an unauthenticated request with 401 and
// `WWW-Authenticate: Bearer realm="<daemon>/registry/token",service="..."`; the client
// asks the realm `GET ?service=S&scope=repository:NAME:pull,push` with Basic auth
// (its login, or what `gcloud auth configure-docker`'s helper hands: user
// `_dcgcloud_token`, password gcloud's access token) and presents the token it gets.
// The token is a JWT signed with ES256 by a key of the daemon's, whose self-signed
// certificate the registry trusts (`rootcertbundle`); the certificate rides in the
// JWT's `x5c` header.
//
// Names: the registry sees `PROJECT/REPO...` (one registry serves every Google host,
// images/google_names.h), so a repository's project is its first path component.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/tokens.h"
#include "common/status.h"

namespace ty::auth {

// One `scope` parameter: "repository:proj/img:pull,push", "registry:catalog:*".
struct RegistryScope {
  std::string type;  // "repository", "registry", ...
  std::string name;  // "proj/img"
  std::vector<std::string> actions;
};

// Bounds on what a token request may carry: anything past them is a 400.
inline constexpr size_t kMaxRegistryScopes = 16;
inline constexpr size_t kMaxRegistryNameBytes = 255;  // distribution's repository limit.

// InvalidArgument naming the rule for a malformed scope (a name of characters a
// repository cannot have, no actions, too long).
Result<RegistryScope> ParseRegistryScope(std::string_view scope);

// The project a repository name belongs to ("proj/img/sub" -> "proj"); "" for none.
std::string RegistryProjectOf(std::string_view repository);

// What `who` (null: no credential) gets of `scope`, a subset of its actions:
//   pull  a viewer of the repository's project; anyone, even without a credential,
//         for a project in `shared` (the runtimes every job may use)
//   push  an editor of the repository's project; for a `shared` project, an admin
//         of every project ("*") only
//   anything else (delete, the catalog, other types): an admin of every project
// An empty result grants nothing (the registry then answers 401 to the operation).
std::vector<std::string> GrantedActions(const Principal* who, const RegistryScope& scope,
                                        const std::vector<std::string>& shared);

struct RegistryGrant {
  RegistryScope scope;  // With the granted actions only.
};

// A signing key and its self-signed certificate, kept in a directory of the daemon's
// (0600 files), made on first use.
class RegistryTokenIssuer {
 public:
  // Loads `dir`/token-key.pem and token-cert.pem, or makes both (a P-256 key, a
  // certificate valid for ten years). A pair that does not load or match is replaced,
  // and `replaced()` says why (the registry is configured from the new one).
  static Result<std::unique_ptr<RegistryTokenIssuer>> Open(const std::string& dir);
  ~RegistryTokenIssuer();
  RegistryTokenIssuer(const RegistryTokenIssuer&) = delete;
  RegistryTokenIssuer& operator=(const RegistryTokenIssuer&) = delete;

  const std::string& cert_path() const { return cert_path_; }
  const std::string& replaced() const { return replaced_; }

  // A signed token for `subject` holding `grants` (those with no actions left out),
  // issued by `issuer` for `service`, valid from `now_s` for `ttl_s` seconds.
  std::string Issue(const std::string& issuer, const std::string& service,
                    const std::string& subject, const std::vector<RegistryGrant>& grants,
                    int64_t now_s, int64_t ttl_s) const;

  struct Keys;  // OpenSSL's key and certificate (registry_tokens.cc).

 private:
  RegistryTokenIssuer(std::unique_ptr<Keys> keys, std::string cert_path);
  std::unique_ptr<Keys> keys_;
  std::string cert_path_;
  std::string replaced_;
};

}  // namespace ty::auth
