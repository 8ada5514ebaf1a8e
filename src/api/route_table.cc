// Every endpoint the daemon serves, one row each (routes.h). A new endpoint is one row
// here and its handler; the access gate and the router read the row.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/endpoints.h"
#include "api/http_status.h"
#include "api/routes.h"
#include "api/storage_api.h"
#include "model/resource_ids.h"

namespace ty::api {

namespace {

using auth::Role;
using internal::Respond;
using internal::RouteCall;

// /healthz: "ok", or "degraded" with a note per trouble (shown to `details` callers).
// Still 200 either way: the API serves, and restarting the daemon would not help.
nlohmann::json Health(service::JobService* service, bool details) {
  nlohmann::json health = {{"status", "ok"}};
  auto degrade = [&](const char* key, nlohmann::json note) {
    health["status"] = "degraded";
    if (details) health[key] = std::move(note);
  };
  // Stored jobs it had to fail are named so an operator sees them without the log.
  std::vector<std::string> problems = service->problems();
  if (!problems.empty() && details) health["problems"] = problems;
  if (executor::BackendHealth engine = service->backend_health(); !engine.reachable) {
    degrade(
        "engine",
        {{"reachable", false}, {"detail", engine.detail}, {"since", FormatRfc3339(engine.since)}});
  }
  // Below the data disk's reserve new work is refused: said before the disk is full.
  if (std::optional<service::JobService::DataDisk> disk = service->data_disk();
      disk && disk->low()) {
    degrade("dataDisk", {{"freeBytes", disk->space.free_bytes},
                         {"reserveBytes", disk->reserve_bytes},
                         {"detail", "below the reserve: submits are refused"}});
  }
  // Job records that cannot be written (a full disk): inputs wait for the store.
  if (service::StoreWriteHealth store = service->store_health(); store.failing) {
    degrade("store", {{"writing", false},
                      {"detail", store.detail},
                      {"since", FormatRfc3339(store.since)},
                      {"jobsWaiting", store.jobs_waiting}});
  }
  return health;
}

// Problems and the engine's state are for admins (everyone, on a daemon without
// tokens); others learn only "ok" or "degraded".
Dispatch GetHealth(const RouteCall& c) {
  return Respond(JsonResponse(Health(c.service, c.caller.RoleIn("") == Role::kAdmin)));
}

// The job a job route names. The ids key stored rows and engine labels: Google's
// shape, or a 400 naming the field.
Result<service::JobRef> JobRefOf(const RouteCall& c) {
  const RouteParams& p = c.params;
  RETURN_IF_ERROR(model::CheckProjectId(p.project));
  if (c.dialect == ApiDialect::kVertex) RETURN_IF_ERROR(model::CheckLocationId(p.location));
  service::JobRef ref;
  ref.dialect = c.dialect == ApiDialect::kMlV1 ? model::Dialect::kMlV1 : model::Dialect::kVertex;
  ref.project = p.project;
  ref.location = p.location;
  ref.id = p.job;
  ref.collection = p.vertex_collection;
  return ref;
}

// A job route's handler: its JobRef, or the 400 that says why there is none.
template <HttpResponse (*Endpoint)(const internal::Call&, const service::JobRef&)>
Dispatch OnJob(const RouteCall& c) {
  Result<service::JobRef> ref = JobRefOf(c);
  if (!ref.ok()) return Respond(ErrorResponse(ref.status()));
  return Respond(Endpoint(c.call(), *ref));
}

// A job route whose endpoint may answer more than a response (a stream, a shell).
template <Dispatch (*Endpoint)(const internal::Call&, const service::JobRef&)>
Dispatch OnJobDispatch(const RouteCall& c) {
  Result<service::JobRef> ref = JobRefOf(c);
  if (!ref.ok()) return Respond(ErrorResponse(ref.status()));
  return Endpoint(c.call(), *ref);
}

// An operation's name is its path below the API version: operations of a location or
// of one job ("projects/p/locations/l/customJobs/j/operations/o").
Dispatch GetOperation(const RouteCall& c) {
  const RouteParams& p = c.params;
  std::string name = "projects/" + p.project + "/locations/" + p.location;
  if (!p.job.empty()) name += "/" + p.collection + "/" + p.job;
  return Respond(internal::GetOperation(c.call(), name + "/operations/" + p.operation));
}

// Debian's python3-googleapi asks /discovery/v1/apis/ml/v1/rest first, then (newer
// clients) /$discovery/rest?version=v1.
Dispatch GetMlDiscovery(const RouteCall& c) {
  const std::string version = internal::Param(c.request, "version");
  if (!version.empty() && version != "v1") {
    return Respond(ErrorResponse(NotFound("No discovery document for ml " + version)));
  }
  return Respond(internal::MlDiscoveryDocument(c.request));
}

// ---- Cloud Storage ------------------------------------------------------------------

// A Cloud Storage handler of the request alone, of a bucket, or of an object in it.
template <HttpResponse (*Handler)(const internal::StorageContext&, const HttpRequest&)>
Dispatch OnStorage(const RouteCall& c) {
  return Respond(Handler(c.storage, c.request));
}
template <HttpResponse (*Handler)(const internal::StorageContext&, const HttpRequest&,
                                  const std::string&)>
Dispatch OnBucket(const RouteCall& c) {
  return Respond(Handler(c.storage, c.request, c.params.bucket));
}
template <HttpResponse (*Handler)(const internal::StorageContext&, const HttpRequest&,
                                  const std::string&, const std::string&)>
Dispatch OnObject(const RouteCall& c) {
  return Respond(Handler(c.storage, c.request, c.params.bucket, c.params.object));
}
Dispatch StorageMisplacedUpload(const RouteCall& c) {
  return Respond(internal::StorageError(
      NotFound("Uploads go to /upload/storage/v1/b/" + c.params.bucket + "/o")));
}
template <bool kRewrite>
Dispatch StorageCopy(const RouteCall& c) {
  const RouteParams& p = c.params;
  return Respond(internal::CopyObject(c.storage, c.request, p.bucket, p.object, p.target_bucket,
                                      p.target_object, kRewrite));
}
// POST starts an upload, or (with ?upload_id=) continues a session as PUT does.
Dispatch StorageUpload(const RouteCall& c) {
  if (!internal::Param(c.request, "upload_id").empty()) {
    return Respond(internal::PutToSession(c.storage, c.request, c.params.bucket));
  }
  return Respond(internal::UploadObject(c.storage, c.request, c.params.bucket));
}

// ---- The rows -------------------------------------------------------------------------

constexpr Access kViewer{Scope::kProject, Role::kViewer};
constexpr Access kEditor{Scope::kProject, Role::kEditor};

void AddOpsRows(std::vector<Route>* rows) {
  rows->push_back({"GET",
                   "/healthz",
                   ApiDialect::kOps,
                   {Scope::kAnyone, Role::kNone},
                   GetHealth,
                   /*on_replica_listener=*/true});
  rows->push_back(
      {"GET", "/metrics", ApiDialect::kOps, {Scope::kAdmin, Role::kAdmin}, [](const RouteCall& c) {
         return Respond(internal::Metrics(c.service));
       }});
  rows->push_back({"GET",
                   "/admin/backup",
                   ApiDialect::kOps,
                   {Scope::kAdmin, Role::kAdmin},
                   [](const RouteCall& c) { return Respond(internal::Backup(c.service)); }});
  rows->push_back(
      {"GET",
       kRegistryTokenPath,
       ApiDialect::kRegistry,
       {Scope::kOwnAuth, Role::kNone},
       [](const RouteCall& c) { return Respond(IssueRegistryToken(c.registry, c.request)); }});
  // A certificate is public: what clients check the registry by. Served whether or not
  // the registry takes tokens (kOps: not one of the token service's rows).
  rows->push_back({"GET",
                   kRegistryCaPath,
                   ApiDialect::kOps,
                   {Scope::kAnyone, Role::kNone},
                   [](const RouteCall& c) { return Respond(RegistryCaCertificate(c.registry)); }});
  // Cloud Logging's entries:list, by body (POST) or query (GET); a replica's reads see
  // its own job's entries.
  for (const char* method : {"POST", "GET"}) {
    rows->push_back({method,
                     "/v2/entries:list",
                     ApiDialect::kLogging,
                     {Scope::kLogging, Role::kViewer},
                     [](const RouteCall& c) {
                       return Respond(internal::ListLogEntries(c.call(), c.caller.only_job));
                     },
                     /*on_replica_listener=*/true});
  }
}

// A job collection's six or seven routes under `base`, where `{job}` is a job.
void AddJobRows(std::vector<Route>* rows, ApiDialect dialect, const std::string& base) {
  const std::string one = base + "/{job}";
  rows->push_back({"POST", base, dialect, kEditor, OnJob<internal::CreateJob>});
  rows->push_back({"GET", base, dialect, kViewer, OnJob<internal::ListJobs>});
  rows->push_back({"GET", one, dialect, kViewer, OnJob<internal::GetJob>});
  rows->push_back({"POST", one + ":cancel", dialect, kEditor, OnJob<internal::CancelJob>});
  // Our extensions: a job's log (`?follow=true` streams it) and its replicas' details.
  rows->push_back({"GET", one + "/logs", dialect, kViewer, OnJobDispatch<internal::ReadLogs>});
  // enableWebAccess: a terminal in a running replica, for editors (WebSocket only).
  rows->push_back({"GET", one + ":shell", dialect, kEditor, OnJobDispatch<internal::OpenShell>});
  rows->push_back({"GET", one + "/details", dialect, kViewer, OnJob<internal::GetJobDetails>});
  if (dialect == ApiDialect::kVertex) {
    rows->push_back({"DELETE", one, dialect, kEditor, OnJob<internal::DeleteJob>});
  }
}

void AddJobsRows(std::vector<Route>* rows) {
  // The discovery document is public, as Google's is.
  for (const char* path : {"/discovery/v1/apis/ml/v1/rest", "/$discovery/rest"}) {
    rows->push_back(
        {"GET", path, ApiDialect::kMlV1, {Scope::kAnyone, Role::kNone}, GetMlDiscovery});
  }
  AddJobRows(rows, ApiDialect::kMlV1, "/v1/projects/{project}/jobs");
  AddJobRows(rows, ApiDialect::kVertex, "/v1/projects/{project}/locations/{location}/{collection}");
  // Operations, under /v1 and /ui: GAPIC polls /ui/... (docs/contracts/client-wire.md §2).
  for (const char* api : {"/v1", "/ui"}) {
    const std::string location = std::string(api) + "/projects/{project}/locations/{location}";
    rows->push_back(
        {"GET", location + "/operations/{operation}", ApiDialect::kVertex, kViewer, GetOperation});
    rows->push_back({"GET", location + "/{collection}/{job}/operations/{operation}",
                     ApiDialect::kVertex, kViewer, GetOperation});
  }
}

void AddArtifactsRows(std::vector<Route>* rows) {
  const std::string base = "/v1/projects/{project}/locations/{location}/repositories";
  rows->push_back({"POST", base, ApiDialect::kArtifacts, kEditor,
                   [](const RouteCall& c) { return Respond(internal::CreateRepository(c)); }});
  rows->push_back({"GET", base, ApiDialect::kArtifacts, kViewer,
                   [](const RouteCall& c) { return Respond(internal::ListRepositories(c)); }});
  rows->push_back({"GET", base + "/{repository}", ApiDialect::kArtifacts, kViewer,
                   [](const RouteCall& c) { return Respond(internal::GetRepository(c)); }});
  // gcloud lists the locations (to list every one's repositories) through v1beta2.
  for (const char* version : {"/v1", "/v1beta2"}) {
    rows->push_back({"GET", std::string(version) + "/projects/{project}/locations",
                     ApiDialect::kArtifacts, kViewer, [](const RouteCall& c) {
                       return Respond(internal::ListRepositoryLocations(c));
                     }});
  }
}

template <HttpResponse (*Handler)(const RouteCall&)>
Dispatch OnTensorboards(const RouteCall& c) {
  return Respond(Handler(c));
}

// Under /v1 and /v1beta1: gcloud's tensorboard-experiments, -runs and -time-series
// commands are beta only, and speak v1beta1.
void AddTensorboardRows(std::vector<Route>* rows, const std::string& version) {
  using namespace internal;
  auto add = [rows](const char* method, const std::string& pattern, Access access,
                    RouteHandler handler) {
    rows->push_back({method, pattern, ApiDialect::kTensorboards, access, handler});
  };
  const std::string all = version + "/projects/{project}/locations/{location}/tensorboards";
  const std::string tb = all + "/{tensorboard}";
  const std::string experiments = tb + "/experiments";
  const std::string experiment = experiments + "/{experiment}";
  const std::string runs = experiment + "/runs";
  const std::string run = runs + "/{run}";
  const std::string series = run + "/timeSeries";
  add("POST", all, kEditor, OnTensorboards<CreateTensorboard>);
  add("GET", all, kViewer, OnTensorboards<ListTensorboards>);
  add("GET", tb, kViewer, OnTensorboards<GetTensorboard>);
  add("PATCH", tb, kEditor, OnTensorboards<UpdateTensorboard>);
  add("DELETE", tb, kEditor, OnTensorboards<DeleteTensorboard>);
  add("GET", tb + ":batchRead", kViewer, OnTensorboards<BatchReadTensorboardTimeSeries>);
  add("POST", experiments, kEditor, OnTensorboards<CreateTensorboardExperiment>);
  add("GET", experiments, kViewer, OnTensorboards<ListTensorboardExperiments>);
  add("GET", experiment, kViewer, OnTensorboards<GetTensorboardExperiment>);
  add("DELETE", experiment, kEditor, OnTensorboards<DeleteTensorboardExperiment>);
  add("POST", runs, kEditor, OnTensorboards<CreateTensorboardRun>);
  add("GET", runs, kViewer, OnTensorboards<ListTensorboardRuns>);
  add("GET", run, kViewer, OnTensorboards<GetTensorboardRun>);
  add("DELETE", run, kEditor, OnTensorboards<DeleteTensorboardRun>);
  add("POST", run + ":write", kEditor, OnTensorboards<WriteTensorboardRunData>);
  add("POST", series, kEditor, OnTensorboards<CreateTensorboardTimeSeries>);
  add("GET", series, kViewer, OnTensorboards<ListTensorboardTimeSeries>);
  add("GET", series + "/{time_series}", kViewer, OnTensorboards<GetTensorboardTimeSeries>);
  add("GET", series + "/{time_series}:read", kViewer, OnTensorboards<ReadTensorboardTimeSeries>);
}

void AddStorageRows(std::vector<Route>* rows) {
  auto add = [rows](const char* method, std::string pattern, Access access, RouteHandler handler) {
    rows->push_back({method, std::move(pattern), ApiDialect::kStorage, access, handler,
                     /*on_replica_listener=*/true});
  };
  const Access project_read{Scope::kProjectQuery, Role::kViewer};
  const Access project_write{Scope::kProjectQuery, Role::kEditor};
  const Access read{Scope::kBucket, Role::kViewer};
  const Access write{Scope::kBucket, Role::kEditor};
  // The JSON API, as gcloud and Python send it (/storage/v1/b/...) and as Node does (/b/...).
  for (const std::string b : {"/storage/v1/b", "/b"}) {
    add("GET", b, project_read, OnStorage<internal::ListBuckets>);
    add("POST", b, project_write, OnStorage<internal::InsertBucket>);
    add("GET", b + "/{bucket}", read, OnBucket<internal::GetBucket>);
    add("PATCH", b + "/{bucket}", {Scope::kBucketAssign, Role::kEditor},
        OnBucket<internal::PatchBucket>);
    add("DELETE", b + "/{bucket}", write, OnBucket<internal::DeleteBucket>);
    add("GET", b + "/{bucket}/storageLayout", read, OnBucket<internal::GetStorageLayout>);
    add("GET", b + "/{bucket}/o", read, OnBucket<internal::ListObjects>);
    add("POST", b + "/{bucket}/o", write, StorageMisplacedUpload);
    const std::string object = b + "/{bucket}/o/{object}";
    add("GET", object, read, OnObject<internal::GetObject>);
    add("DELETE", object, write, OnObject<internal::DeleteObject>);
    for (const char* method : {"PATCH", "PUT"}) {
      add(method, object, write, OnObject<internal::PatchObject>);
    }
    add("POST", object + "/compose", write, OnObject<internal::Compose>);
    const Access copy{Scope::kBucketCopy, Role::kEditor};
    add("POST", object + "/rewriteTo/b/{target_bucket}/o/{target_object}", copy, StorageCopy<true>);
    add("POST", object + "/copyTo/b/{target_bucket}/o/{target_object}", copy, StorageCopy<false>);
  }
  // Uploads: media, multipart and resumable starts, then the session's PUTs
  // (`?upload_id=`); gcloud starts resumable ones under /resumable.
  for (const char* u :
       {"/upload/storage/v1/b/{bucket}/o", "/resumable/upload/storage/v1/b/{bucket}/o"}) {
    add("POST", u, write, StorageUpload);
    rows->back().spools_body = true;
    add("PUT", u, write, OnBucket<internal::PutToSession>);
    rows->back().spools_body = true;
    add("DELETE", u, write, OnBucket<internal::PutToSession>);
  }
  add("GET", "/download/storage/v1/b/{bucket}/o/{object}", read, OnObject<internal::Download>);
  // Path-style reads (GET /BUCKET/OBJECT): last, and only for a bucket that exists.
  add("GET", "/{bucket}/{object=**}", read, OnObject<internal::Download>);
  rows->back().bucket_must_exist = true;
}

// The console: static files, public (what they show comes from the API, with a token).
void AddConsoleRows(std::vector<Route>* rows) {
  rows->push_back({"GET",
                   "/console/caller",
                   ApiDialect::kOps,
                   {Scope::kAnyone, Role::kNone},
                   [](const RouteCall& c) { return Respond(internal::ConsoleCaller(c)); }});
  for (const char* pattern : {"/console", "/console/{asset=**}"}) {
    rows->push_back(
        {"GET", pattern, ApiDialect::kOps, {Scope::kAnyone, Role::kNone}, [](const RouteCall& c) {
           return Respond(internal::ConsoleFile(c));
         }});
  }
}

std::vector<Route> AllRows() {
  std::vector<Route> rows;
  AddOpsRows(&rows);
  AddJobsRows(&rows);
  AddArtifactsRows(&rows);
  AddConsoleRows(&rows);
  for (const char* version : {"/v1", "/v1beta1"}) AddTensorboardRows(&rows, version);
  AddStorageRows(&rows);
  return rows;
}

}  // namespace

const RouteTable& ServiceRoutes() {
  static const RouteTable* const table = new RouteTable(AllRows());
  return *table;
}

}  // namespace ty::api
