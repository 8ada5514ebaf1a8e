// Cloud Storage uploads (docs/contracts/cloud-storage-v1.md §2): multipart and media
// uploads in one request, resumable sessions with the 308 protocol. Request
// bodies arrive spooled to a staging file (HttpRequest::body_file), so a large
// upload never sits in memory; the media bytes are moved or copied from there
// into the object's staging file and committed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/endpoints.h"  // Param
#include "api/http_status.h"
#include "api/storage_api.h"
#include "gcs/hashes.h"

namespace ty::api::internal {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxMetadataPart = 1 << 20;  // The JSON part of a multipart body.

uint64_t SizeOf(const std::string& path) {
  struct stat st = {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

Result<std::string> ReadPrefix(const std::string& path, size_t max) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Internal("cannot read the upload");
  std::string buf(max, '\0');
  ssize_t n = ::pread(fd, buf.data(), max, 0);
  ::close(fd);
  if (n < 0) return Internal("cannot read the upload");
  buf.resize(static_cast<size_t>(n));
  return buf;
}

std::string BodyText(const HttpRequest& r) {
  if (r.body_file.empty()) return r.body;
  Result<std::string> text = ReadPrefix(r.body_file, kMaxMetadataPart);
  return text.ok() ? *text : std::string();
}

// Object attributes and name from the metadata JSON of an upload (multipart first
// part, resumable initiation body), the query's `name` as fallback.
struct UploadTarget {
  std::string name;
  gcs::ObjectAttributes attributes;
  std::string md5_b64;  // What the client says the bytes hash to ("" = nothing).
  std::string crc32c_b64;
};

Result<UploadTarget> TargetOf(const HttpRequest& r, const std::string& metadata_text,
                              const std::string& media_type) {
  json m = json::parse(metadata_text.empty() ? "{}" : metadata_text, nullptr, false);
  if (!m.is_object()) return InvalidArgument("The upload's metadata is not a JSON object");
  UploadTarget t;
  t.name =
      m.contains("name") && m["name"].is_string() ? m["name"].get<std::string>() : Param(r, "name");
  if (t.name.empty()) return InvalidArgument("Required: the object name (metadata or ?name=)");
  auto text = [&](const char* key) {
    return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : std::string();
  };
  t.attributes.content_type = text("contentType");
  if (t.attributes.content_type.empty()) t.attributes.content_type = media_type;
  t.attributes.content_encoding = text("contentEncoding");
  t.attributes.cache_control = text("cacheControl");
  t.attributes.content_disposition = text("contentDisposition");
  t.md5_b64 = text("md5Hash");
  t.crc32c_b64 = text("crc32c");
  if (m.contains("metadata") && m["metadata"].is_object()) {
    for (const auto& [k, v] : m["metadata"].items()) {
      if (v.is_string()) t.attributes.metadata[k] = v.get<std::string>();
    }
  }
  return t;
}

// The boundary of "multipart/related; boundary='===x=='" (quotes of either kind).
std::string BoundaryOf(const std::string& content_type) {
  size_t at = content_type.find("boundary=");
  if (at == std::string::npos) return "";
  std::string b = content_type.substr(at + 9);
  size_t end = b.find(';');
  if (end != std::string::npos) b = b.substr(0, end);
  while (!b.empty() && (b.back() == ' ' || b.back() == '\'' || b.back() == '"')) b.pop_back();
  while (!b.empty() && (b.front() == '\'' || b.front() == '"')) b.erase(0, 1);
  return b;
}

// Where a part's headers end: the offset after the blank line (CRLF or LF).
size_t HeadersEnd(const std::string& text, size_t from) {
  size_t lf = text.find("\n\n", from);
  size_t crlf = text.find("\r\n\r\n", from);
  if (crlf != std::string::npos && (lf == std::string::npos || crlf < lf)) return crlf + 4;
  return lf == std::string::npos ? std::string::npos : lf + 2;
}

std::string PartContentType(const std::string& headers) {
  std::string lower = headers;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t at = lower.find("content-type:");
  if (at == std::string::npos) return "";
  size_t end = headers.find_first_of("\r\n", at);
  std::string v =
      headers.substr(at + 13, end == std::string::npos ? std::string::npos : end - at - 13);
  while (!v.empty() && v.front() == ' ') v.erase(0, 1);
  return v;
}

// A multipart/related body in `file`: the metadata JSON, the media's content type
// and byte range [*media_begin, *media_end).
Status ParseMultipart(const std::string& file, const std::string& boundary, std::string* metadata,
                      std::string* media_type, uint64_t* media_begin, uint64_t* media_end) {
  auto bad = [](const std::string& why) {
    return InvalidArgument("Malformed multipart body: " + why);
  };
  if (boundary.empty()) return bad("no boundary in Content-Type");
  const std::string delim = "--" + boundary;
  ASSIGN_OR_RETURN(std::string head, ReadPrefix(file, kMaxMetadataPart + 4096));
  size_t first = head.find(delim);
  if (first == std::string::npos) return bad("no opening boundary");
  size_t meta_start = HeadersEnd(head, first + delim.size());
  if (meta_start == std::string::npos) return bad("metadata part without headers");
  size_t second = head.find(delim, meta_start);
  if (second == std::string::npos) return bad("no media part");
  size_t meta_end = second;
  if (meta_end > meta_start && head[meta_end - 1] == '\n') --meta_end;
  if (meta_end > meta_start && head[meta_end - 1] == '\r') --meta_end;
  *metadata = head.substr(meta_start, meta_end - meta_start);
  size_t media_start = HeadersEnd(head, second + delim.size());
  if (media_start == std::string::npos) return bad("media part without headers");
  *media_type = PartContentType(head.substr(second, media_start - second));
  // The closing delimiter is at the very end (a trailing newline at most).
  const uint64_t size = SizeOf(file);
  const std::string closing = delim + "--";
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Internal("cannot read the upload");
  size_t tail_len = static_cast<size_t>(std::min<uint64_t>(size, closing.size() + 16));
  std::string tail(tail_len, '\0');
  ssize_t n = ::pread(fd, tail.data(), tail_len, static_cast<off_t>(size - tail_len));
  ::close(fd);
  if (n != static_cast<ssize_t>(tail_len)) return Internal("cannot read the upload");
  size_t close_at = tail.rfind(closing);
  if (close_at == std::string::npos) return bad("no closing boundary");
  uint64_t end = size - tail_len + close_at;
  // The line break before a delimiter belongs to the delimiter.
  if (end > media_start && close_at >= 1 && tail[close_at - 1] == '\n') {
    --end;
    if (end > media_start && close_at >= 2 && tail[close_at - 2] == '\r') --end;
  }
  if (end < media_start) return bad("media part overlaps the closing boundary");
  *media_begin = media_start;
  *media_end = end;
  return Status::Ok();
}

// Copies bytes [begin, end) of `from` into a new staging file.
Result<std::string> StageRange(gcs::ObjectStore* store, const std::string& from, uint64_t begin,
                               uint64_t end) {
  ASSIGN_OR_RETURN(std::string staged, store->NewStagingFile());
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  int out = ::open(staged.c_str(), O_WRONLY | O_CLOEXEC);
  Status result = (in < 0 || out < 0) ? Internal("cannot stage the upload") : Status::Ok();
  off_t at = static_cast<off_t>(begin);
  while (result.ok() && static_cast<uint64_t>(at) < end) {
    ssize_t n = ::copy_file_range(in, &at, out, nullptr, static_cast<size_t>(end - at), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) result = Internal("cannot stage the upload: " + std::string(std::strerror(errno)));
  }
  if (in >= 0) ::close(in);
  if (out >= 0) ::close(out);
  if (!result.ok()) {
    ::unlink(staged.c_str());
    return result;
  }
  return staged;
}

HttpResponse Multipart(const StorageContext& ctx, const HttpRequest& r, const std::string& bucket,
                       const gcs::Preconditions& pre) {
  std::string metadata, media_type;
  uint64_t begin = 0, end = 0;
  Status parsed = ParseMultipart(r.body_file, BoundaryOf(r.Header("content-type")), &metadata,
                                 &media_type, &begin, &end);
  if (!parsed.ok()) return StorageError(parsed);
  Result<UploadTarget> target = TargetOf(r, metadata, media_type);
  if (!target.ok()) return StorageError(target.status());
  if (Status s = gcs::ObjectStore::CheckObjectName(target->name); !s.ok()) {
    return StorageError(s);
  }
  Result<std::string> staged = StageRange(ctx.store, r.body_file, begin, end);
  if (!staged.ok()) return StorageError(staged.status());
  // Python sends its checksum in the metadata; Google refuses bytes that differ.
  std::pair<std::string, std::string> hashes;
  Status hashed = gcs::HashFile(*staged, &hashes.first, &hashes.second);
  Status mismatch = hashed;
  if (hashed.ok() && !target->md5_b64.empty() && target->md5_b64 != hashes.first) {
    mismatch = InvalidArgument("Provided MD5 hash \"" + target->md5_b64 +
                               "\" doesn't match calculated MD5 hash \"" + hashes.first + "\".");
  } else if (hashed.ok() && !target->crc32c_b64.empty() && target->crc32c_b64 != hashes.second) {
    mismatch = InvalidArgument("Provided CRC32C \"" + target->crc32c_b64 +
                               "\" doesn't match calculated CRC32C \"" + hashes.second + "\".");
  }
  if (!mismatch.ok()) {
    ::unlink(staged->c_str());
    return StorageError(mismatch);
  }
  Result<gcs::ObjectInfo> made =
      ctx.store->Commit(bucket, target->name, target->attributes, pre, *staged, 0, &hashes);
  if (!made.ok()) return StorageError(made.status());
  return ObjectResponse(r, *made);
}

HttpResponse Media(const StorageContext& ctx, const HttpRequest& r, const std::string& bucket,
                   const gcs::Preconditions& pre) {
  Result<UploadTarget> target = TargetOf(r, "", r.Header("content-type"));
  if (!target.ok()) return StorageError(target.status());
  Result<std::string> staged = ctx.store->NewStagingFile();
  if (!staged.ok()) return StorageError(staged.status());
  auto hashes =
      ctx.spooled_hashes ? ctx.spooled_hashes(r.body_file, SizeOf(r.body_file)) : std::nullopt;
  // The spooled body is the object: move it.
  if (::rename(r.body_file.c_str(), staged->c_str()) != 0) {
    return StorageError(Internal("cannot keep the upload: " + std::string(std::strerror(errno))));
  }
  Result<gcs::ObjectInfo> made = ctx.store->Commit(bucket, target->name, target->attributes, pre,
                                                   *staged, 0, hashes ? &*hashes : nullptr);
  if (!made.ok()) return StorageError(made.status());
  return ObjectResponse(r, *made);
}

HttpResponse StartSession(const StorageContext& ctx, const HttpRequest& r,
                          const std::string& bucket, const gcs::Preconditions& pre) {
  Result<UploadTarget> target = TargetOf(r, BodyText(r), r.Header("x-upload-content-type"));
  if (!target.ok()) return StorageError(target.status());
  gcs::UploadSession s;
  s.bucket = bucket;
  s.name = target->name;
  s.attributes = target->attributes;
  s.preconditions = pre;
  std::string length = r.Header("x-upload-content-length");
  if (!length.empty()) s.total = std::strtoull(length.c_str(), nullptr, 10);
  Result<std::string> id = ctx.sessions->Start(std::move(s));
  if (!id.ok()) return StorageError(id.status());
  HttpResponse out;
  out.content_type = "text/plain; charset=utf-8";
  out.headers = {{"Location", BaseUrl(r) + "/upload/storage/v1/b/" + bucket +
                                  "/o?uploadType=resumable&upload_id=" + *id}};
  return out;
}

// "bytes a-b/T", "bytes a-b/*", "bytes a-*/T", "bytes */T", "bytes */*".
struct ContentRange {
  std::optional<uint64_t> first;  // nullopt: no bytes in this request ("*").
  std::optional<uint64_t> total;  // nullopt: unknown ("*").
  bool open_end = false;          // "a-*": the rest comes in this request.
};

Result<ContentRange> ParseContentRange(const std::string& header) {
  ContentRange cr;
  auto bad = [&] { return InvalidArgument("Invalid Content-Range: '" + header + "'"); };
  if (header.rfind("bytes ", 0) != 0) return bad();
  std::string spec = header.substr(6);
  size_t slash = spec.find('/');
  if (slash == std::string::npos) return bad();
  std::string range = spec.substr(0, slash), total = spec.substr(slash + 1);
  if (total != "*") cr.total = std::strtoull(total.c_str(), nullptr, 10);
  if (range == "*") return cr;
  size_t dash = range.find('-');
  if (dash == std::string::npos || dash == 0) return bad();
  cr.first = std::strtoull(range.substr(0, dash).c_str(), nullptr, 10);
  cr.open_end = range.substr(dash + 1) == "*";
  return cr;
}

}  // namespace

HttpResponse UploadObject(const StorageContext& ctx, const HttpRequest& r,
                          const std::string& bucket) {
  Result<gcs::Preconditions> pre = PreconditionsOf(r);
  if (!pre.ok()) return StorageError(pre.status());
  const std::string type = Param(r, "uploadType");
  if (type == "resumable") return StartSession(ctx, r, bucket, *pre);
  if (r.body_file.empty()) return StorageError(InvalidArgument("The upload has no body"));
  if (type == "multipart") return Multipart(ctx, r, bucket, *pre);
  if (type == "media" || type.empty()) return Media(ctx, r, bucket, *pre);
  return StorageError(
      InvalidArgument("Unknown uploadType '" + type + "': multipart, media or resumable"));
}

HttpResponse PutToSession(const StorageContext& ctx, const HttpRequest& r,
                          const std::string& bucket) {
  const std::string id = Param(r, "upload_id");
  if (id.empty()) return StorageError(InvalidArgument("upload_id is required"));
  // The access gate checked the caller's role on the bucket the URL names; a session
  // of any other bucket is not there for this URL (whoever knows its id).
  if (std::optional<std::string> of = ctx.sessions->BucketOf(id); of && *of != bucket) {
    return StorageError(NotFound("No such upload session: " + id));
  }
  if (r.method == "DELETE") {
    ctx.sessions->Cancel(id);
    HttpResponse gone;
    gone.status = 499;  // What Cloud Storage answers for a cancelled session.
    return gone;
  }
  const uint64_t size = r.body_file.empty() ? 0 : SizeOf(r.body_file);
  ContentRange cr;
  std::string header = r.Header("content-range");
  if (header.empty()) {
    cr.first = 0;  // The whole object in one request.
    cr.total = size;
  } else {
    Result<ContentRange> parsed = ParseContentRange(header);
    if (!parsed.ok()) return StorageError(parsed.status());
    cr = *parsed;
  }
  std::optional<std::pair<std::string, std::string>> hashes;
  if (cr.first && *cr.first == 0 && cr.total && *cr.total == size && ctx.spooled_hashes) {
    hashes = ctx.spooled_hashes(r.body_file, size);  // This PUT carries the whole object.
  }
  Result<gcs::UploadProgress> progress =
      cr.first && size > 0 ? ctx.sessions->Put(id, *cr.first, r.body_file, cr.total, cr.open_end,
                                               hashes ? &*hashes : nullptr)
                           : ctx.sessions->Query(id, cr.total);
  if (!progress.ok()) return StorageError(progress.status());
  if (progress->object) return ObjectResponse(r, *progress->object);
  HttpResponse more;
  more.status = 308;
  more.content_type = "text/plain; charset=utf-8";
  if (progress->persisted > 0) {
    more.headers = {{"Range", "bytes=0-" + std::to_string(progress->persisted - 1)}};
  }
  return more;
}

}  // namespace ty::api::internal
