// Cloud Storage JSON API: routing, resources, buckets, object reads, listing,
// patch, delete, copy and compose (uploads are in storage_uploads.cc).
#include "api/storage_api.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "api/endpoints.h"  // Param
#include "api/http_status.h"
#include "api/query.h"
#include "auth/replica_credentials.h"
#include "common/files.h"
#include "common/time.h"
#include "gcs/hashes.h"
#include "model/resource_ids.h"

namespace ty::api::internal {

namespace {

using json = nlohmann::json;
using gcs::ObjectInfo;

Result<std::optional<int64_t>> Int64Param(const HttpRequest& r, const std::string& name) {
  std::string v = Param(r, name);
  if (v.empty()) return std::optional<int64_t>();
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (errno != 0 || end == v.c_str() || *end != '\0') {
    return InvalidArgument("Invalid value for " + name + ": '" + v + "' is not a number");
  }
  return std::optional<int64_t>(n);
}

const char* ReasonOf(int http) {
  switch (http) {
    case 400:
      return "invalid";
    case 401:
      return "required";  // Cloud Storage's reason for a missing or bad credential.
    case 403:
      return "forbidden";
    case 404:
      return "notFound";
    case 409:
      return "conflict";
    case 412:
      return "conditionNotMet";
    case 429:
      return "rateLimitExceeded";
    case 503:
      return "backendError";
    default:
      return "internalError";
  }
}

json BucketJson(const HttpRequest& r, const gcs::BucketInfo& b) {
  std::string t = FormatRfc3339(b.time_created);
  return {{"kind", "storage#bucket"},
          {"id", b.name},
          {"name", b.name},
          {"selfLink", BaseUrl(r) + "/storage/v1/b/" + b.name},
          {"projectNumber", "0"},
          {"metageneration", "1"},
          {"location", "US"},
          {"locationType", "multi-region"},
          {"storageClass", "STANDARD"},
          {"timeCreated", t},
          {"updated", t},
          {"etag", "CAE="}};
}

json ObjectJson(const HttpRequest& r, const ObjectInfo& o) {
  const std::string gen = std::to_string(o.generation);
  const std::string enc = UrlEncode(o.name);
  json j = {{"kind", "storage#object"},
            {"id", o.bucket + "/" + o.name + "/" + gen},
            {"selfLink", BaseUrl(r) + "/storage/v1/b/" + o.bucket + "/o/" + enc},
            {"mediaLink", BaseUrl(r) + "/download/storage/v1/b/" + o.bucket + "/o/" + enc +
                              "?generation=" + gen + "&alt=media"},
            {"name", o.name},
            {"bucket", o.bucket},
            {"generation", gen},
            {"metageneration", std::to_string(o.metageneration)},
            {"contentType", o.content_type},
            {"storageClass", "STANDARD"},
            {"size", std::to_string(o.size)},
            {"etag", Base64Encode(gen + "/" + std::to_string(o.metageneration))},
            {"timeCreated", FormatRfc3339(o.time_created)},
            {"updated", FormatRfc3339(o.updated)},
            {"timeStorageClassUpdated", FormatRfc3339(o.time_created)}};
  // Hashes are absent while a large file a replica wrote is being hashed
  // (gcs/hash_queue.h), as Google omits md5Hash for composite objects.
  if (!o.crc32c_b64.empty()) j["crc32c"] = o.crc32c_b64;
  if (!o.md5_b64.empty()) j["md5Hash"] = o.md5_b64;
  if (!o.metadata.empty()) j["metadata"] = o.metadata;
  if (!o.content_encoding.empty()) j["contentEncoding"] = o.content_encoding;
  if (!o.cache_control.empty()) j["cacheControl"] = o.cache_control;
  if (!o.content_disposition.empty()) j["contentDisposition"] = o.content_disposition;
  if (o.component_count > 0) j["componentCount"] = o.component_count;
  return j;
}

// ---- Media ------------------------------------------------------------------------

class ReaderSource : public BodySource {
 public:
  ReaderSource(gcs::ObjectReader reader, uint64_t offset, uint64_t length)
      : reader_(std::move(reader)), offset_(offset), length_(length) {}
  uint64_t size() const override { return length_; }
  Result<std::string> Read(uint64_t at, size_t n) override { return reader_.Read(offset_ + at, n); }

 private:
  gcs::ObjectReader reader_;
  uint64_t offset_;
  uint64_t length_;
};

// "bytes=a-b", "bytes=a-", "bytes=-n" of an object of `size` bytes. nullopt: the
// whole object; InvalidArgument-like failure: not satisfiable.
Result<std::optional<std::pair<uint64_t, uint64_t>>> RangeOf(const std::string& header,
                                                             uint64_t size) {
  using Range = std::optional<std::pair<uint64_t, uint64_t>>;
  if (header.rfind("bytes=", 0) != 0 || header.find(',') != std::string::npos) return Range();
  std::string spec = header.substr(6);
  size_t dash = spec.find('-');
  if (dash == std::string::npos) return Range();
  std::string a = spec.substr(0, dash), b = spec.substr(dash + 1);
  uint64_t first = 0, last = size == 0 ? 0 : size - 1;
  if (a.empty()) {
    if (b.empty()) return Range();
    uint64_t n = std::strtoull(b.c_str(), nullptr, 10);
    first = n >= size ? 0 : size - n;
  } else {
    first = std::strtoull(a.c_str(), nullptr, 10);
    if (!b.empty()) last = std::min<uint64_t>(last, std::strtoull(b.c_str(), nullptr, 10));
  }
  if (first >= size || first > last)
    return Status(StatusCode::kOutOfRange, "Requested range not satisfiable");
  return Range(std::make_pair(first, last));
}

}  // namespace

HttpResponse Download(const StorageContext& ctx, const HttpRequest& r, const std::string& bucket,
                      const std::string& name) {
  Result<std::optional<int64_t>> generation = Int64Param(r, "generation");
  if (!generation.ok()) return StorageError(generation.status());
  Result<gcs::ObjectReader> reader = ctx.store->OpenForRead(bucket, name, *generation);
  if (!reader.ok()) return StorageError(reader.status());
  const ObjectInfo info = reader->info();
  HttpResponse out;
  out.content_type = info.content_type;
  out.headers = {
      {"x-goog-generation", std::to_string(info.generation)},
      {"x-goog-metageneration", std::to_string(info.metageneration)},
      {"x-goog-stored-content-length", std::to_string(info.size)},
      {"x-goog-stored-content-encoding",
       info.content_encoding.empty() ? "identity" : info.content_encoding},
      {"Accept-Ranges", "bytes"},
      {"ETag",
       "\"" + (info.md5_b64.empty() ? std::to_string(info.generation) : info.md5_b64) + "\""}};
  std::string hashes;
  if (!info.crc32c_b64.empty()) hashes = "crc32c=" + info.crc32c_b64;
  if (!info.md5_b64.empty()) hashes += (hashes.empty() ? "md5=" : ",md5=") + info.md5_b64;
  if (!hashes.empty()) out.headers.push_back({"x-goog-hash", hashes});
  Result<std::optional<std::pair<uint64_t, uint64_t>>> range =
      RangeOf(r.Header("range"), info.size);
  if (!range.ok()) {
    HttpResponse bad = StorageError(range.status());
    bad.status = 416;
    bad.headers = {{"Content-Range", "bytes */" + std::to_string(info.size)}};
    return bad;
  }
  uint64_t first = 0, length = info.size;
  if (*range) {
    first = (*range)->first;
    length = (*range)->second - first + 1;
    out.status = 206;
    out.headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" +
                                                  std::to_string((*range)->second) + "/" +
                                                  std::to_string(info.size));
  }
  out.source = std::make_shared<ReaderSource>(std::move(*reader), first, length);
  return out;
}

// ---- Buckets ----------------------------------------------------------------------

HttpResponse ListBuckets(const StorageContext& ctx, const HttpRequest& r) {
  Result<std::vector<gcs::BucketInfo>> all = ctx.store->ListBuckets();
  if (!all.ok()) return StorageError(all.status());
  // buckets.list names its project (gcloud always sends it): that project's buckets
  // only. Buckets of no project are listed for admins, who list without a project.
  const std::string project = Param(r, "project");
  json items = json::array();
  for (const auto& b : *all) {
    if (!project.empty() && ctx.store->BucketOwner(b.name) != project) continue;
    items.push_back(BucketJson(r, b));
  }
  json out = {{"kind", "storage#buckets"}};
  if (!items.empty()) out["items"] = std::move(items);
  return JsonResponse(out);
}

HttpResponse InsertBucket(const StorageContext& ctx, const HttpRequest& r) {
  json body = json::parse(r.body.empty() ? "{}" : r.body, nullptr, false);
  if (!body.is_object() || !body.contains("name") || !body["name"].is_string()) {
    return StorageError(InvalidArgument("Bucket name is required: {\"name\": \"...\"}"));
  }
  // The `project` parameter (required by Google, sent by every client) owns it.
  Result<gcs::BucketInfo> made =
      ctx.store->CreateBucket(body["name"].get<std::string>(), Param(r, "project"));
  if (!made.ok()) return StorageError(made.status());
  return JsonResponse(BucketJson(r, *made));
}

HttpResponse GetBucket(const StorageContext& ctx, const HttpRequest& r, const std::string& bucket) {
  Result<gcs::BucketInfo> b = ctx.store->GetBucket(bucket);
  if (!b.ok()) return StorageError(b.status());
  return JsonResponse(BucketJson(r, *b));
}

HttpResponse GetStorageLayout(const StorageContext& ctx, const HttpRequest& r,
                              const std::string& bucket) {
  Result<gcs::BucketInfo> b = ctx.store->GetBucket(bucket);
  if (!b.ok()) return StorageError(b.status());
  // Flat namespace: gcloud would switch to the Folders API for a hierarchical one.
  return JsonResponse({{"kind", "storage#storageLayout"},
                       {"bucket", bucket},
                       {"location", "US"},
                       {"locationType", "multi-region"}});
}

HttpResponse PatchBucket(const StorageContext& ctx, const HttpRequest& r,
                         const std::string& bucket) {
  if (r.query.count("project") == 0) return GetBucket(ctx, r, bucket);  // Nothing else patches.
  Result<gcs::BucketInfo> b = ctx.store->GetBucket(bucket);
  if (!b.ok()) return StorageError(b.status());
  // An admin gives the bucket to a project (`trainyard buckets assign`); the gate asks
  // for an admin (Scope::kBucketAssign).
  const std::string project = Param(r, "project");
  if (Status valid = model::CheckProjectId(project); !valid.ok()) {
    return StorageError(InvalidArgument("project: " + valid.message()));
  }
  if (Status s = ctx.store->AssignBucket(bucket, project); !s.ok()) return StorageError(s);
  return JsonResponse(BucketJson(r, *b));
}

HttpResponse DeleteBucket(const StorageContext& ctx, const HttpRequest& r,
                          const std::string& bucket) {
  Status s = ctx.store->DeleteBucket(bucket);
  if (s.code() == StatusCode::kFailedPrecondition) s = AlreadyExists(s.message());  // 409.
  if (!s.ok()) return StorageError(s);
  HttpResponse done;
  done.status = 204;
  return done;
}

// ---- Objects ----------------------------------------------------------------------

HttpResponse ListObjects(const StorageContext& ctx, const HttpRequest& r,
                         const std::string& bucket) {
  gcs::ListQuery q;
  q.prefix = Param(r, "prefix");
  q.delimiter = Param(r, "delimiter");
  q.page_token = Param(r, "pageToken");
  q.start_offset = Param(r, "startOffset");
  q.end_offset = Param(r, "endOffset");
  Result<std::optional<int64_t>> max = Int64Param(r, "maxResults");
  if (!max.ok()) return StorageError(max.status());
  if (*max && **max > 0) q.max_results = static_cast<size_t>(std::min<int64_t>(**max, 1000));
  Result<gcs::ListResult> l = ctx.store->List(bucket, q);
  if (!l.ok()) return StorageError(l.status());
  json out = {{"kind", "storage#objects"}};
  if (!l->items.empty()) {
    json items = json::array();
    for (const ObjectInfo& o : l->items) items.push_back(ObjectJson(r, o));
    out["items"] = std::move(items);
  }
  if (!l->prefixes.empty()) out["prefixes"] = l->prefixes;
  if (!l->next_page_token.empty()) out["nextPageToken"] = l->next_page_token;
  return JsonResponse(out);
}

namespace {

Result<gcs::ObjectPatch> PatchOf(const std::string& body_text) {
  json body = json::parse(body_text.empty() ? "{}" : body_text, nullptr, false);
  if (!body.is_object()) return InvalidArgument("The request body must be a JSON object");
  gcs::ObjectPatch p;
  auto text = [&](const char* key, std::optional<std::string>* into) -> Status {
    auto it = body.find(key);
    if (it == body.end()) return Status::Ok();
    if (!it->is_string()) return InvalidArgument(std::string(key) + " must be a string");
    *into = it->get<std::string>();
    return Status::Ok();
  };
  RETURN_IF_ERROR(text("contentType", &p.content_type));
  RETURN_IF_ERROR(text("contentEncoding", &p.content_encoding));
  RETURN_IF_ERROR(text("cacheControl", &p.cache_control));
  RETURN_IF_ERROR(text("contentDisposition", &p.content_disposition));
  if (auto m = body.find("metadata"); m != body.end()) {
    if (m->is_null()) {
      p.clear_metadata = true;
    } else if (!m->is_object()) {
      return InvalidArgument("metadata must be an object of strings");
    } else {
      for (const auto& [k, v] : m->items()) {
        if (v.is_null()) {
          p.metadata[k] = std::nullopt;
        } else if (v.is_string()) {
          p.metadata[k] = v.get<std::string>();
        } else {
          return InvalidArgument("metadata." + k + " must be a string");
        }
      }
    }
  }
  return p;
}

}  // namespace

HttpResponse GetObject(const StorageContext& ctx, const HttpRequest& r, const std::string& bucket,
                       const std::string& name) {
  if (Param(r, "alt") == "media") return Download(ctx, r, bucket, name);
  Result<gcs::Preconditions> pre = PreconditionsOf(r);  // Checked, as every object call does.
  if (!pre.ok()) return StorageError(pre.status());
  Result<std::optional<int64_t>> generation = Int64Param(r, "generation");
  if (!generation.ok()) return StorageError(generation.status());
  Result<ObjectInfo> info = ctx.store->Stat(bucket, name, *generation);
  if (!info.ok()) return StorageError(info.status());
  return ObjectResponse(r, *info);
}

HttpResponse DeleteObject(const StorageContext& ctx, const HttpRequest& r,
                          const std::string& bucket, const std::string& name) {
  Result<gcs::Preconditions> pre = PreconditionsOf(r);
  if (!pre.ok()) return StorageError(pre.status());
  Result<std::optional<int64_t>> generation = Int64Param(r, "generation");
  if (!generation.ok()) return StorageError(generation.status());
  Status s = ctx.store->Delete(bucket, name, *generation, *pre);
  if (!s.ok()) return StorageError(s);
  HttpResponse done;
  done.status = 204;
  return done;
}

// PATCH, and PUT (the whole-resource update, taken alike).
HttpResponse PatchObject(const StorageContext& ctx, const HttpRequest& r, const std::string& bucket,
                         const std::string& name) {
  Result<gcs::Preconditions> pre = PreconditionsOf(r);
  if (!pre.ok()) return StorageError(pre.status());
  if (Result<std::optional<int64_t>> g = Int64Param(r, "generation"); !g.ok()) {
    return StorageError(g.status());
  }
  Result<gcs::ObjectPatch> patch = PatchOf(r.body);
  if (!patch.ok()) return StorageError(patch.status());
  Result<ObjectInfo> info = ctx.store->Patch(bucket, name, *patch, *pre);
  if (!info.ok()) return StorageError(info.status());
  return ObjectResponse(r, *info);
}

namespace {

// Appends the object's bytes to the staging file `to` (in the kernel), extending
// `*crc` (if set) by the object's CRC-32C without reading the bytes.
Status AppendObject(const StorageContext& ctx, const std::string& bucket, const std::string& name,
                    std::optional<int64_t> generation, const std::string& to,
                    uint32_t* crc = nullptr) {
  ASSIGN_OR_RETURN(gcs::ObjectReader reader, ctx.store->OpenForRead(bucket, name, generation));
  int out = ::open(to.c_str(), O_WRONLY | O_CLOEXEC);
  if (out < 0) return Internal("cannot write a staging file");
  struct stat st = {};
  ::fstat(out, &st);
  uint64_t offset = static_cast<uint64_t>(st.st_size);
  Status copied = reader.CopyTo(out, &offset);
  ::close(out);
  RETURN_IF_ERROR(copied);
  if (crc != nullptr) {
    std::optional<uint32_t> part = gcs::Crc32cFromBase64(reader.info().crc32c_b64);
    if (!part) {
      // A large file a replica wrote, still being hashed: the client retries a 503.
      return Unavailable("object " + bucket + "/" + name + " is still being hashed; retry");
    }
    *crc = gcs::Crc32cCombine(*crc, *part, reader.info().size);
  }
  return Status::Ok();
}

gcs::ObjectAttributes AttributesOf(const ObjectInfo& source, const json& overrides) {
  gcs::ObjectAttributes a{source.content_type, source.content_encoding, source.cache_control,
                          source.content_disposition, source.metadata};
  if (!overrides.is_object()) return a;
  if (overrides.contains("contentType") && overrides["contentType"].is_string()) {
    a.content_type = overrides["contentType"];
  }
  if (overrides.contains("metadata") && overrides["metadata"].is_object()) {
    for (const auto& [k, v] : overrides["metadata"].items()) {
      if (v.is_string()) a.metadata[k] = v.get<std::string>();
    }
  }
  return a;
}

}  // namespace

// rewriteTo (answers a rewriteResponse, done in one call) and copyTo.
HttpResponse CopyObject(const StorageContext& ctx, const HttpRequest& r,
                        const std::string& src_bucket, const std::string& src_name,
                        const std::string& dst_bucket, const std::string& dst_name, bool rewrite) {
  Result<std::optional<int64_t>> generation = Int64Param(r, "sourceGeneration");
  Result<gcs::Preconditions> pre = PreconditionsOf(r);
  if (!generation.ok() || !pre.ok()) {
    return StorageError(!generation.ok() ? generation.status() : pre.status());
  }
  Result<ObjectInfo> source = ctx.store->Stat(src_bucket, src_name, *generation);
  if (!source.ok()) return StorageError(source.status());
  Result<std::string> staged = ctx.store->NewStagingFile();
  if (!staged.ok()) return StorageError(staged.status());
  if (Status s = AppendObject(ctx, src_bucket, src_name, source->generation, *staged); !s.ok()) {
    ::unlink(staged->c_str());
    return StorageError(s);
  }
  json body = json::parse(r.body.empty() ? "{}" : r.body, nullptr, false);
  Result<ObjectInfo> made =
      ctx.store->Commit(dst_bucket, dst_name, AttributesOf(*source, body), *pre, *staged);
  if (!made.ok()) return StorageError(made.status());
  if (!rewrite) return ObjectResponse(r, *made);
  const std::string size = std::to_string(made->size);
  return JsonResponse({{"kind", "storage#rewriteResponse"},
                       {"totalBytesRewritten", size},
                       {"objectSize", size},
                       {"done", true},
                       {"resource", ObjectJson(r, *made)}});
}

// The server computes the composite's hashes; the client's copied ones are ignored.
HttpResponse Compose(const StorageContext& ctx, const HttpRequest& r, const std::string& bucket,
                     const std::string& name) {
  json body = json::parse(r.body.empty() ? "{}" : r.body, nullptr, false);
  if (!body.is_object() || !body.contains("sourceObjects") || !body["sourceObjects"].is_array() ||
      body["sourceObjects"].empty() || body["sourceObjects"].size() > 32) {
    return StorageError(InvalidArgument("sourceObjects: 1 to 32 objects are required"));
  }
  Result<gcs::Preconditions> pre = PreconditionsOf(r);
  if (!pre.ok()) return StorageError(pre.status());
  Result<std::string> staged = ctx.store->NewStagingFile();
  if (!staged.ok()) return StorageError(staged.status());
  int components = 0;
  uint32_t crc = 0;
  std::optional<ObjectInfo> first;
  for (const json& src : body["sourceObjects"]) {
    std::string src_name = src.is_object() ? src.value("name", "") : "";
    std::optional<int64_t> gen;
    if (src.is_object() && src.contains("generation")) {
      const json& g = src["generation"];
      gen = g.is_string()           ? std::strtoll(g.get<std::string>().c_str(), nullptr, 10)
            : g.is_number_integer() ? g.get<int64_t>()
                                    : 0;
    }
    Result<ObjectInfo> info = ctx.store->Stat(bucket, src_name, gen);
    Status s = info.ok() ? AppendObject(ctx, bucket, src_name, info->generation, *staged, &crc)
                         : info.status();
    if (!s.ok()) {
      ::unlink(staged->c_str());
      return StorageError(s);
    }
    if (!first) first = *info;
    components += std::max(1, info->component_count);
  }
  gcs::ObjectAttributes attributes = AttributesOf(*first, body.value("destination", json()));
  // As on Google, a composite object has a CRC-32C but no MD5: hashing a large
  // composite again serially would undo the point of uploading its parts in parallel.
  const std::pair<std::string, std::string> hashes{"", gcs::Crc32cBase64(crc)};
  Result<ObjectInfo> made =
      ctx.store->Commit(bucket, name, attributes, *pre, *staged, components, &hashes);
  if (!made.ok()) return StorageError(made.status());
  return ObjectResponse(r, *made);
}

HttpResponse StorageError(const Status& status) {
  int http = HttpStatusFor(status.code());
  // Conditions on the live object (ifGenerationMatch, ...) are 412 in Cloud Storage.
  if (status.code() == StatusCode::kFailedPrecondition) http = 412;
  if (status.code() == StatusCode::kOutOfRange) http = 416;
  json error = {
      {"code", http},
      {"message", status.message()},
      {"errors",
       json::array(
           {{{"domain", "global"}, {"reason", ReasonOf(http)}, {"message", status.message()}}})}};
  return JsonResponse({{"error", error}}, http);
}

std::string BaseUrl(const HttpRequest& r) {
  std::string host = r.Header("host");
  const std::string url =
      (r.tls ? "https://" : "http://") + (host.empty() ? std::string("127.0.0.1") : host);
  // A replica that came with its credential as the URL's userinfo (Basic auth) gets
  // it back in the links it is given, or a client following mediaLink or an upload's
  // Location would lose it (auth/replica_credentials.h). Only what the client itself
  // sent, and only in the characters a token is made of.
  const std::string userinfo = auth::BasicUserinfo(r.Header("authorization"));
  const bool plain = !userinfo.empty() && std::all_of(userinfo.begin(), userinfo.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == ':' || c == '-' ||
           c == '_';
  });
  if (!plain) return url;
  const size_t colon = userinfo.find(':');
  return WithUserinfo(url, userinfo.substr(0, colon), userinfo.substr(colon + 1));
}

HttpResponse ObjectResponse(const HttpRequest& r, const ObjectInfo& info) {
  return JsonResponse(ObjectJson(r, info));
}

Result<gcs::Preconditions> PreconditionsOf(const HttpRequest& r) {
  gcs::Preconditions p;
  ASSIGN_OR_RETURN(p.if_generation_match, Int64Param(r, "ifGenerationMatch"));
  ASSIGN_OR_RETURN(p.if_generation_not_match, Int64Param(r, "ifGenerationNotMatch"));
  ASSIGN_OR_RETURN(p.if_metageneration_match, Int64Param(r, "ifMetagenerationMatch"));
  ASSIGN_OR_RETURN(p.if_metageneration_not_match, Int64Param(r, "ifMetagenerationNotMatch"));
  return p;
}

}  // namespace ty::api::internal
