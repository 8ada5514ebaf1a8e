// Router::Handle: path matching and the helpers shared by the endpoint files.
#include "api/handlers.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/endpoints.h"
#include "api/http_status.h"
#include "api/query.h"
#include "api/storage_api.h"
#include "model/resource_ids.h"

namespace ty::api {

namespace internal {

std::string Param(const HttpRequest& request, const std::string& name) {
  auto it = request.query.find(name);
  return it == request.query.end() ? "" : it->second;
}

Result<int> IntParam(const HttpRequest& request, const std::string& name, int fallback) {
  auto it = request.query.find(name);
  if (it == request.query.end() || it->second.empty()) return fallback;
  const std::string& text = it->second;
  long long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') {
      return InvalidArgument("Invalid value at '" + name + "' (TYPE_INT32), \"" + text + "\"");
    }
    // Saturate instead of overflowing; the service caps page sizes anyway.
    value = std::min<long long>(value * 10 + (c - '0'), 1LL << 31);
  }
  return static_cast<int>(std::min<long long>(value, 0x7fffffff));
}

Result<nlohmann::json> BodyObject(const HttpRequest& request) {
  bool blank = true;
  for (char c : request.body) blank = blank && (c == ' ' || c == '\t' || c == '\r' || c == '\n');
  if (blank) return nlohmann::json::object();
  nlohmann::json body;
  try {
    body = nlohmann::json::parse(request.body);
  } catch (const nlohmann::json::exception& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep its position text.
    std::string detail = e.what();
    if (size_t tag_end = detail.find("] ");
        detail.rfind("[json.", 0) == 0 && tag_end != std::string::npos) {
      detail = detail.substr(tag_end + 2);
    }
    return InvalidArgument("Invalid JSON payload received. " + detail);
  }
  if (!body.is_object()) {
    return InvalidArgument(
        "Invalid JSON payload received. Unknown name \"\": Root element must be a message.");
  }
  return body;
}

}  // namespace internal

namespace {

using internal::Call;
using model::Dialect;

HttpResponse NoRoute(const HttpRequest& request) {
  return ErrorResponse(
      NotFound("No method " + request.method + " " + request.path + " on this server."));
}

// The last segment may carry a custom verb: "123:cancel" -> ("123", "cancel"). Only
// the last segment, so a domain-scoped project ("example.com:p") stays intact.
std::string SplitVerb(std::vector<std::string>* segments) {
  if (segments->empty()) return "";
  std::string& last = segments->back();
  size_t colon = last.rfind(':');
  if (colon == std::string::npos) return "";
  std::string verb = last.substr(colon + 1);
  last.resize(colon);
  return verb;
}

wire::RenderOptions RenderOptionsOf(const HttpRequest& request) {
  wire::RenderOptions options;
  // `$alt=json;enum-encoding=int` (GAPIC sends it on every call but operation polls).
  for (const char* name : {"$alt", "alt"}) {
    if (internal::Param(request, name).find("enum-encoding=int") != std::string::npos) {
      options.enum_as_int = true;
    }
  }
  return options;
}

std::string Join(const std::vector<std::string>& segments, size_t from) {
  std::string out;
  for (size_t i = from; i < segments.size(); ++i) {
    if (!out.empty()) out += '/';
    out += segments[i];
  }
  return out;
}

Dispatch Respond(HttpResponse response) { return Dispatch{std::move(response), std::nullopt}; }

// Who owns an existing bucket, for the access gate.
BucketOwnerFn BucketOwnerOf(gcs::ObjectStore* store) {
  return [store](const std::string& bucket) -> std::optional<std::string> {
    if (store == nullptr || !store->GetBucket(bucket).ok()) return std::nullopt;
    return store->BucketOwner(bucket);
  };
}

// Cloud Logging's entries:list, the one route both listeners serve.
bool IsLoggingList(const HttpRequest& request) {
  std::vector<std::string> seg = SplitPath(request.path);
  return seg.size() == 2 && seg[0] == "v2" && seg[1] == "entries:list" &&
         (request.method == "POST" || request.method == "GET");
}

// Whether a Cloud Storage route would take the request (as RouteStorage decides).
bool IsStoragePath(const HttpRequest& request, gcs::ObjectStore* store) {
  const std::string& p = request.path;
  if (p.rfind("/storage/", 0) == 0 || p.rfind("/b/", 0) == 0 || p.rfind("/upload/", 0) == 0 ||
      p.rfind("/resumable/", 0) == 0 || p.rfind("/download/", 0) == 0) {
    return true;
  }
  std::vector<std::string> seg = SplitPath(p);  // Path-style reads: GET /BUCKET/OBJECT.
  return request.method == "GET" && seg.size() >= 2 && store != nullptr &&
         store->GetBucket(seg[0]).ok();
}

// A 401 or 403 in the shape the client of that path parses: Cloud Storage's for
// storage paths, google.rpc's for the rest; a 401 says which scheme it wants.
HttpResponse Refusal(const HttpRequest& request, gcs::ObjectStore* store, const Status& status) {
  HttpResponse r =
      IsStoragePath(request, store) ? internal::StorageError(status) : ErrorResponse(status);
  if (status.code() == StatusCode::kUnauthenticated) {
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"trainyard\"");
  }
  return r;
}

bool HealthDetailsFor(const AccessGate& gate, const HttpRequest& request) {
  if (gate.open()) return true;
  Result<auth::Principal> who = Authenticate(gate, request);
  return who.ok() && who->RoleIn("") == auth::Role::kAdmin;
}

// ml v1: projects/p/jobs[/id[/logs|/details]] (seg[3] == "jobs").
Dispatch RouteMlJobs(const Call& call, const std::vector<std::string>& seg,
                     const std::string& verb) {
  const std::string& method = call.request.method;
  const std::string& project = seg[2];
  const size_t n = seg.size();
  service::JobRef ref{Dialect::kMlV1, project, "", ""};
  if (n == 4 && verb.empty()) {
    if (method == "POST") return Respond(internal::CreateJob(call, ref));
    if (method == "GET") return Respond(internal::ListJobs(call, ref));
  } else if (n == 5) {
    ref.id = seg[4];
    if (verb.empty() && method == "GET") return Respond(internal::GetJob(call, ref));
    if (verb == "cancel" && method == "POST") return Respond(internal::CancelJob(call, ref));
  } else if (n == 6 && seg[5] == "logs" && verb.empty() && method == "GET") {
    ref.id = seg[4];
    return internal::ReadLogs(call, ref);
  } else if (n == 6 && seg[5] == "details" && verb.empty() && method == "GET") {
    ref.id = seg[4];
    return Respond(internal::GetJobDetails(call, ref));
  }
  return Respond(NoRoute(call.request));
}

bool IsVertexCollection(const std::string& segment) {
  return segment == "customJobs" || segment == "hyperparameterTuningJobs" ||
         segment == "trainingPipelines";
}

// Vertex: projects/p/locations/l/{customJobs|hyperparameterTuningJobs|trainingPipelines}
// [/id[/logs|/details]].
Dispatch RouteVertexJobs(const Call& call, const std::vector<std::string>& seg,
                         const std::string& verb) {
  const std::string& method = call.request.method;
  const std::string& project = seg[2];
  const size_t n = seg.size();
  service::JobRef ref{Dialect::kVertex, project, seg[4], ""};
  ref.collection = seg[5] == "hyperparameterTuningJobs"
                       ? model::VertexCollection::kHyperparameterTuningJobs
                   : seg[5] == "trainingPipelines" ? model::VertexCollection::kTrainingPipelines
                                                   : model::VertexCollection::kCustomJobs;
  if (n == 6 && verb.empty()) {
    if (method == "POST") return Respond(internal::CreateJob(call, ref));
    if (method == "GET") return Respond(internal::ListJobs(call, ref));
  } else if (n == 7) {
    ref.id = seg[6];
    if (verb.empty() && method == "GET") return Respond(internal::GetJob(call, ref));
    if (verb.empty() && method == "DELETE") return Respond(internal::DeleteJob(call, ref));
    if (verb == "cancel" && method == "POST") return Respond(internal::CancelJob(call, ref));
  } else if (n == 8 && seg[7] == "logs" && verb.empty() && method == "GET") {
    ref.id = seg[6];
    return internal::ReadLogs(call, ref);
  } else if (n == 8 && seg[7] == "details" && verb.empty() && method == "GET") {
    ref.id = seg[6];
    return Respond(internal::GetJobDetails(call, ref));
  }
  return Respond(NoRoute(call.request));
}

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

// `health_details`: /healthz names problems and the engine's state (admins, or
// everyone on a daemon without tokens); others learn only "ok" or "degraded".
Dispatch Route(service::JobService* service, const HttpRequest& request, bool health_details) {
  std::vector<std::string> seg = SplitPath(request.path);
  const std::string& method = request.method;
  if (seg.size() == 1 && seg[0] == "healthz" && method == "GET") {
    return Respond(JsonResponse(Health(service, health_details)));
  }
  if (seg.size() == 1 && seg[0] == "metrics" && method == "GET") {
    return Respond(internal::Metrics(service));
  }
  if (seg.size() == 2 && seg[0] == "admin" && seg[1] == "backup" && method == "GET") {
    return Respond(internal::Backup(service));
  }
  if (seg.size() < 4 || (seg[0] != "v1" && seg[0] != "ui") || seg[1] != "projects") {
    return Respond(NoRoute(request));
  }
  const bool ui = seg[0] == "ui";
  std::string verb = SplitVerb(&seg);
  Call call{service, request, RenderOptionsOf(request)};
  const size_t n = seg.size();

  // Operations, under /v1 and /ui (GAPIC polls /ui/..., docs/contracts/client-wire.md §2):
  //   projects/p/locations/l/operations/o, projects/p/locations/l/customJobs/j/operations/o.
  if (verb.empty() && method == "GET" && n >= 7 && seg[3] == "locations" &&
      seg[n - 2] == "operations" && (n == 7 || (n == 9 && IsVertexCollection(seg[5])))) {
    return Respond(internal::GetOperation(call, Join(seg, 1)));
  }
  if (ui) return Respond(NoRoute(request));

  // The ids key stored rows and engine labels: Google's shape, or a 400 naming it.
  if (Status s = model::CheckProjectId(seg[2]); !s.ok()) return Respond(ErrorResponse(s));
  if (seg[3] == "locations" && n > 4) {
    if (Status s = model::CheckLocationId(seg[4]); !s.ok()) return Respond(ErrorResponse(s));
  }
  if (seg[3] == "jobs") return RouteMlJobs(call, seg, verb);
  if (seg[3] == "locations" && n >= 6 && IsVertexCollection(seg[5])) {
    return RouteVertexJobs(call, seg, verb);
  }
  return Respond(NoRoute(request));
}

}  // namespace

Router::Router(service::JobService* service, gcs::ObjectStore* storage, Random* random,
               bool storage_only, AccessGate gate, RegistryTokenService registry_tokens)
    : service_(service),
      storage_(storage),
      storage_only_(storage_only),
      gate_(std::move(gate)),
      registry_tokens_(std::move(registry_tokens)),
      sessions_(storage != nullptr && random != nullptr
                    ? std::make_unique<gcs::UploadSessions>(storage, *random)
                    : nullptr) {
  if (sessions_) {
    for (const std::string& why : sessions_->set_aside()) spdlog::warn("storage: {}", why);
  }
}
Router::~Router() = default;

std::optional<std::string> Router::SpoolFileFor(const HttpRequest& head) const {
  if (storage_ == nullptr || !internal::IsStorageUpload(head)) return std::nullopt;
  if (!Admit(gate_, head, BucketOwnerOf(storage_)).ok()) return std::nullopt;
  Result<std::string> file = storage_->NewStagingFile();
  if (!file.ok()) return std::nullopt;  // Read into memory; the handler reports the trouble.
  // MD5 is the slow part of an upload (~0.5 GB/s): hash while the bytes arrive, for
  // the bodies that are the object's bytes (media uploads, session PUTs); a thread
  // per small multipart upload would cost more than it saves.
  auto type = head.query.find("uploadType");
  bool body_is_object =
      head.method == "PUT" || (type != head.query.end() && type->second == "media");
  if (!body_is_object) return *file;
  std::lock_guard<std::mutex> lock(spool_mu_);
  followers_[*file] = std::make_unique<gcs::FollowingHasher>(*file);
  return *file;
}

void Router::DropSpool(const std::string& file) const {
  std::unique_ptr<gcs::FollowingHasher> follower;
  {
    std::lock_guard<std::mutex> lock(spool_mu_);
    auto it = followers_.find(file);
    if (it == followers_.end()) return;
    follower = std::move(it->second);
    followers_.erase(it);
  }
  // Destroyed here, outside the lock: it joins its thread.
}

Dispatch Router::Handle(const HttpRequest& request) const {
  // Last line of defence: a throw from a library must become a 500, not unwind into
  // the network code (docs/style.md §4: no exceptions across modules).
  try {
    const bool health = request.method == "GET" && request.path == "/healthz";
    // The registry's clients speak Docker's token protocol, with credentials of their
    // own kind: that route authenticates its callers itself.
    if (registry_tokens_.issuer != nullptr && !storage_only_ && request.method == "GET" &&
        request.path == kRegistryTokenPath) {
      return Respond(IssueRegistryToken(registry_tokens_, request));
    }
    // What the replica listener does not serve is a 404 for everyone, as before: it
    // serves Cloud Storage and a replica's own job's Logging entries.
    const bool logging = IsLoggingList(request);
    if (storage_only_ && !health && !logging && !IsStoragePath(request, storage_)) {
      return Respond(NoRoute(request));
    }
    Result<auth::Principal> admitted = AdmitAs(gate_, request, BucketOwnerOf(storage_));
    if (!admitted.ok()) return Respond(Refusal(request, storage_, admitted.status()));
    if (logging) {
      return Respond(internal::ListLogEntries(Call{service_, request, RenderOptionsOf(request)},
                                              admitted->only_job));
    }
    internal::StorageContext storage{storage_, sessions_.get(), nullptr};
    std::unique_ptr<gcs::FollowingHasher> follower;
    if (!request.body_file.empty()) {
      std::lock_guard<std::mutex> lock(spool_mu_);
      auto it = followers_.find(request.body_file);
      if (it != followers_.end()) {
        follower = std::move(it->second);
        followers_.erase(it);
      }
    }
    storage.spooled_hashes =
        [&](const std::string& file,
            uint64_t size) -> std::optional<std::pair<std::string, std::string>> {
      if (!follower || file != request.body_file) return std::nullopt;
      auto hashes = follower->Finish(size);
      return hashes.ok() ? std::optional(*hashes) : std::nullopt;
    };
    if (std::optional<HttpResponse> answer = internal::RouteStorage(storage, request)) {
      return Respond(std::move(*answer));
    }
    if (storage_only_ && !health) return Respond(NoRoute(request));
    return Route(service_, request, HealthDetailsFor(gate_, request));
  } catch (const std::exception& e) {
    return Respond(ErrorResponse(Internal(std::string("internal error: ") + e.what())));
  }
}

}  // namespace ty::api
