// Internal to api/: the Cloud Storage JSON API over gcs::ObjectStore
// (docs/contracts/cloud-storage-v1.md), as gcloud storage, the ml-engine package upload and
// the Python/Node clients (STORAGE_EMULATOR_HOST) call it.
//
// Paths (route_table.cc has their rows; B = bucket, O = one percent-encoded path segment holding
// the object name):
//   /storage/v1/b[/B[/storageLayout|/o[/O[/compose|/rewriteTo/b/B2/o/O2|/copyTo/...]]]]
//   /b/...                                the same, as Node sends them (no prefix)
//   /upload/storage/v1/b/B/o              POST multipart | media | resumable; PUT session
//   /resumable/upload/storage/v1/b/B/o    POST resumable (gcloud's initiation path)
//   /download/storage/v1/b/B/o/O          media
//   GET /B/O...                           path-style media, for an existing bucket B
// Errors carry Cloud Storage's shape: {"error":{"code","message","errors":[{"domain",
// "reason","message"}]}}.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/http_types.h"
#include "gcs/object_store.h"
#include "gcs/upload_sessions.h"

namespace ty::api::internal {

struct StorageContext {
  gcs::ObjectStore* store = nullptr;
  gcs::UploadSessions* sessions = nullptr;
  // Digests of a spooled request body, hashed as it arrived (Router::SpoolFileFor);
  // nullopt when unknown. `size`: the body's length.
  std::function<std::optional<std::pair<std::string, std::string>>(const std::string& file,
                                                                   uint64_t size)>
      spooled_hashes;
};

// The Cloud Storage routes' handlers, one per method and path (route_table.cc has the
// rows).
HttpResponse ListBuckets(const StorageContext& ctx, const HttpRequest& request);
HttpResponse InsertBucket(const StorageContext& ctx, const HttpRequest& request);
HttpResponse GetBucket(const StorageContext& ctx, const HttpRequest& request,
                       const std::string& bucket);
HttpResponse GetStorageLayout(const StorageContext& ctx, const HttpRequest& request,
                              const std::string& bucket);
// With ?project=: gives the bucket to that project (admins).
HttpResponse PatchBucket(const StorageContext& ctx, const HttpRequest& request,
                         const std::string& bucket);
HttpResponse DeleteBucket(const StorageContext& ctx, const HttpRequest& request,
                          const std::string& bucket);
HttpResponse ListObjects(const StorageContext& ctx, const HttpRequest& request,
                         const std::string& bucket);
// GET: the object's resource, or its bytes with ?alt=media.
HttpResponse GetObject(const StorageContext& ctx, const HttpRequest& request,
                       const std::string& bucket, const std::string& name);
HttpResponse DeleteObject(const StorageContext& ctx, const HttpRequest& request,
                          const std::string& bucket, const std::string& name);
HttpResponse PatchObject(const StorageContext& ctx, const HttpRequest& request,
                         const std::string& bucket, const std::string& name);
HttpResponse Compose(const StorageContext& ctx, const HttpRequest& request,
                     const std::string& bucket, const std::string& name);
// rewriteTo (`rewrite`) or copyTo, from bucket/name to target_bucket/target_name.
HttpResponse CopyObject(const StorageContext& ctx, const HttpRequest& request,
                        const std::string& bucket, const std::string& name,
                        const std::string& target_bucket, const std::string& target_name,
                        bool rewrite);
HttpResponse Download(const StorageContext& ctx, const HttpRequest& request,
                      const std::string& bucket, const std::string& name);

// ---- Shared by storage_api.cc and storage_uploads.cc ----------------------------

HttpResponse StorageError(const Status& status);
// "http://HOST" (https over TLS) of the request, for selfLink, mediaLink and session URLs.
std::string BaseUrl(const HttpRequest& request);
HttpResponse ObjectResponse(const HttpRequest& request, const gcs::ObjectInfo& info);
// ifGenerationMatch and friends from the query. InvalidArgument for a non-number.
Result<gcs::Preconditions> PreconditionsOf(const HttpRequest& request);

// Uploads (storage_uploads.cc): POST to the bucket's upload URL, PUT to a session.
HttpResponse UploadObject(const StorageContext& ctx, const HttpRequest& request,
                          const std::string& bucket);
HttpResponse PutToSession(const StorageContext& ctx, const HttpRequest& request,
                          const std::string& bucket);

}  // namespace ty::api::internal
