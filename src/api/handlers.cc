// Router::Handle: match the route, admit the caller, run the row; and the request
// helpers shared by the endpoint files.
#include "api/handlers.h"

#include <spdlog/spdlog.h>

#include <cctype>
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

using internal::Respond;

HttpResponse NoRoute(const HttpRequest& request) {
  return ErrorResponse(
      NotFound("No method " + request.method + " " + request.path + " on this server."));
}

// "http(s)://HOST" as the caller reached us, for links back (webAccessUris); "" when
// Host is not a plain host[:port] (it is the caller's to send, so it is checked before
// it goes into a link).
std::string OriginOf(const HttpRequest& request) {
  const std::string host = request.Header("host");
  if (host.empty() || host.size() > 255) return "";
  for (char c : host) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
                    c == ':' || c == '[' || c == ']' || c == '_';
    if (!ok) return "";
  }
  return (request.tls ? "https://" : "http://") + host;
}

wire::RenderOptions RenderOptionsOf(const HttpRequest& request) {
  wire::RenderOptions options;
  // `$alt=json;enum-encoding=int` (GAPIC sends it on every call but operation polls).
  for (const char* name : {"$alt", "alt"}) {
    if (internal::Param(request, name).find("enum-encoding=int") != std::string::npos) {
      options.enum_as_int = true;
    }
  }
  options.web_access_origin = OriginOf(request);
  return options;
}

// Who owns an existing bucket, for the access gate.
BucketOwnerFn BucketOwnerOf(gcs::ObjectStore* store) {
  return [store](const std::string& bucket) -> std::optional<std::string> {
    if (store == nullptr || !store->GetBucket(bucket).ok()) return std::nullopt;
    return store->BucketOwner(bucket);
  };
}

RouteTable::BucketExists BucketExistsIn(gcs::ObjectStore* store) {
  if (store == nullptr) return nullptr;
  return [store](const std::string& bucket) { return store->GetBucket(bucket).ok(); };
}

// An error in the shape the client of `row` parses: Cloud Storage's for its routes,
// google.rpc's for the rest (and for a path no row takes); a 401 says which scheme it
// wants.
HttpResponse ErrorIn(const Route* row, const Status& status) {
  HttpResponse r = row != nullptr && row->dialect == ApiDialect::kStorage
                       ? internal::StorageError(status)
                       : ErrorResponse(status);
  if (status.code() == StatusCode::kUnauthenticated) {
    r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"trainyard\"");
  }
  return r;
}

// The rows a listener serves: the replica listener only Cloud Storage, Logging and
// /healthz; Cloud Storage only over a store; the registry's tokens only with an issuer;
// Artifact Registry's repositories only with their store.
std::vector<Route> RowsServed(bool storage, bool storage_only, bool registry, bool artifacts,
                              bool tensorboards) {
  std::vector<Route> rows;
  for (const Route& row : ServiceRoutes().rows()) {
    if (storage_only && !row.on_replica_listener) continue;
    if (!storage && row.dialect == ApiDialect::kStorage) continue;
    if (!registry && row.dialect == ApiDialect::kRegistry) continue;
    if (!artifacts && row.dialect == ApiDialect::kArtifacts) continue;
    if (!tensorboards && row.dialect == ApiDialect::kTensorboards) continue;
    rows.push_back(row);
  }
  return rows;
}

// Storage clients form-encode their query strings (api/query.h): for their rows, a
// copy of the request with the query read so (`*copy`); every other request as it is,
// never copied (its body may be megabytes).
const HttpRequest& AsItsDialectReadsIt(const Route* row, const HttpRequest& request,
                                       std::optional<HttpRequest>* copy) {
  if (row == nullptr || row->dialect != ApiDialect::kStorage || request.raw_query.empty()) {
    return request;
  }
  copy->emplace(request);
  (*copy)->query = ParseQuery(request.raw_query, /*plus_is_space=*/true);
  return **copy;
}

}  // namespace

Router::Router(service::JobService* service, gcs::ObjectStore* storage, Random* random,
               bool storage_only, AccessGate gate, RegistryTokenService registry_tokens,
               artifacts::Repositories* artifacts, tensorboard::Store* tensorboards)
    : service_(service),
      storage_(storage),
      storage_only_(storage_only),
      gate_(std::move(gate)),
      registry_tokens_(std::move(registry_tokens)),
      artifacts_(artifacts),
      tensorboards_(tensorboards),
      sessions_(storage != nullptr && random != nullptr
                    ? std::make_unique<gcs::UploadSessions>(storage, *random)
                    : nullptr),
      routes_(RowsServed(storage != nullptr, storage_only,
                         !storage_only && registry_tokens_.issuer != nullptr, artifacts != nullptr,
                         tensorboards != nullptr)) {
  if (sessions_) {
    for (const std::string& why : sessions_->set_aside()) spdlog::warn("storage: {}", why);
  }
}
Router::~Router() = default;

std::optional<std::string> Router::SpoolFileFor(const HttpRequest& head) const {
  const RouteMatch match = routes_.Match(head.method, head.path, BucketExistsIn(storage_));
  if (storage_ == nullptr || match.route == nullptr || !match.route->spools_body) {
    return std::nullopt;
  }
  if (!Admit(gate_, match, head, BucketOwnerOf(storage_)).ok()) return std::nullopt;
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
    const RouteMatch match = routes_.Match(request.method, request.path, BucketExistsIn(storage_));
    const Route* row = match.shaping();
    // What the replica listener does not serve is a 404 for everyone.
    if (row == nullptr && storage_only_) return Respond(NoRoute(request));
    std::optional<HttpRequest> form_decoded;
    const HttpRequest& r = AsItsDialectReadsIt(row, request, &form_decoded);
    // The registry's clients speak Docker's token protocol, with credentials of their
    // own kind: that route authenticates its callers itself.
    const bool own_auth = match.route != nullptr && row->access.scope == Scope::kOwnAuth;
    Result<auth::Principal> admitted =
        own_auth ? auth::Principal{} : Admit(gate_, match, r, BucketOwnerOf(storage_));
    if (!admitted.ok()) return Respond(ErrorIn(row, admitted.status()));
    if (match.route == nullptr) {
      return Respond(row == nullptr ? NoRoute(request)
                                    : ErrorIn(row, NotFound("No method " + request.method + " " +
                                                            request.path + " on this server.")));
    }
    std::unique_ptr<gcs::FollowingHasher> follower = TakeFollower(request.body_file);
    internal::StorageContext storage{storage_, sessions_.get(), nullptr};
    storage.spooled_hashes =
        [&](const std::string& file,
            uint64_t size) -> std::optional<std::pair<std::string, std::string>> {
      if (!follower || file != request.body_file) return std::nullopt;
      auto hashes = follower->Finish(size);
      return hashes.ok() ? std::optional(*hashes) : std::nullopt;
    };
    const internal::RouteCall call{
        service_,         r,          match.params,  row->dialect,      *admitted, storage,
        registry_tokens_, artifacts_, tensorboards_, RenderOptionsOf(r)};
    return match.route->handler(call);
  } catch (const std::exception& e) {
    return Respond(ErrorResponse(Internal(std::string("internal error: ") + e.what())));
  }
}

std::unique_ptr<gcs::FollowingHasher> Router::TakeFollower(const std::string& file) const {
  if (file.empty()) return nullptr;
  std::lock_guard<std::mutex> lock(spool_mu_);
  auto it = followers_.find(file);
  if (it == followers_.end()) return nullptr;
  std::unique_ptr<gcs::FollowingHasher> follower = std::move(it->second);
  followers_.erase(it);
  return follower;
}

}  // namespace ty::api
