// The console's files. Everything a page shows comes from the public API; the pages
// render what jobs and users wrote as text, and the policy below lets a page load and
// call nothing but this origin (no inline script, no other host), so a job's name or
// log line can run nothing even if a page were to insert it as markup.
#include "api/console_assets.h"
#include "api/endpoints.h"
#include "api/http_status.h"

namespace ty::api::internal {

namespace {

constexpr char kPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
// The shell's page: xterm.js styles what it draws with <style> elements it writes, so
// styles (never scripts) may be inline there. It shows only terminal bytes, which
// xterm.js draws as text.
constexpr char kShellPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

const ConsoleAsset* Find(const std::string& path) {
  for (const ConsoleAsset& a : ConsoleAssets()) {
    if (a.path == path) return &a;
  }
  return nullptr;
}

}  // namespace

HttpResponse ConsoleFile(const RouteCall& call) {
  // "/console" must become "/console/", or the page's relative links leave the console.
  if (call.params.asset.empty() && call.request.path.back() != '/') {
    HttpResponse moved;
    moved.status = 301;
    moved.content_type = "text/plain; charset=utf-8";
    moved.headers.emplace_back("Location", "/console/");
    return moved;
  }
  const ConsoleAsset* asset = Find(call.params.asset.empty() ? "index.html" : call.params.asset);
  if (asset == nullptr) return ErrorResponse(NotFound("No console file " + call.params.asset));
  HttpResponse r;
  r.content_type = std::string(asset->content_type);
  r.body = std::string(asset->body);
  const bool shell_page = asset->path == "shell.html";
  r.headers = {{"Content-Security-Policy", shell_page ? kShellPolicy : kPolicy},
               {"X-Content-Type-Options", "nosniff"},
               {"Referrer-Policy", "no-referrer"},
               {"Cache-Control", "no-cache"}};
  return r;
}

HttpResponse ConsoleCaller(const RouteCall& call) {
  const std::string project = Param(call.request, "project");
  const auth::Role role = call.caller.RoleIn(project);
  HttpResponse r =
      JsonResponse({{"name", call.caller.name},
                    {"project", project},
                    {"role", role == auth::Role::kNone ? "none" : auth::RoleName(role)}});
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

}  // namespace ty::api::internal
