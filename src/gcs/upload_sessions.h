// Resumable upload sessions (docs/contracts/cloud-storage-v1.md §2, resumable): what an initiation
// promised (object name, attributes, preconditions, maybe the total size) and the
// bytes persisted so far, in a staging file of the ObjectStore, until the last
// byte arrives and the object is committed.
//
// Sessions survive a daemon restart: each is a small JSON file under
// <state>/sessions/<id>.json beside its bytes (<state>/staging/session-<id>), in the
// store's state directory, which no replica can reach; the bytes' path is derived
// from the id (32 hex digits, checked), never read from the file. Because
// gcloud keeps a session URL in a tracker file and, finding it unknown (404),
// fails the copy instead of starting over. The bytes held are the staging file's
// size. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/random.h"
#include "gcs/object_store.h"

namespace ty::gcs {

struct UploadSession {
  std::string bucket;
  std::string name;
  ObjectAttributes attributes;
  Preconditions preconditions;
  std::optional<uint64_t> total;  // From X-Upload-Content-Length or a Content-Range.
  std::string staged;             // Bytes persisted so far (derived from the id).
  uint64_t persisted = 0;
};

// How one PUT to a session ended.
struct UploadProgress {
  uint64_t persisted = 0;            // Bytes the session holds (for Range: bytes=0-N).
  std::optional<ObjectInfo> object;  // Set when the upload is complete.
};

class UploadSessions {
 public:
  // Loads the sessions a previous daemon left (and drops bytes without a session).
  // Session ids come from `random` (main wires the system's: whoever knows an id may
  // write the object, so it must not be guessable).
  UploadSessions(ObjectStore* store, Random& random);

  // A new session id. Checks the bucket and name first (NotFound, InvalidArgument).
  Result<std::string> Start(UploadSession session);

  // Appends bytes [first, first + size of `chunk_file`) of the object. `first`
  // must not be past what is persisted (bytes already held are skipped; a gap is
  // InvalidArgument). `total`, when the request knows it, completes the upload
  // once that many bytes are held; `last` (a `bytes a-*/...` or unknown-size
  // final request) completes it with what is held. NotFound for an unknown id.
  // `chunk_hashes`: the chunk's digests when known; used when the chunk alone is
  // the whole object (gcloud's single PUT), so it is not read again.
  Result<UploadProgress> Put(const std::string& id, uint64_t first, const std::string& chunk_file,
                             std::optional<uint64_t> total, bool last,
                             const std::pair<std::string, std::string>* chunk_hashes = nullptr);
  // A status query (`bytes */*`, or `bytes */T` to finalize with what is held).
  Result<UploadProgress> Query(const std::string& id, std::optional<uint64_t> total);
  // The bucket a session (live, or finished and still remembered) writes into;
  // nullopt for an unknown id. A request to a session is authorised by the bucket in
  // its URL, so the API answers 404 unless that bucket is this one.
  std::optional<std::string> BucketOf(const std::string& id);
  // Session files the constructor found to be no session and removed, each with why.
  const std::vector<std::string>& set_aside() const { return set_aside_; }
  // Drops a session and its bytes (DELETE of the session URL). OK if unknown.
  void Cancel(const std::string& id);

 private:
  Result<UploadProgress> MaybeFinish(const std::string& id, UploadSession* s,
                                     const std::pair<std::string, std::string>* hashes = nullptr);
  std::string SessionFile(const std::string& id) const;
  std::string StagedFile(const std::string& id) const;
  static bool IsSessionId(const std::string& id);
  void Save(const std::string& id, const UploadSession& s) const;
  void Forget(const std::string& id);  // REQUIRES: mu_ held.

  ObjectStore* store_;
  Random* const random_;
  std::mutex mu_;
  std::map<std::string, UploadSession> sessions_;
  std::map<std::string, ObjectInfo> finished_;  // A repeated final PUT answers again.
  std::vector<std::string> set_aside_;          // Written by the constructor only.
};

}  // namespace ty::gcs
