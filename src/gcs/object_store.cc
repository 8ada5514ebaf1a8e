#include "gcs/object_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/files.h"
#include "common/text.h"
#include "gcs/hashes.h"

namespace ty::gcs {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxNameBytes = 1024;

std::string Errno() { return std::strerror(errno); }

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

// Moves the file `from` to `leaf` in the directory `dir_fd`. Across filesystems (a
// state directory and a bucket root on different mounts) the bytes are copied into
// a hidden file beside the target first, so the object still appears whole at once.
bool MoveInto(const std::string& from, int dir_fd, const std::string& leaf) {
  if (::renameat(AT_FDCWD, from.c_str(), dir_fd, leaf.c_str()) == 0) return true;
  if (errno != EXDEV) return false;
  const std::string temp = ".ty-" + leaf.substr(0, 200) + "." + std::to_string(::getpid());
  Fd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  Fd out(
      ::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644));
  struct stat st = {};
  if (in.fd < 0 || out.fd < 0 || ::fstat(in.fd, &st) != 0) return false;
  off_t at = 0;
  while (at < st.st_size) {
    ssize_t n = ::copy_file_range(in.fd, &at, out.fd, nullptr, st.st_size - at, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::unlinkat(dir_fd, temp.c_str(), 0);
      return false;
    }
  }
  timespec times[2] = {st.st_atim, st.st_mtim};  // The generation is the mtime.
  ::futimens(out.fd, times);
  if (::renameat(dir_fd, temp.c_str(), dir_fd, leaf.c_str()) != 0) {
    ::unlinkat(dir_fd, temp.c_str(), 0);
    return false;
  }
  ::unlink(from.c_str());
  return true;
}

std::vector<std::string> Segments(const std::string& name) {
  std::vector<std::string> out;
  size_t from = 0;
  for (;;) {
    size_t slash = name.find('/', from);
    out.push_back(name.substr(from, slash == std::string::npos ? std::string::npos : slash - from));
    if (slash == std::string::npos) return out;
    from = slash + 1;
  }
}

std::string Md5Hex(const std::string& text) {
  ObjectHasher h;
  h.Update(text.data(), text.size());
  std::string md5, crc;
  h.Finish(&md5, &crc);
  // Base64 has '/' and '+': make it a file name.
  for (char& c : md5) c = c == '/' ? '_' : c == '+' ? '-' : c == '=' ? 'x' : c;
  return md5;
}

Status NoSuchObject(const std::string& bucket, const std::string& name) {
  return NotFound("No such object: " + bucket + "/" + name);
}

Status NoSuchBucket(const std::string& bucket) {
  return NotFound("The specified bucket does not exist: " + bucket);
}

int64_t MtimeMicros(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000 + st.st_mtim.tv_nsec / 1000;
}

int64_t MtimeNanos(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

json MetaJson(const ObjectInfo& i, const struct stat& st) {
  return {{"name", i.name},
          {"metageneration", i.metageneration},
          {"size", i.size},
          {"mtime_ns", MtimeNanos(st)},
          {"ino", static_cast<uint64_t>(st.st_ino)},
          {"contentType", i.content_type},
          {"contentEncoding", i.content_encoding},
          {"cacheControl", i.cache_control},
          {"contentDisposition", i.content_disposition},
          {"metadata", i.metadata},
          {"md5Hash", i.md5_b64},
          {"crc32c", i.crc32c_b64},
          {"timeCreated", i.time_created},
          {"componentCount", i.component_count}};
}

// Fills `info` from a sidecar when it describes exactly this file.
bool FromMeta(const json& m, const struct stat& st, ObjectInfo* info) {
  if (!m.is_object()) return false;
  try {
    if (m.value("name", "") != info->name ||
        m.value("size", uint64_t{0}) != static_cast<uint64_t>(st.st_size) ||
        m.value("mtime_ns", int64_t{-1}) != MtimeNanos(st) ||
        m.value("ino", uint64_t{0}) != static_cast<uint64_t>(st.st_ino)) {
      return false;
    }
    info->metageneration = m.value("metageneration", int64_t{1});
    info->content_type = m.value("contentType", info->content_type);
    info->content_encoding = m.value("contentEncoding", "");
    info->cache_control = m.value("cacheControl", "");
    info->content_disposition = m.value("contentDisposition", "");
    info->metadata = m.value("metadata", std::map<std::string, std::string>());
    info->md5_b64 = m.value("md5Hash", "");
    info->crc32c_b64 = m.value("crc32c", "");
    info->time_created = m.value("timeCreated", info->time_created);
    info->component_count = m.value("componentCount", 0);
  } catch (const json::exception&) {
    return false;  // A damaged sidecar: recomputed.
  }
  // Composite objects have no MD5, as on Google (object_store.h).
  return (!info->md5_b64.empty() || info->component_count > 0) && !info->crc32c_b64.empty();
}

// The daemon's own JSON files (owners, sidecars), read back as untrusted: a regular
// file of a bounded size, else nothing (null).
json ReadJsonFile(const std::string& path) {
  constexpr size_t kMaxStateJson = 64 << 20;  // owners.json of a million buckets.
  Result<std::string> text = ReadStateFile(path, kMaxStateJson);
  return text.ok() ? json::parse(*text, nullptr, /*allow_exceptions=*/false) : json();
}

// Hashes the open file from its start; Cancelled when `stop` turns true.
Status HashFd(int fd, const std::string& what, std::string* md5, std::string* crc,
              const std::atomic<bool>* stop = nullptr) {
  ObjectHasher hasher;
  std::string buf(1 << 20, '\0');
  off_t at = 0;
  for (;;) {
    if (stop != nullptr && stop->load()) return Cancelled("hashing " + what + " stopped");
    ssize_t n = ::pread(fd, buf.data(), buf.size(), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Internal("cannot read " + what + ": " + Errno());
    if (n == 0) break;
    hasher.Update(buf.data(), static_cast<size_t>(n));
    at += n;
  }
  hasher.Finish(md5, crc);
  return Status::Ok();
}

// Every regular file under `dir` (not following symlinks), as names relative to
// the bucket, with `rel` the directory's own relative name ("" or "a/b/").
void Walk(const std::string& dir, const std::string& rel, std::vector<std::string>* out) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st = {};
    if (::fstatat(::dirfd(d), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      Walk(dir + "/" + n, rel + n + "/", out);
    } else if (S_ISREG(st.st_mode)) {
      out->push_back(rel + n);
    }
  }
  ::closedir(d);
}

}  // namespace

// ---- ObjectReader --------------------------------------------------------------

ObjectReader::~ObjectReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string> ObjectReader::Read(uint64_t offset, size_t n) const {
  std::string buf(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd_, buf.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Internal("cannot read " + info_.bucket + "/" + info_.name + ": " + Errno());
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  buf.resize(got);
  return buf;
}

Status ObjectReader::CopyTo(int out_fd, uint64_t* out_offset) const {
  off_t in = 0;
  off_t out = static_cast<off_t>(*out_offset);
  const off_t size = static_cast<off_t>(info_.size);
  while (in < size) {
    ssize_t n = ::copy_file_range(fd_, &in, out_fd, &out, static_cast<size_t>(size - in), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
      ASSIGN_OR_RETURN(std::string piece, Read(static_cast<uint64_t>(in), 1 << 20));
      if (piece.empty()) break;
      if (::pwrite(out_fd, piece.data(), piece.size(), out) != static_cast<ssize_t>(piece.size())) {
        return Internal("cannot copy " + info_.name + ": " + Errno());
      }
      in += static_cast<off_t>(piece.size());
      out += static_cast<off_t>(piece.size());
      continue;
    }
    if (n <= 0) {
      return Internal("cannot copy " + info_.bucket + "/" + info_.name + ": " +
                      (n == 0 ? std::string("it shrank") : Errno()));
    }
  }
  *out_offset = static_cast<uint64_t>(out);
  return Status::Ok();
}

// ---- Names ---------------------------------------------------------------------------

// Google's bucket naming rules (cloud.google.com/storage/docs/buckets#naming): 3-63
// characters of a-z, 0-9, '-', '_', '.' (up to 222 with dots, each dot-separated
// part 1-63), starting and ending with a letter or digit; not an IPv4 address; not
// starting with "goog" nor containing "google" or "g00gle".
Status ObjectStore::CheckBucketName(const std::string& b) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  auto bad = [&](const std::string& rule) {
    return InvalidArgument("Invalid bucket name: '" + ShownInMessage(b) + "': " + rule);
  };
  const bool dotted = b.find('.') != std::string::npos;
  bool ok =
      b.size() >= 3 && b.size() <= (dotted ? 222u : 63u) && alnum(b.front()) && alnum(b.back());
  for (char c : b) ok = ok && (alnum(c) || c == '-' || c == '_' || c == '.');
  if (!ok) {
    return bad(
        "3 to 63 characters (222 with dots) of a-z, 0-9, '-', '_' and '.', starting and "
        "ending with a letter or digit");
  }
  size_t parts = 0;
  bool all_digits = true;
  for (size_t from = 0; from <= b.size(); ++parts) {
    size_t dot = std::min(b.find('.', from), b.size());
    const std::string part = b.substr(from, dot - from);
    if (part.empty() || part.size() > 63)
      return bad("each dot-separated part is 1 to 63 characters");
    all_digits = all_digits && part.find_first_not_of("0123456789") == std::string::npos;
    from = dot + 1;
  }
  if (parts == 4 && all_digits) return bad("a bucket name cannot be an IP address");
  if (b.rfind("goog", 0) == 0 || b.find("google") != std::string::npos ||
      b.find("g00gle") != std::string::npos) {
    return bad("names starting with 'goog' or containing 'google' are reserved");
  }
  return Status::Ok();
}

Status ObjectStore::CheckObjectName(const std::string& name) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("Invalid object name '" + name + "': " + why);
  };
  if (name.empty()) return bad("it is empty");
  if (name.size() > kMaxNameBytes) return bad("longer than 1024 bytes");
  for (char c : name) {
    if (c == '\0' || c == '\r' || c == '\n') return bad("NUL, CR and LF are not allowed");
  }
  for (const std::string& seg : Segments(name)) {
    if (seg.empty()) {
      return bad(
          "a name here is a path in the bucket directory: no leading, trailing or "
          "double '/'");
    }
    if (seg == "." || seg == "..") return bad("'.' and '..' segments would leave the bucket");
  }
  return Status::Ok();
}

// ---- Creation, buckets ---------------------------------------------------------------

ObjectStore::ObjectStore(std::string root, std::string state_dir, const Clock* clock)
    : root_(std::move(root)),
      state_(std::move(state_dir)),
      clock_(clock),
      hashes_(std::make_unique<HashQueue>(
          [this](const std::string& bucket, const std::string& name,
                 const std::atomic<bool>& stop) { HashInBackground(bucket, name, stop); },
          kMaxHashesPending)) {}
ObjectStore::~ObjectStore() = default;

Result<std::unique_ptr<ObjectStore>> ObjectStore::Open(const std::string& root,
                                                       const std::string& state_dir,
                                                       const Clock* clock) {
  if (clock == nullptr) return InvalidArgument("ObjectStore needs a clock");
  std::error_code ec;
  const std::filesystem::path bucket_root = std::filesystem::weakly_canonical(root, ec);
  const std::filesystem::path state = std::filesystem::weakly_canonical(state_dir, ec);
  auto [mismatch, _] = std::mismatch(bucket_root.begin(), bucket_root.end(), state.begin());
  if (mismatch == bucket_root.end()) {
    return InvalidArgument("the storage state directory " + state.string() +
                           " is inside the bucket root " + bucket_root.string() +
                           ": replicas could rewrite the daemon's records");
  }
  for (const std::string& dir : {root, state_dir + "/staging", state_dir + "/meta"}) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Internal("cannot create " + dir + ": " + ec.message());
  }
  // Records an older daemon kept inside the bucket root (where replicas could write
  // them) are not read: the hash caches are rebuilt as objects are read.
  std::filesystem::remove_all(root + "/.trainyard", ec);
  // Bytes of requests cut off by the last daemon's end go; resumable sessions'
  // bytes stay for their clients (gcs/upload_sessions.h).
  for (const auto& leftover : std::filesystem::directory_iterator(state_dir + "/staging", ec)) {
    if (leftover.path().filename().string().rfind("session-", 0) != 0) {
      std::filesystem::remove(leftover.path(), ec);
    }
  }
  std::unique_ptr<ObjectStore> store(new ObjectStore(root, state_dir, clock));
  // Owners: a map of valid bucket names to project ids; anything else in the file is
  // dropped (it is the daemon's own file, but read back as untrusted all the same). A
  // file that is no such map is set aside with why, never overwritten: every bucket is
  // then no project's (admins only) until an admin assigns it, which fails closed.
  const std::string owners_path = state_dir + "/owners.json";
  Result<std::string> text = ReadStateFile(owners_path, 64 << 20);
  json owners = text.ok() ? json::parse(*text, nullptr, /*allow_exceptions=*/false) : json();
  if ((!text.ok() && text.status().code() != StatusCode::kNotFound) ||
      (text.ok() && !owners.is_object())) {
    const std::string why = text.ok() ? "not a JSON object" : text.status().message();
    const std::string aside = owners_path + ".set-aside";
    std::filesystem::rename(owners_path, aside, ec);
    store->set_aside_.push_back(owners_path + " set aside (" + why + ") as " + aside +
                                ": every bucket is no project's until an admin assigns it "
                                "(trainyard buckets assign BUCKET PROJECT)");
  }
  if (owners.is_object()) {
    for (const auto& [bucket, project] : owners.items()) {
      if (project.is_string() && CheckBucketName(bucket).ok()) {
        store->owners_[bucket] = project.get<std::string>();
      }
    }
  }
  return store;
}

// Why a project may not use `bucket`: another's, or no project's (an existing
// directory nobody was given, reachable by admins only). OK when it is `project`'s or
// does not exist yet. REQUIRES: owners_mu_ held.
Status ObjectStore::CheckClaimLocked(const std::string& project, const std::string& bucket) const {
  auto it = owners_.find(bucket);
  if (it != owners_.end()) {
    if (it->second == project) return Status::Ok();
    return PermissionDenied("The bucket " + bucket +
                            " belongs to another project; a job can only use buckets of "
                            "its own project");
  }
  if (BucketExists(bucket)) {
    return PermissionDenied("The bucket " + bucket +
                            " belongs to no project: only an admin may use it until one gives it "
                            "to a project (`trainyard buckets assign " +
                            bucket + " PROJECT`)");
  }
  return Status::Ok();
}

// Records `project` as the owner of `buckets` (all checked), then makes their
// directories: a bucket is owned before it exists, so no moment shows it unowned.
// REQUIRES: owners_mu_ held.
Status ObjectStore::OwnAndMakeLocked(const std::string& project,
                                     const std::vector<std::string>& buckets) {
  bool changed = false;
  std::map<std::string, std::string> before = owners_;
  for (const std::string& b : buckets) changed = owners_.emplace(b, project).second || changed;
  if (changed) {
    Status saved = SaveOwners();
    if (!saved.ok()) {
      owners_ = std::move(before);
      return saved;
    }
  }
  for (const std::string& b : buckets) {
    if (::mkdir(BucketDir(b).c_str(), 0755) == 0) {
      GiveToOwner(AT_FDCWD, BucketDir(b));
    } else if (errno != EEXIST) {
      return Internal("cannot create bucket " + b + ": " + Errno());
    }
  }
  return Status::Ok();
}

bool ObjectStore::BucketExists(const std::string& bucket) const {
  struct stat st = {};
  return ::lstat(BucketDir(bucket).c_str(), &st) == 0;  // Anything there takes the name.
}

Status ObjectStore::ClaimBuckets(const std::string& project,
                                 const std::vector<std::string>& buckets) {
  // A job's gs:// URIs pass a looser check at parse time; an owner must be a name the
  // owners file keeps (it drops invalid ones when read back).
  for (const std::string& b : buckets) RETURN_IF_ERROR(CheckBucketName(b));
  if (project.empty()) return InvalidArgument("a bucket's project must not be empty");
  std::lock_guard<std::mutex> lock(owners_mu_);
  for (const std::string& b : buckets) RETURN_IF_ERROR(CheckClaimLocked(project, b));
  return OwnAndMakeLocked(project, buckets);
}

Status ObjectStore::AssignBucket(const std::string& bucket, const std::string& project) {
  RETURN_IF_ERROR(GetBucket(bucket).status());
  if (project.empty()) return InvalidArgument("a bucket's project must not be empty");
  std::lock_guard<std::mutex> lock(owners_mu_);
  auto it = owners_.find(bucket);
  if (it != owners_.end() && it->second == project) return Status::Ok();
  std::map<std::string, std::string> before = owners_;
  owners_[bucket] = project;
  Status saved = SaveOwners();
  if (!saved.ok()) owners_ = std::move(before);
  return saved;
}

std::vector<std::string> ObjectStore::BucketsOwnedBy(const std::string& project) const {
  std::lock_guard<std::mutex> lock(owners_mu_);
  std::vector<std::string> out;
  for (const auto& [bucket, owner] : owners_) {
    if (owner == project) out.push_back(bucket);
  }
  return out;
}

std::string ObjectStore::BucketOwner(const std::string& bucket) const {
  std::lock_guard<std::mutex> lock(owners_mu_);
  auto it = owners_.find(bucket);
  return it == owners_.end() ? "" : it->second;
}

Status ObjectStore::SaveOwners() const {
  return WritePrivateFile(state_ + "/owners.json", json(owners_).dump());
}

std::string ObjectStore::MetaPath(const std::string& bucket, const std::string& name) const {
  return state_ + "/meta/" + bucket + "/" + Md5Hex(name) + ".json";
}

Result<std::vector<BucketInfo>> ObjectStore::ListBuckets() const {
  std::vector<BucketInfo> out;
  DIR* d = ::opendir(root_.c_str());
  if (d == nullptr) return Internal("cannot list " + root_ + ": " + Errno());
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    struct stat st = {};
    if (!CheckBucketName(n).ok()) continue;
    if (::fstatat(::dirfd(d), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
      continue;
    }
    out.push_back({n, MtimeMicros(st)});
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(),
            [](const BucketInfo& a, const BucketInfo& b) { return a.name < b.name; });
  return out;
}

Result<BucketInfo> ObjectStore::GetBucket(const std::string& bucket) const {
  RETURN_IF_ERROR(CheckBucketName(bucket));
  struct stat st = {};
  if (::lstat(BucketDir(bucket).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return NoSuchBucket(bucket);
  }
  return BucketInfo{bucket, MtimeMicros(st)};
}

Result<BucketInfo> ObjectStore::CreateBucket(const std::string& bucket,
                                             const std::string& project) {
  RETURN_IF_ERROR(CheckBucketName(bucket));
  {
    std::lock_guard<std::mutex> lock(owners_mu_);
    auto it = owners_.find(bucket);
    const bool mine = it != owners_.end() && !project.empty() && it->second == project;
    if (BucketExists(bucket)) {
      if (mine) {
        return AlreadyExists(
            "Your previous request to create the named bucket succeeded and you "
            "already own it: " +
            bucket);
      }
      // Cloud Storage's answer for a name someone else holds: names are one namespace.
      return AlreadyExists("Sorry, that name is not available. Please try a different one.");
    }
    if (it != owners_.end() && !mine) {
      return AlreadyExists("Sorry, that name is not available. Please try a different one.");
    }
    if (project.empty()) {
      // An admin's bucket of no project: reachable by admins until assigned.
      if (::mkdir(BucketDir(bucket).c_str(), 0755) != 0) {
        return Internal("cannot create bucket " + bucket + ": " + Errno());
      }
      GiveToOwner(AT_FDCWD, BucketDir(bucket));
    } else {
      RETURN_IF_ERROR(OwnAndMakeLocked(project, {bucket}));
    }
  }
  return GetBucket(bucket);
}

Status ObjectStore::DeleteBucket(const std::string& bucket) {
  RETURN_IF_ERROR(GetBucket(bucket).status());
  std::vector<std::string> names;
  Walk(BucketDir(bucket), "", &names);
  if (!names.empty()) {
    return FailedPrecondition("The bucket you tried to delete is not empty: " + bucket);
  }
  std::error_code ec;
  std::filesystem::remove_all(BucketDir(bucket), ec);  // Only empty directories are left.
  std::filesystem::remove_all(state_ + "/meta/" + bucket, ec);
  std::lock_guard<std::mutex> lock(owners_mu_);
  if (owners_.erase(bucket) > 0) (void)SaveOwners();  // The name is free again.
  return Status::Ok();
}

// ---- Reading ----------------------------------------------------------------------

Result<int> ObjectStore::OpenParent(const std::string& bucket, const std::string& name, bool create,
                                    std::string* leaf) const {
  // A name no write could have made is simply not there for readers (gcloud probes
  // "dir/" when listing a prefix).
  if (Status s = CheckObjectName(name); !s.ok()) return create ? s : NoSuchObject(bucket, name);
  Fd dir(::open(BucketDir(bucket).c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (dir.fd < 0) return NoSuchBucket(bucket);
  std::vector<std::string> segs = Segments(name);
  *leaf = segs.back();
  segs.pop_back();
  std::string walked;
  for (const std::string& seg : segs) {
    walked += seg + "/";
    int next = ::openat(dir.fd, seg.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (next < 0 && errno == ENOENT && create) {
      if (::mkdirat(dir.fd, seg.c_str(), 0755) == 0) {
        GiveToOwner(dir.fd, seg);
      } else if (errno != EEXIST) {
        return Internal("cannot create " + bucket + "/" + walked + ": " + Errno());
      }
      next = ::openat(dir.fd, seg.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    }
    if (next < 0) {
      struct stat st = {};
      bool is_file =
          ::fstatat(dir.fd, seg.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
      if (is_file && create) {
        return AlreadyExists("'" + walked.substr(0, walked.size() - 1) +
                             "' is an object, so no object can be named '" + name +
                             "' here (names are paths in the bucket directory)");
      }
      return NoSuchObject(bucket, name);  // Missing, a file, or a symlink: not an object.
    }
    ::close(dir.release());
    dir.fd = next;
  }
  return dir.release();
}

Result<int> ObjectStore::OpenRegular(const std::string& bucket, const std::string& name,
                                     struct stat* st) const {
  std::string leaf;
  ASSIGN_OR_RETURN(int parent_fd, OpenParent(bucket, name, false, &leaf));
  Fd parent(parent_fd);
  // Non-blocking: opening a FIFO a replica made would otherwise wait for a writer
  // (two such GETs once held both I/O threads). Only a regular file is an object.
  Fd file(::openat(parent.fd, leaf.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (file.fd < 0 || ::fstat(file.fd, st) != 0 || !S_ISREG(st->st_mode)) {
    return NoSuchObject(bucket, name);
  }
  return file.release();
}

Result<ObjectInfo> ObjectStore::Load(const std::string& bucket, const std::string& name,
                                     bool holding_lock) {
  struct stat st = {};
  ASSIGN_OR_RETURN(int fd, OpenRegular(bucket, name, &st));
  Fd file(fd);
  return LoadOpen(bucket, name, file.fd, st, holding_lock, nullptr);
}

Result<ObjectInfo> ObjectStore::LoadOpen(const std::string& bucket, const std::string& name, int fd,
                                         const struct stat& st, bool holding_lock,
                                         const std::atomic<bool>* stop) {
  ObjectInfo info;
  info.bucket = bucket;
  info.name = name;
  info.generation = MtimeMicros(st);
  info.size = static_cast<uint64_t>(st.st_size);
  info.time_created = info.updated = info.generation;
  const std::string meta_path = MetaPath(bucket, name);
  json meta = ReadJsonFile(meta_path);
  if (FromMeta(meta, st, &info)) {
    if (meta.contains("updated") && meta["updated"].is_number_integer()) {
      info.updated = std::max(info.generation, meta["updated"].get<int64_t>());
    }
    return info;
  }
  // Written through /gcs (or the sidecar is stale). A large file is hashed by the
  // queue, off this (maybe I/O) thread; meanwhile its metadata has no hashes, which
  // clients take as "nothing to validate" (gcloud warns and goes on).
  if (stop == nullptr && info.size > kInlineHashBytes) {
    hashes_->Enqueue(bucket, name);
    info.md5_b64.clear();
    info.crc32c_b64.clear();
    return info;
  }
  RETURN_IF_ERROR(HashFd(fd, bucket + "/" + name, &info.md5_b64, &info.crc32c_b64, stop));
  struct stat after {};
  if (::fstat(fd, &after) == 0 && MtimeNanos(after) == MtimeNanos(st) &&
      after.st_size == st.st_size) {
    std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
    if (!holding_lock) lock.lock();
    if (!FromMeta(ReadJsonFile(meta_path), st, &info)) (void)WriteMeta(info, meta_path);
  }
  return info;
}

void ObjectStore::HashInBackground(const std::string& bucket, const std::string& name,
                                   const std::atomic<bool>& stop) {
  struct stat st = {};
  Result<int> fd = OpenRegular(bucket, name, &st);
  if (!fd.ok()) return;
  Fd file(*fd);
  (void)LoadOpen(bucket, name, file.fd, st, /*holding_lock=*/false, &stop);
}

Status ObjectStore::WriteMeta(const ObjectInfo& info, const std::string& path) {
  struct stat st = {};
  std::string leaf;
  Result<int> parent_fd = OpenParent(info.bucket, info.name, false, &leaf);
  if (!parent_fd.ok()) return parent_fd.status();
  Fd parent(*parent_fd);
  if (::fstatat(parent.fd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return NoSuchObject(info.bucket, info.name);
  }
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  json m = MetaJson(info, st);
  m["updated"] = info.updated;
  return WriteFileAtomically(path, m.dump());
}

Result<ObjectInfo> ObjectStore::Stat(const std::string& bucket, const std::string& name,
                                     std::optional<int64_t> generation) {
  RETURN_IF_ERROR(GetBucket(bucket).status());
  ASSIGN_OR_RETURN(ObjectInfo info, Load(bucket, name));
  if (generation && *generation != info.generation) return NoSuchObject(bucket, name);
  return info;
}

Result<ObjectReader> ObjectStore::OpenForRead(const std::string& bucket, const std::string& name,
                                              std::optional<int64_t> generation) {
  RETURN_IF_ERROR(GetBucket(bucket).status());
  // One descriptor for the metadata and the bytes: a replica that swaps the file
  // (for a FIFO, say) between the two gets neither.
  struct stat st = {};
  ASSIGN_OR_RETURN(int fd, OpenRegular(bucket, name, &st));
  Fd file(fd);
  ASSIGN_OR_RETURN(ObjectInfo info, LoadOpen(bucket, name, file.fd, st, false, nullptr));
  if (generation && *generation != info.generation) return NoSuchObject(bucket, name);
  return ObjectReader(std::move(info), file.release());
}

Result<ListResult> ObjectStore::List(const std::string& bucket, const ListQuery& q) {
  RETURN_IF_ERROR(GetBucket(bucket).status());
  // Only the directory the prefix names can hold matches.
  std::string dir_part =
      q.prefix.substr(0, q.prefix.rfind('/') == std::string::npos ? 0 : q.prefix.rfind('/') + 1);
  std::vector<std::string> names;
  if (dir_part.empty() || CheckObjectName(dir_part.substr(0, dir_part.size() - 1)).ok()) {
    Walk(BucketDir(bucket) + (dir_part.empty() ? "" : "/" + dir_part), dir_part, &names);
  }
  std::sort(names.begin(), names.end());
  ListResult out;
  std::string last_prefix;
  size_t emitted = 0;
  for (const std::string& n : names) {
    if (n.compare(0, q.prefix.size(), q.prefix) != 0) continue;
    if (!q.start_offset.empty() && n < q.start_offset) continue;
    if (!q.end_offset.empty() && n >= q.end_offset) continue;
    if (!q.page_token.empty() && n <= q.page_token) continue;
    std::string entry = n;
    bool is_prefix = false;
    if (!q.delimiter.empty()) {
      size_t d = n.find(q.delimiter, q.prefix.size());
      if (d != std::string::npos) {
        entry = n.substr(0, d + q.delimiter.size());
        is_prefix = true;
        if (entry == last_prefix) continue;
        // A prefix already returned on an earlier page (the token is inside it).
        if (!q.page_token.empty() && q.page_token.compare(0, entry.size(), entry) == 0) continue;
      }
    }
    if (emitted == q.max_results) {
      out.next_page_token = out.items.empty() && out.prefixes.empty() ? "" : last_prefix;
      break;
    }
    if (is_prefix) {
      out.prefixes.push_back(entry);
      last_prefix = entry;
    } else {
      Result<ObjectInfo> info = Load(bucket, n);
      if (!info.ok()) continue;  // Removed meanwhile.
      out.items.push_back(std::move(*info));
      last_prefix = n;
    }
    ++emitted;
  }
  return out;
}

// ---- Writing ---------------------------------------------------------------------------

Result<std::string> ObjectStore::NewStagingFile(const std::string& name) {
  static std::atomic<uint64_t> counter{0};
  std::string path =
      state_ + "/staging/" +
      (!name.empty() ? name
                     : std::to_string(::getpid()) + "-" + std::to_string(clock_->Now()) + "-" +
                           std::to_string(counter++));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Internal("cannot create a staging file: " + Errno());
  ::close(fd);
  return path;
}

void ObjectStore::GiveToOwner(int dir_fd, const std::string& leaf) const {
  if (owner_ == 0) return;
  // The daemon runs as root, whose chown fails only when the entry is already gone (a
  // replica removed it meanwhile): nothing left to give.
  (void)::fchownat(dir_fd, leaf.c_str(), owner_, owner_, AT_SYMLINK_NOFOLLOW);
}

Status ObjectStore::SetObjectOwner(uint32_t uid) {
  owner_ = uid;
  if (uid == 0) return Status::Ok();
  const std::string marker = state_ + "/owner";
  const std::string want = std::to_string(uid);
  std::ifstream in(marker);
  std::string had;
  if (in && std::getline(in, had) && had == want) return Status::Ok();
  // lchown: a symlink a replica planted is given itself, never what it points to.
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root_, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (::lchown(it->path().c_str(), uid, uid) != 0 && errno != ENOENT) {
      return Internal("cannot give " + it->path().string() + " to uid " + want + ": " + Errno());
    }
  }
  if (ec) return Internal("cannot walk " + root_ + ": " + ec.message());
  return WriteFileAtomically(marker, want + "\n");
}

int64_t ObjectStore::NextGeneration(int64_t previous) {
  int64_t g = std::max({clock_->Now(), previous + 1, last_generation_ + 1});
  last_generation_ = g;
  return g;
}

Status ObjectStore::CheckPreconditions(const std::optional<ObjectInfo>& live,
                                       const Preconditions& pre, const std::string& what) const {
  auto failed = [&](const std::string& which) {
    return FailedPrecondition("At least one of the pre-conditions you specified did not hold (" +
                              which + ") for " + what);
  };
  int64_t gen = live ? live->generation : 0;
  if (pre.if_generation_match && *pre.if_generation_match != gen)
    return failed("ifGenerationMatch");
  if (pre.if_generation_not_match && *pre.if_generation_not_match == gen) {
    return failed("ifGenerationNotMatch");
  }
  if (pre.if_metageneration_match &&
      (!live || *pre.if_metageneration_match != live->metageneration)) {
    return failed("ifMetagenerationMatch");
  }
  if (pre.if_metageneration_not_match && live &&
      *pre.if_metageneration_not_match == live->metageneration) {
    return failed("ifMetagenerationNotMatch");
  }
  return Status::Ok();
}

namespace {

ObjectInfo NewObjectInfo(const std::string& bucket, const std::string& name,
                         const ObjectAttributes& attributes, int component_count) {
  ObjectInfo info;
  info.bucket = bucket;
  info.name = name;
  if (!attributes.content_type.empty()) info.content_type = attributes.content_type;
  info.content_encoding = attributes.content_encoding;
  info.cache_control = attributes.cache_control;
  info.content_disposition = attributes.content_disposition;
  info.metadata = attributes.metadata;
  info.component_count = component_count;
  return info;
}

// The staged upload's size, and its hashes unless the caller knows them already.
Status MeasureStaged(const std::string& staged,
                     const std::pair<std::string, std::string>* known_hashes, ObjectInfo* info) {
  Fd staged_fd(::open(staged.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st = {};
  if (staged_fd.fd < 0 || ::fstat(staged_fd.fd, &st) != 0) {
    return Internal("staged upload vanished: " + Errno());
  }
  info->size = static_cast<uint64_t>(st.st_size);
  if (known_hashes != nullptr) {
    info->md5_b64 = known_hashes->first;
    info->crc32c_b64 = known_hashes->second;
    return Status::Ok();
  }
  return HashFd(staged_fd.fd, "upload", &info->md5_b64, &info->crc32c_b64);
}

}  // namespace

Result<ObjectInfo> ObjectStore::Commit(const std::string& bucket, const std::string& name,
                                       const ObjectAttributes& attributes, const Preconditions& pre,
                                       const std::string& staged, int component_count,
                                       const std::pair<std::string, std::string>* known_hashes) {
  auto discard = [&](Status s) {
    ::unlink(staged.c_str());
    return s;
  };
  if (Status s = CheckObjectName(name); !s.ok()) return discard(s);
  if (Status s = GetBucket(bucket).status(); !s.ok()) return discard(s);
  ObjectInfo info = NewObjectInfo(bucket, name, attributes, component_count);
  if (Status s = MeasureStaged(staged, known_hashes, &info); !s.ok()) return discard(s);

  std::lock_guard<std::mutex> lock(mu_);
  std::optional<ObjectInfo> live;
  if (Result<ObjectInfo> l = Load(bucket, name, /*holding_lock=*/true); l.ok()) live = *l;
  if (Status s = CheckPreconditions(live, pre, bucket + "/" + name); !s.ok()) return discard(s);
  std::string leaf;
  Result<int> parent_fd = OpenParent(bucket, name, /*create=*/true, &leaf);
  if (!parent_fd.ok()) return discard(parent_fd.status());
  Fd parent(*parent_fd);
  struct stat existing {};
  if (::fstatat(parent.fd, leaf.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISDIR(existing.st_mode)) {
    return discard(AlreadyExists("'" + name +
                                 "' is a prefix of other objects, so it cannot be an object "
                                 "too (names are paths in the bucket directory)"));
  }
  info.generation = NextGeneration(live ? live->generation : 0);
  info.time_created = info.updated = info.generation;
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = info.generation / 1000000;
  times[0].tv_nsec = times[1].tv_nsec = (info.generation % 1000000) * 1000;
  if (::utimensat(AT_FDCWD, staged.c_str(), times, 0) != 0 || !MoveInto(staged, parent.fd, leaf)) {
    return discard(Internal("cannot store " + bucket + "/" + name + ": " + Errno()));
  }
  GiveToOwner(parent.fd, leaf);
  RETURN_IF_ERROR(WriteMeta(info, MetaPath(bucket, name)));
  return info;
}

Status ObjectStore::Delete(const std::string& bucket, const std::string& name,
                           std::optional<int64_t> generation, const Preconditions& pre) {
  RETURN_IF_ERROR(GetBucket(bucket).status());
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(ObjectInfo live, Load(bucket, name, /*holding_lock=*/true));
  if (generation && *generation != live.generation) return NoSuchObject(bucket, name);
  RETURN_IF_ERROR(CheckPreconditions(live, pre, bucket + "/" + name));
  std::string leaf;
  ASSIGN_OR_RETURN(int parent_fd, OpenParent(bucket, name, false, &leaf));
  Fd parent(parent_fd);
  if (::unlinkat(parent.fd, leaf.c_str(), 0) != 0) {
    return Internal("cannot delete " + bucket + "/" + name + ": " + Errno());
  }
  ::unlink(MetaPath(bucket, name).c_str());
  // Directories exist only for the names under them: remove the emptied ones.
  std::string rest = name;
  while (rest.rfind('/') != std::string::npos) {
    rest.erase(rest.rfind('/'));
    if (::rmdir(ObjectPath(bucket, rest).c_str()) != 0) break;
  }
  return Status::Ok();
}

Result<ObjectInfo> ObjectStore::Patch(const std::string& bucket, const std::string& name,
                                      const ObjectPatch& patch, const Preconditions& pre) {
  RETURN_IF_ERROR(GetBucket(bucket).status());
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(ObjectInfo info, Load(bucket, name, /*holding_lock=*/true));
  RETURN_IF_ERROR(CheckPreconditions(info, pre, bucket + "/" + name));
  if (patch.content_type) info.content_type = *patch.content_type;
  if (patch.content_encoding) info.content_encoding = *patch.content_encoding;
  if (patch.cache_control) info.cache_control = *patch.cache_control;
  if (patch.content_disposition) info.content_disposition = *patch.content_disposition;
  if (patch.clear_metadata) info.metadata.clear();
  for (const auto& [k, v] : patch.metadata) {
    if (v) {
      info.metadata[k] = *v;
    } else {
      info.metadata.erase(k);
    }
  }
  info.metageneration += 1;
  info.updated = std::max(clock_->Now(), info.updated + 1);
  RETURN_IF_ERROR(WriteMeta(info, MetaPath(bucket, name)));
  return info;
}

}  // namespace ty::gcs
