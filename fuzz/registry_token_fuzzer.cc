// The registry's token service (api/registry_token.h) on any request: the first line
// is the Authorization header, the rest the query. It never crashes, answers 200, 400
// or 401 only, and a caller with no credential of ours never gets a push, nor a pull
// beyond the shared runtimes.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "api/registry_token.h"
#include "auth/registry_tokens.h"
#include "auth/tokens.h"
#include "fuzz/fuzz_input.h"

namespace {

const std::vector<std::string> kShared = {"vertex-ai", "deeplearning-platform-release"};

const ty::api::RegistryTokenService& Service() {
  static std::unique_ptr<ty::auth::RegistryTokenIssuer> issuer = [] {
    const std::string dir = "/tmp/ty-fuzz-registry-" + std::to_string(::getpid());
    auto opened = ty::auth::RegistryTokenIssuer::Open(dir);
    if (!opened.ok()) abort();
    return std::move(opened).value();
  }();
  static ty::auth::TokenTable tokens = [] {
    nlohmann::json config = nlohmann::json::array();
    config.push_back({{"name", "ea"},
                      {"sha256", ty::auth::Sha256Hex("ty_editor_a")},
                      {"role", "editor"},
                      {"projects", {"proj-a"}}});
    return std::move(ty::auth::TokenTable::FromConfig(config)).value();
  }();
  static ty::api::RegistryTokenService service = {
      .issuer = issuer.get(),
      .tokens = &tokens,
      .job = [](const std::string&) { return std::optional<ty::auth::Principal>(); },
      .shared_projects = kShared,
      .service = "trainyard-registry",
      .issuer_name = "trainyardd",
      .now_s = [] { return int64_t{1000}; }};
  return service;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = ty::fuzz::Text(data, size);
  const size_t nl = text.find('\n');
  ty::api::HttpRequest request;
  request.method = "GET";
  request.path = ty::api::kRegistryTokenPath;
  request.headers["authorization"] = std::string(text.substr(0, nl));
  request.raw_query = nl == std::string_view::npos ? "" : std::string(text.substr(nl + 1));
  const ty::api::HttpResponse answer = ty::api::IssueRegistryToken(Service(), request);
  if (answer.status != 200 && answer.status != 400 && answer.status != 401) __builtin_trap();
  // Whatever scope the query names, nobody's grant holds a push or a private pull.
  auto scope = ty::auth::ParseRegistryScope(request.raw_query);
  if (scope.ok()) {
    for (const std::string& a : ty::auth::GrantedActions(nullptr, *scope, kShared)) {
      const std::string project = ty::auth::RegistryProjectOf(scope->name);
      if (a != "pull" || (project != kShared[0] && project != kShared[1])) __builtin_trap();
    }
  }
  return 0;
}
