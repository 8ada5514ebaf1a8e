// Routing and the wire JSON of every endpoint (docs/contracts/client-wire.md §2, §5): turns an
// HttpRequest into JobService calls and an HttpResponse, for both dialects. Knows
// nothing of sockets; the Beast session (http_session.h) owns those and runs log
// follow streams, which this file only describes (LogFollow) and feeds (NextChunk).
//
// Routes (paths literal; `:cancel` may also arrive as `%3Acancel`). Router::Handle
// tries the Cloud Storage routes first (storage_api.h), then the rest (handlers.cc):
//   GET    /healthz                                    {"status":"ok"} (+ problems)
//   GET    /metrics                                    Prometheus text
//   GET    /admin/backup                               a copy of the job store (admins)
//   GET    /registry/token                             the registry's token service
//                                                      (registry_token.h; own auth)
//   POST   /v2/entries:list  (GET with a query too)    Cloud Logging v2
//   POST   /v1/projects/{p}/jobs                       ml v1 create (a tuning job when
//                                                      trainingInput.hyperparameters)
//   GET    /v1/projects/{p}/jobs[/{id}]                ml v1 list / get
//   POST   /v1/projects/{p}/jobs/{id}:cancel
//   GET    /v1/projects/{p}/jobs/{id}/logs             (our extension; ?follow=true)
//   GET    /v1/projects/{p}/jobs/{id}/details          (our extension)
//   POST   /v1/projects/{p}/locations/{l}/{c}          Vertex create, where {c} is
//   GET    /v1/projects/{p}/locations/{l}/{c}[/{id}]   customJobs or
//   POST   /v1/projects/{p}/locations/{l}/{c}/{id}:cancel   hyperparameterTuningJobs
//   DELETE /v1/projects/{p}/locations/{l}/{c}/{id}
//   GET    /v1/projects/{p}/locations/{l}/{c}/{id}/logs     (our extension)
//   GET    /v1/projects/{p}/locations/{l}/{c}/{id}/details  (our extension)
//   GET    /{v1,ui}/projects/{p}/locations/{l}[/{c}/{id}]/operations/{n}
//   Cloud Storage JSON API (only with an ObjectStore):
//          /storage/v1/b[/{bucket}[/o[/{object}[/compose|/rewriteTo/..|/copyTo/..]]]]
//          /b/...                                      the same, as Node's client sends it
//   POST   /upload/storage/v1/b/{bucket}/o             media, multipart, resumable start
//   PUT    /upload/storage/v1/b/{bucket}/o?upload_id=  resumable session (308 protocol)
//          /resumable/upload/storage/v1/...            the same, under that prefix
//   GET    /download/storage/v1/b/{bucket}/o/{object}  media download (Range)
//   GET    /{bucket}/{object}                          path-style read of an existing bucket
// An unknown path, and a known path with a method it does not serve, answer 404
// NOT_FOUND, as Google's front end does for a method it does not know.
//
// Thread-safety: a Router is immutable after construction; Handle and NextChunk may
// run concurrently on any threads (the JobService is thread-safe).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "api/access.h"
#include "api/http_types.h"
#include "api/registry_token.h"
#include "gcs/hashes.h"
#include "gcs/object_store.h"
#include "gcs/upload_sessions.h"
#include "service/job_service.h"

namespace ty::api {

// A `follow=true` log request, validated and ready to stream. The session keeps it
// and passes it back to Router::NextChunk until `done`.
struct LogFollow {
  service::JobRef ref;
  std::string task;    // Only this task's entries when non-empty.
  std::string cursor;  // Position after the last entry sent.
  bool done = false;
};

struct Dispatch {
  HttpResponse response;            // The answer, unless `follow` is set.
  std::optional<LogFollow> follow;  // Stream instead (200, application/x-ndjson).
};

// One step of a follow stream.
struct FollowChunk {
  std::string data;  // NDJSON lines to send now; may be empty.
  // True: nothing new; wait a little and ask again (unless `LogFollow::done`).
  bool idle = false;
};

class Router {
 public:
  // `storage` (optional, not owned): serves the Cloud Storage JSON API over it;
  // `random` (required with storage): its upload sessions' ids.
  // `storage_only`: everything but the Cloud Storage API and /healthz is a 404.
  // `gate`: who may ask what (api/access.h); every request passes it first.
  // `registry_tokens`: GET /registry/token (api/registry_token.h), before the gate.
  explicit Router(service::JobService* service, gcs::ObjectStore* storage = nullptr,
                  Random* random = nullptr, bool storage_only = false, AccessGate gate = {},
                  RegistryTokenService registry_tokens = {});
  ~Router();

  Dispatch Handle(const HttpRequest& request) const;
  // Where the body of a request with these headers goes instead of memory: a new
  // staging file for Cloud Storage uploads the gate admits; nullopt for everything
  // else (a refused upload is read into memory, up to the small-body limit, and
  // answered 401/403: nobody writes gigabytes to disk without a token).
  std::optional<std::string> SpoolFileFor(const HttpRequest& head) const;
  // The spooled request never reached Handle (the client went away): forget it.
  void DropSpool(const std::string& file) const;

  // Reads what was appended after `follow->cursor` (up to about `max_bytes` of
  // NDJSON), advancing the cursor. Marks the stream done once the job is terminal and
  // its log is drained, or when the job vanishes or reading fails (an error line
  // `{"error":{...}}` is then the last line).
  FollowChunk NextChunk(LogFollow* follow, size_t max_bytes = 64 * 1024) const;

 private:
  service::JobService* service_;  // Not owned.
  gcs::ObjectStore* storage_;     // Not owned; may be null.
  const bool storage_only_;
  const AccessGate gate_;
  const RegistryTokenService registry_tokens_;
  std::unique_ptr<gcs::UploadSessions> sessions_;
  // Hashers following spooled upload bodies, by file (SpoolFileFor .. Handle).
  mutable std::mutex spool_mu_;
  mutable std::map<std::string, std::unique_ptr<gcs::FollowingHasher>> followers_;
};

}  // namespace ty::api
