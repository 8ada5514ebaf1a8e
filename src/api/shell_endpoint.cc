// GET {job}:shell?replica=R: the shell of Vertex's enableWebAccess. The route row asks
// for the editor role on the job's project (a shell can do whatever the job can); the
// service refuses jobs created without the flag. Only a WebSocket upgrade gets here
// with a shell: the session has accepted it and bridges the terminal (shell_bridge.h).
#include <boost/beast/core/string.hpp>

#include "api/endpoints.h"
#include "api/http_status.h"

namespace ty::api::internal {

Dispatch OpenShell(const Call& call, const service::JobRef& ref) {
  auto fail = [](const Status& s) { return Dispatch{ErrorResponse(s), std::nullopt, nullptr}; };
  if (!boost::beast::iequals(call.request.Header("upgrade"), "websocket")) {
    return fail(InvalidArgument("A shell opens over a WebSocket (Upgrade: websocket)."));
  }
  const std::string replica = Param(call.request, "replica");
  if (replica.empty()) {
    return fail(InvalidArgument("replica: required, the replica's name (workerpool0-0)"));
  }
  Result<std::unique_ptr<service::ReplicaShell>> shell = call.service->OpenShell(ref, replica);
  if (!shell.ok()) return fail(shell.status());
  return Dispatch{HttpResponse{}, std::nullopt, std::move(*shell)};
}

}  // namespace ty::api::internal
