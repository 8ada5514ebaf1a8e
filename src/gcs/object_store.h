// ObjectStore: Cloud Storage buckets and objects over the bucket directories, the
// same bytes replicas see at /gcs/BUCKET (docs/contracts/cloud-storage-v1.md).
//
// Layout:
//   <root>/<bucket>/<object name>      the object's bytes; '/' in names are directories
//   <state>/meta/<bucket>/<md5 of name>.json
//                                      what a file cannot hold: generation check,
//                                      content type, user metadata, hashes
//   <state>/staging/                   uploads in progress
// The state directory is the daemon's own (<data_dir>/storage), never under the
// bucket root: replicas write anything they like into their buckets, so nothing the
// daemon trusts (hash sidecars, upload sessions) may live where a replica can reach.
// Staging files are renamed into buckets; when the two directories are on different
// filesystems the bytes are copied beside the object first (then renamed).
//
// Buckets belong to projects (<state>/owners.json), from the moment they exist: a
// bucket is its creator's (the `project` of a buckets.insert), or is made for the
// project of the first job that names it. One that exists without an owner (an
// admin's buckets.insert without a project, a directory found on disk, a bucket older
// than the owners file) is reachable by admins only until an admin assigns it
// (AssignBucket). A job naming a bucket that exists and is not its project's is
// refused, whoever owns it, and replicas see only their project's buckets.
//
// Decisions (where the spec leaves room):
//  - generation = the file's modification time in microseconds. A write sets it
//    (strictly increasing per object), so a file a replica wrote through /gcs has a
//    generation too; metageneration starts at 1 and grows with Patch.
//  - The sidecar is trusted only while the file's size, mtime and inode are what it
//    recorded; a file changed through /gcs gets its hashes computed again on the
//    next read of its metadata (and cached), content type application/octet-stream.
//  - Names are stored as paths, so a name must be a relative path of non-empty
//    segments other than "." and "..", without NUL, at most 1024 bytes (400
//    otherwise), and a name cannot be both an object and a prefix of another object
//    ("a" and "a/b"): the second write is a 409 naming the clash.
//  - Writes are atomic: bytes go to a staging file, are hashed, and are renamed over
//    the object; a reader sees the old object or the new one, never half.
// Thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "gcs/hash_queue.h"

struct stat;

namespace ty::gcs {

struct BucketInfo {
  std::string name;
  TimeMicros time_created = 0;
};

struct ObjectInfo {
  std::string bucket;
  std::string name;
  int64_t generation = 0;
  int64_t metageneration = 1;
  uint64_t size = 0;
  std::string content_type = "application/octet-stream";
  std::string content_encoding;
  std::string cache_control;
  std::string content_disposition;
  std::map<std::string, std::string> metadata;
  std::string md5_b64;  // "" for composite objects (as Google: only crc32c).
  std::string crc32c_b64;
  TimeMicros time_created = 0;
  TimeMicros updated = 0;
  int component_count = 0;  // Composed objects only.
};

// Conditions a request may put on the live object (docs/contracts/cloud-storage-v1.md §6); absent =
// none.
struct Preconditions {
  std::optional<int64_t> if_generation_match;  // 0 = only if there is no live object.
  std::optional<int64_t> if_generation_not_match;
  std::optional<int64_t> if_metageneration_match;
  std::optional<int64_t> if_metageneration_not_match;
};

// What a write says about the object besides its bytes.
struct ObjectAttributes {
  std::string content_type;  // "" = application/octet-stream.
  std::string content_encoding;
  std::string cache_control;
  std::string content_disposition;
  std::map<std::string, std::string> metadata;
};

struct ListQuery {
  std::string prefix;
  std::string delimiter;   // "" = recursive.
  std::string page_token;  // Opaque, from ListResult.
  size_t max_results = 1000;
  std::string start_offset;  // Names >= this.
  std::string end_offset;    // Names < this ("" = no bound).
};

struct ListResult {
  std::vector<ObjectInfo> items;
  std::vector<std::string> prefixes;
  std::string next_page_token;
};

// Changes Patch makes; absent fields stay. A metadata value nullopt removes the key.
struct ObjectPatch {
  std::optional<std::string> content_type;
  std::optional<std::string> content_encoding;
  std::optional<std::string> cache_control;
  std::optional<std::string> content_disposition;
  std::map<std::string, std::optional<std::string>> metadata;
  bool clear_metadata = false;  // `"metadata": null`.
};

// An object opened for reading (ObjectStore::OpenForRead). Move-only.
class ObjectReader {
 public:
  ObjectReader(ObjectInfo info, int fd) : info_(std::move(info)), fd_(fd) {}
  ObjectReader(ObjectReader&& o) noexcept : info_(std::move(o.info_)), fd_(o.fd_) { o.fd_ = -1; }
  ObjectReader& operator=(ObjectReader&&) = delete;
  ~ObjectReader();
  const ObjectInfo& info() const { return info_; }
  // Up to `n` bytes at `offset` (fewer only at the end). Internal on I/O failure.
  Result<std::string> Read(uint64_t offset, size_t n) const;
  // Writes all its bytes into `out_fd` at `*out_offset` (advanced), in the kernel
  // where it can (copy_file_range: no trip through user space, a reflink where the
  // filesystem shares blocks).
  Status CopyTo(int out_fd, uint64_t* out_offset) const;

 private:
  ObjectInfo info_;
  int fd_;
};

class ObjectStore {
 public:
  // Creates the bucket root and the state directory's parts if missing. `clock` is
  // required (only main wires the system's).
  static Result<std::unique_ptr<ObjectStore>> Open(const std::string& root,
                                                   const std::string& state_dir,
                                                   const Clock* clock);
  ~ObjectStore();

  const std::string& root() const { return root_; }
  const std::string& state_dir() const { return state_; }

  // From now on objects, and the directories the store makes in buckets, belong to
  // `uid` (and gid): root in the replicas' user namespace, so replicas can rewrite
  // what clients stored and clients what replicas wrote. The first time for a uid,
  // everything the bucket root already holds is given to it too (state_dir/owner
  // records that it was). Before serving; Internal if the walk fails.
  Status SetObjectOwner(uint32_t uid);

  // ---- Buckets (name rules: 3-63 of [a-z0-9._-], starting and ending with a
  // letter or digit; InvalidArgument otherwise).
  Result<std::vector<BucketInfo>> ListBuckets() const;
  Result<BucketInfo> GetBucket(const std::string& bucket) const;  // NotFound.
  // AlreadyExists (409) when the name exists or another project holds it. `project`
  // (when set) becomes its owner; without one the bucket is no project's (admins only).
  Result<BucketInfo> CreateBucket(const std::string& bucket, const std::string& project = "");
  // ---- Owners. PermissionDenied naming the first of `buckets` that exists and is
  // not `project`'s (another project's, or no project's); otherwise every one of them
  // is `project`'s and exists (those that did not are made). Nothing changes on an
  // error.
  Status ClaimBuckets(const std::string& project, const std::vector<std::string>& buckets);
  // An admin's act: `bucket` (which must exist: NotFound) becomes `project`'s.
  Status AssignBucket(const std::string& bucket, const std::string& project);
  // What Open found damaged and set aside (the owners file), each with why; the daemon
  // logs them.
  const std::vector<std::string>& set_aside() const { return set_aside_; }
  // The buckets `project` owns, sorted; "" (no owner) for BucketOwner of an unowned one.
  std::vector<std::string> BucketsOwnedBy(const std::string& project) const;
  std::string BucketOwner(const std::string& bucket) const;
  // FailedPrecondition when it still holds objects.
  Status DeleteBucket(const std::string& bucket);

  // ---- Objects. NotFound for a missing bucket or object; FailedPrecondition
  // (412) when a precondition fails; InvalidArgument for a bad name.
  // `generation`, when set, must be the live one (no versioning).
  Result<ObjectInfo> Stat(const std::string& bucket, const std::string& name,
                          std::optional<int64_t> generation = std::nullopt);
  // The object's metadata and an open descriptor of its bytes, for reading ranges;
  // a reader keeps what it opened even if the object is replaced meanwhile.
  Result<ObjectReader> OpenForRead(const std::string& bucket, const std::string& name,
                                   std::optional<int64_t> generation);
  Result<ListResult> List(const std::string& bucket, const ListQuery& query);

  // A new empty staging file (same filesystem as the buckets) to write bytes into.
  // `name` (optional) names it; files named "session-*" survive Open (resumable
  // uploads, gcs/upload_sessions.h), every other leftover is removed there.
  Result<std::string> NewStagingFile(const std::string& name = "");
  // Makes the staged file `staged` the object: hashes it, checks preconditions
  // and name clashes, renames it into place. The staged file is gone afterwards
  // (moved or removed) unless an error is returned before it was touched.
  // `known_hashes` (base64 MD5, CRC-32C), when the caller hashed the bytes as they
  // arrived (FollowingHasher), spare reading the file again.
  Result<ObjectInfo> Commit(const std::string& bucket, const std::string& name,
                            const ObjectAttributes& attributes, const Preconditions& pre,
                            const std::string& staged, int component_count = 0,
                            const std::pair<std::string, std::string>* known_hashes = nullptr);
  Status Delete(const std::string& bucket, const std::string& name,
                std::optional<int64_t> generation, const Preconditions& pre);
  Result<ObjectInfo> Patch(const std::string& bucket, const std::string& name,
                           const ObjectPatch& patch, const Preconditions& pre);

  // Checks the name rules (for callers that validate before staging bytes).
  static Status CheckBucketName(const std::string& bucket);
  static Status CheckObjectName(const std::string& name);

 private:
  ObjectStore(std::string root, std::string state_dir, const Clock* clock);
  std::string BucketDir(const std::string& bucket) const { return root_ + "/" + bucket; }
  std::string ObjectPath(const std::string& bucket, const std::string& name) const {
    return BucketDir(bucket) + "/" + name;
  }
  std::string MetaPath(const std::string& bucket, const std::string& name) const;
  // The directory holding the object, opened without following any symlink a
  // replica may have planted (so nothing outside the bucket is reached); with
  // `create`, missing directories are made. `*leaf` gets the last name segment.
  Result<int> OpenParent(const std::string& bucket, const std::string& name, bool create,
                         std::string* leaf) const;
  // The object's file opened for reading (a descriptor), if it is a regular file:
  // FIFOs, sockets, devices and symlinks are not objects (NotFound).
  Result<int> OpenRegular(const std::string& bucket, const std::string& name,
                          struct stat* st) const;
  // The object's info from its file and sidecar (hashes computed if stale: inline up
  // to kInlineHashBytes, by the hash queue beyond, the info then without hashes).
  // `holding_lock`: the caller holds mu_ (the hash cache is written under it).
  Result<ObjectInfo> Load(const std::string& bucket, const std::string& name,
                          bool holding_lock = false);
  // Load over an open descriptor; `stop` set = the hash queue's worker (hashes
  // whatever the size, gives up when `stop` turns true).
  Result<ObjectInfo> LoadOpen(const std::string& bucket, const std::string& name, int fd,
                              const struct stat& st, bool holding_lock,
                              const std::atomic<bool>* stop);
  void HashInBackground(const std::string& bucket, const std::string& name,
                        const std::atomic<bool>& stop);
  Status CheckPreconditions(const std::optional<ObjectInfo>& live, const Preconditions& pre,
                            const std::string& what) const;
  Status WriteMeta(const ObjectInfo& info, const std::string& path);
  Status SaveOwners() const;
  Status CheckClaimLocked(const std::string& project, const std::string& bucket) const;
  Status OwnAndMakeLocked(const std::string& project, const std::vector<std::string>& buckets);
  bool BucketExists(const std::string& bucket) const;  // REQUIRES: owners_mu_ held.
  int64_t NextGeneration(int64_t previous);
  // Gives `leaf` in `dir_fd` (never through a symlink) to the object owner, if any.
  void GiveToOwner(int dir_fd, const std::string& leaf) const;

  // Files up to this size are hashed on the reading thread (~10 ms); larger ones by
  // the hash queue, at most this many waiting.
  static constexpr uint64_t kInlineHashBytes = 16ull << 20;
  static constexpr size_t kMaxHashesPending = 1024;

  const std::string root_;
  const std::string state_;
  const Clock* clock_;
  uint32_t owner_ = 0;  // SetObjectOwner's uid; 0 = the daemon's own.
  std::mutex mu_;       // Serializes writers (commit, delete, patch) and generations.
  int64_t last_generation_ = 0;
  mutable std::mutex owners_mu_;
  std::map<std::string, std::string> owners_;  // bucket -> project; owners.json.
  std::vector<std::string> set_aside_;         // Written by Open only.
  std::unique_ptr<HashQueue> hashes_;          // Last: its worker calls into the members above.
};

}  // namespace ty::gcs
