#include "api/registry_token.h"

#include <nlohmann/json.hpp>

#include "api/http_status.h"
#include "api/query.h"
#include "auth/replica_credentials.h"
#include "common/time.h"

namespace ty::api {
namespace {

// The placeholder `trainyard config registry` writes for hosts it has no token for,
// which keeps gcloud's credential helper from running (cli/registry_config.h).
constexpr char kPlaceholderUserinfo[] = "trainyard:local";

// Docker's registry error shape: what `docker login` and podman print.
HttpResponse RegistryError(int status, const std::string& code, const std::string& message) {
  HttpResponse r = JsonResponse({{"errors", {{{"code", code}, {"message", message}}}}}, status);
  if (status == 401) r.headers.emplace_back("WWW-Authenticate", "Basic realm=\"trainyard\"");
  return r;
}

// Every `scope` parameter (a client asks for several at once, e.g. a push that mounts
// a layer of another repository), each of which may hold several, space-separated.
Result<std::vector<auth::RegistryScope>> ScopesOf(const HttpRequest& request) {
  std::vector<auth::RegistryScope> scopes;
  std::string_view rest = request.raw_query;
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) != "scope" || eq == std::string_view::npos) continue;
    std::map<std::string, std::string> one = ParseQuery(pair, /*plus_is_space=*/true);
    std::string_view value = one["scope"];
    while (!value.empty()) {
      const size_t space = value.find(' ');
      std::string_view item = value.substr(0, space);
      value = space == std::string_view::npos ? std::string_view() : value.substr(space + 1);
      if (item.empty()) continue;
      if (scopes.size() == auth::kMaxRegistryScopes) {
        return InvalidArgument("more than " + std::to_string(auth::kMaxRegistryScopes) +
                               " scopes in one token request");
      }
      ASSIGN_OR_RETURN(auth::RegistryScope scope, auth::ParseRegistryScope(item));
      scopes.push_back(std::move(scope));
    }
  }
  return scopes;
}

// Who the request speaks for: a principal, nullopt for nobody (no credential or the
// placeholder), or Unauthenticated for a credential nobody issued.
Result<std::optional<auth::Principal>> CallerOf(const RegistryTokenService& service,
                                                const HttpRequest& request) {
  const std::string authorization = request.Header("authorization");
  if (authorization.empty() || auth::BasicUserinfo(authorization) == kPlaceholderUserinfo) {
    return std::optional<auth::Principal>();
  }
  const std::string credential = auth::ReplicaCredential(authorization);
  if (credential.empty()) {
    return Status(StatusCode::kUnauthenticated,
                  "the registry's token service takes Basic auth with a token as "
                  "the password (podman login -u oauth2accesstoken)");
  }
  if (service.tokens != nullptr) {
    if (std::optional<auth::Principal> who = service.tokens->Identify(credential)) return who;
  }
  if (service.job) {
    if (std::optional<auth::Principal> who = service.job(credential)) return who;
  }
  return Status(StatusCode::kUnauthenticated,
                "unknown token: the registry takes a token of the daemon's `tokens:` "
                "(podman login -u oauth2accesstoken, or gcloud's access token through "
                "`gcloud auth configure-docker`)");
}

}  // namespace

HttpResponse RegistryCaCertificate(const RegistryTokenService& service) {
  if (service.ca_pem.empty()) {
    return RegistryError(404, "NOT_FOUND", "this daemon serves no HTTPS registry");
  }
  HttpResponse response;
  response.content_type = "application/x-pem-file";
  response.body = service.ca_pem;
  return response;
}

HttpResponse IssueRegistryToken(const RegistryTokenService& service, const HttpRequest& request) {
  if (service.issuer == nullptr) return RegistryError(404, "NOT_FOUND", "no registry tokens here");
  auto query = request.query.find("service");
  if (query != request.query.end() && query->second != service.service) {
    return RegistryError(400, "INVALID_REQUEST",
                         "this token service serves \"" + service.service + "\" only");
  }
  Result<std::vector<auth::RegistryScope>> scopes = ScopesOf(request);
  if (!scopes.ok()) return RegistryError(400, "INVALID_REQUEST", scopes.status().message());
  Result<std::optional<auth::Principal>> caller = CallerOf(service, request);
  if (!caller.ok()) return RegistryError(401, "UNAUTHORIZED", caller.status().message());
  const auth::Principal* who = caller->has_value() ? &**caller : nullptr;
  std::vector<auth::RegistryGrant> grants;
  for (auth::RegistryScope& scope : *scopes) {
    scope.actions = auth::GrantedActions(who, scope, service.shared_projects);
    grants.push_back({std::move(scope)});
  }
  const int64_t now = service.now_s ? service.now_s() : 0;
  const std::string subject = who != nullptr ? who->name : "anonymous";
  const std::string token = service.issuer->Issue(service.issuer_name, service.service, subject,
                                                  grants, now, service.ttl_s);
  return JsonResponse({{"token", token},
                       {"access_token", token},
                       {"expires_in", service.ttl_s},
                       {"issued_at", FormatRfc3339(now * 1000000)}});
}

}  // namespace ty::api
