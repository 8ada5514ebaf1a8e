// Internal to api/: the endpoint functions Router::Handle dispatches to, and the
// request helpers they share. Not for use outside this module.
//
// Every function returns a complete HttpResponse (an error envelope on failure) and
// never throws for bad input; thread-safe like Router.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "api/handlers.h"
#include "api/http_types.h"
#include "api/registry_token.h"
#include "api/routes.h"
#include "api/storage_api.h"
#include "artifacts/repositories.h"
#include "common/status.h"
#include "service/job_service.h"
#include "tensorboard/store.h"
#include "wire/dialect.h"

namespace ty::api::internal {

// What every endpoint needs from the request.
struct Call {
  service::JobService* service;
  const HttpRequest& request;
  wire::RenderOptions render;  // From `$alt=json;enum-encoding=int`.
};

// What a route's handler gets (routes.h): the request, once matched and admitted.
struct RouteCall {
  service::JobService* service;
  const HttpRequest& request;  // Cloud Storage rows: the query form-decoded.
  const RouteParams& params;
  ApiDialect dialect;
  const auth::Principal& caller;  // Who the gate admitted.
  const StorageContext& storage;  // `store` null without the Cloud Storage API.
  const RegistryTokenService& registry;
  artifacts::Repositories* artifacts;  // Null without Artifact Registry's repositories.
  tensorboard::Store* tensorboards;    // Null without Vertex AI TensorBoard.
  wire::RenderOptions render;          // From `$alt=json;enum-encoding=int`.

  Call call() const { return Call{service, request, render}; }
};

inline Dispatch Respond(HttpResponse response) {
  return Dispatch{std::move(response), std::nullopt};
}

// "" or the value of query parameter `name`.
std::string Param(const HttpRequest& request, const std::string& name);
// Non-negative int query parameter; `fallback` when absent. InvalidArgument otherwise.
Result<int> IntParam(const HttpRequest& request, const std::string& name, int fallback);
// The body as a JSON object; an empty body is `{}` (bodiless POSTs are legal, see
// docs/contracts/client-wire.md §2). InvalidArgument "Invalid JSON payload received. ..."
// otherwise.
Result<nlohmann::json> BodyObject(const HttpRequest& request);

// Jobs (job_endpoints.cc). `ref.id` is empty for collection calls.
HttpResponse CreateJob(const Call& call, const service::JobRef& parent);
HttpResponse GetJob(const Call& call, const service::JobRef& ref);
HttpResponse ListJobs(const Call& call, const service::JobRef& parent);
HttpResponse CancelJob(const Call& call, const service::JobRef& ref);
HttpResponse DeleteJob(const Call& call, const service::JobRef& ref);
HttpResponse GetOperation(const Call& call, const std::string& name);

// A shell in one of the job's running replicas, `?replica=workerpool0-0`, for a
// WebSocket upgrade only (shell_endpoint.cc; the session bridges it, shell_bridge.h).
Dispatch OpenShell(const Call& call, const service::JobRef& ref);

// Replicas, attempts, phases and events (detail_endpoints.cc).
HttpResponse GetJobDetails(const Call& call, const service::JobRef& ref);

// Logs (log_endpoints.cc): a page, or a validated LogFollow when `follow=true`.
Dispatch ReadLogs(const Call& call, const service::JobRef& ref);
// Cloud Logging v2 `entries:list`, POST (JSON body) or GET (query) (logging_endpoints.cc).
// `only_job`: a replica's own job uid; its entries alone are listed ("" = any).
HttpResponse ListLogEntries(const Call& call, const std::string& only_job = "");

// The ml v1 discovery document, pointing its client at this daemon (discovery.cc).
HttpResponse MlDiscoveryDocument(const HttpRequest& request);

// Artifact Registry's repositories (artifacts_endpoints.cc): create (answers a done
// operation), get, list, and the locations that have any.
HttpResponse CreateRepository(const RouteCall& call);
HttpResponse GetRepository(const RouteCall& call);
HttpResponse ListRepositories(const RouteCall& call);
HttpResponse ListRepositoryLocations(const RouteCall& call);

// Vertex AI TensorBoard (tensorboard_endpoints.cc): tensorboards (create, update and
// delete answer done operations), their experiments, runs and time series, and reads
// and writes of scalar points.
HttpResponse CreateTensorboard(const RouteCall& call);
HttpResponse GetTensorboard(const RouteCall& call);
HttpResponse ListTensorboards(const RouteCall& call);
HttpResponse UpdateTensorboard(const RouteCall& call);
HttpResponse DeleteTensorboard(const RouteCall& call);
HttpResponse CreateTensorboardExperiment(const RouteCall& call);
HttpResponse GetTensorboardExperiment(const RouteCall& call);
HttpResponse ListTensorboardExperiments(const RouteCall& call);
HttpResponse DeleteTensorboardExperiment(const RouteCall& call);
HttpResponse CreateTensorboardRun(const RouteCall& call);
HttpResponse GetTensorboardRun(const RouteCall& call);
HttpResponse ListTensorboardRuns(const RouteCall& call);
HttpResponse DeleteTensorboardRun(const RouteCall& call);
HttpResponse CreateTensorboardTimeSeries(const RouteCall& call);
HttpResponse GetTensorboardTimeSeries(const RouteCall& call);
HttpResponse ListTensorboardTimeSeries(const RouteCall& call);
HttpResponse ReadTensorboardTimeSeries(const RouteCall& call);
HttpResponse BatchReadTensorboardTimeSeries(const RouteCall& call);
HttpResponse WriteTensorboardRunData(const RouteCall& call);

// The console's files (console_endpoints.cc): GET /console/ and /console/FILE, with a
// Content-Security-Policy of the daemon's own origin only.
HttpResponse ConsoleFile(const RouteCall& call);
// GET /console/caller?project=P: who the request's token is and its role in P
// ({"name", "project", "role": "viewer"|"editor"|"admin"|"none"}), so a page offers only
// what the caller may do (the API refuses the rest anyway).
HttpResponse ConsoleCaller(const RouteCall& call);

// GET /metrics: Prometheus text format (metrics_endpoint.cc).
HttpResponse Metrics(service::JobService* service);
HttpResponse Backup(service::JobService* service);  // GET /admin/backup (admin_endpoints.cc).

}  // namespace ty::api::internal
