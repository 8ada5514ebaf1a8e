// Routing and the wire JSON of every endpoint (docs/contracts/client-wire.md §2, §5): turns an
// HttpRequest into JobService calls and an HttpResponse, for both dialects. Knows
// nothing of sockets; the Beast session (http_session.h) owns those and runs log
// follow streams, which this file only describes (LogFollow) and feeds (NextChunk).
//
// Routes: one table, every endpoint a row (routes.h; the rows are in route_table.cc):
// /healthz, /metrics, /admin/backup, the registry's /registry/token, Cloud Logging's
// entries:list, the ml v1 and Vertex job collections with our /logs and /details
// extensions, their operations (under /v1 and GAPIC's /ui), and the Cloud Storage JSON
// API with its upload, download and path-style read paths. Router::Handle matches a
// request once, passes it through the access gate with the matched row's access, and
// runs the row's handler. A path no row takes, and a method a known path does not
// serve, answer 404 NOT_FOUND, as Google's front end does for a method it does not know.
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
#include "api/routes.h"
#include "artifacts/repositories.h"
#include "gcs/hashes.h"
#include "gcs/object_store.h"
#include "gcs/upload_sessions.h"
#include "service/job_service.h"
#include "tensorboard/store.h"

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
  HttpResponse response;            // The answer, unless `follow` or `shell` is set.
  std::optional<LogFollow> follow;  // Stream instead (200, application/x-ndjson).
  // A replica's shell, opened for a WebSocket the session has accepted (shell_bridge.h).
  std::shared_ptr<service::ReplicaShell> shell;
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
  // `artifacts` (optional, not owned): Artifact Registry's repositories.
  // `tensorboards` (optional, not owned): Vertex AI TensorBoard's resources.
  explicit Router(service::JobService* service, gcs::ObjectStore* storage = nullptr,
                  Random* random = nullptr, bool storage_only = false, AccessGate gate = {},
                  RegistryTokenService registry_tokens = {},
                  artifacts::Repositories* artifacts = nullptr,
                  tensorboard::Store* tensorboards = nullptr);
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
  artifacts::Repositories* const artifacts_;  // Not owned; may be null.
  tensorboard::Store* const tensorboards_;    // Not owned; may be null.
  std::unique_ptr<gcs::UploadSessions> sessions_;
  const RouteTable routes_;  // The rows of ServiceRoutes() this listener serves.
  // Hashers following spooled upload bodies, by file (SpoolFileFor .. Handle).
  mutable std::mutex spool_mu_;
  mutable std::map<std::string, std::unique_ptr<gcs::FollowingHasher>> followers_;

  // The hasher following spooled `file`, taken out of followers_ (null: none).
  std::unique_ptr<gcs::FollowingHasher> TakeFollower(const std::string& file) const;
};

}  // namespace ty::api
