#include "gcs/upload_sessions.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/files.h"

namespace ty::gcs {

namespace {

// Finished sessions remembered so a client that lost the final answer gets it again.
constexpr size_t kFinishedKept = 1000;

// Appends bytes [skip, end) of `from` to `to` (kernel-side copy where possible).
Status AppendFile(const std::string& from, uint64_t skip, const std::string& to) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Internal("cannot read the upload: " + std::string(std::strerror(errno)));
  // Not O_APPEND: copy_file_range refuses such a descriptor; the offset is explicit.
  int out = ::open(to.c_str(), O_WRONLY | O_CLOEXEC);
  if (out < 0) {
    ::close(in);
    return Internal("cannot extend the upload: " + std::string(std::strerror(errno)));
  }
  struct stat st {
  }, dst{};
  ::fstat(in, &st);
  ::fstat(out, &dst);
  off_t at = static_cast<off_t>(skip);
  off_t out_at = dst.st_size;
  Status result = Status::Ok();
  while (at < st.st_size) {
    ssize_t n = ::copy_file_range(in, &at, out, &out_at, static_cast<size_t>(st.st_size - at), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      result = Internal("cannot extend the upload: " + std::string(std::strerror(errno)));
      break;
    }
  }
  ::close(in);
  ::close(out);
  return result;
}

uint64_t FileSize(const std::string& path) {
  struct stat st = {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

nlohmann::json ToJson(const UploadSession& s) {
  nlohmann::json j = {{"bucket", s.bucket},
                      {"name", s.name},
                      {"contentType", s.attributes.content_type},
                      {"contentEncoding", s.attributes.content_encoding},
                      {"cacheControl", s.attributes.cache_control},
                      {"contentDisposition", s.attributes.content_disposition},
                      {"metadata", s.attributes.metadata}};
  if (s.total) j["total"] = *s.total;
  const Preconditions& p = s.preconditions;
  if (p.if_generation_match) j["ifGenerationMatch"] = *p.if_generation_match;
  if (p.if_generation_not_match) j["ifGenerationNotMatch"] = *p.if_generation_not_match;
  if (p.if_metageneration_match) j["ifMetagenerationMatch"] = *p.if_metageneration_match;
  if (p.if_metageneration_not_match) {
    j["ifMetagenerationNotMatch"] = *p.if_metageneration_not_match;
  }
  return j;
}

std::optional<UploadSession> FromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  try {
    UploadSession s;
    s.bucket = j.at("bucket").get<std::string>();
    s.name = j.at("name").get<std::string>();
    s.attributes.content_type = j.value("contentType", "");
    s.attributes.content_encoding = j.value("contentEncoding", "");
    s.attributes.cache_control = j.value("cacheControl", "");
    s.attributes.content_disposition = j.value("contentDisposition", "");
    s.attributes.metadata = j.value("metadata", std::map<std::string, std::string>());
    if (j.contains("total")) s.total = j["total"].get<uint64_t>();
    auto opt = [&](const char* key, std::optional<int64_t>* into) {
      if (j.contains(key)) *into = j[key].get<int64_t>();
    };
    opt("ifGenerationMatch", &s.preconditions.if_generation_match);
    opt("ifGenerationNotMatch", &s.preconditions.if_generation_not_match);
    opt("ifMetagenerationMatch", &s.preconditions.if_metageneration_match);
    opt("ifMetagenerationNotMatch", &s.preconditions.if_metageneration_not_match);
    return s;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

UploadSessions::UploadSessions(ObjectStore* store, Random& random)
    : store_(store), random_(&random) {
  std::error_code ec;
  const std::string dir = store_->state_dir() + "/sessions";
  std::filesystem::create_directories(dir, ec);
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    // The bytes' path is derived from the id, never read from the file.
    const std::string id = entry.path().stem().string();
    // A session file is a few hundred bytes; anything else (a FIFO would block the
    // start for ever, a link, a huge file) is no session and goes.
    Result<std::string> text = ReadStateFile(entry.path().string(), 1 << 20);
    std::optional<UploadSession> s = FromJson(
        nlohmann::json::parse(text.ok() ? *text : "", nullptr, /*allow_exceptions=*/false));
    if (!s || !IsSessionId(id) || entry.path().extension() != ".json" ||
        !std::filesystem::is_regular_file(StagedFile(id), ec)) {
      set_aside_.push_back(entry.path().string() + " is no upload session (" +
                           (text.ok() ? std::string("not one") : text.status().message()) +
                           "): removed");
      std::filesystem::remove(entry.path(), ec);
      continue;
    }
    s->staged = StagedFile(id);
    s->persisted = FileSize(s->staged);
    sessions_[id] = std::move(*s);
  }
  // Bytes whose session file is gone (finished or cancelled as the daemon died).
  for (const auto& entry :
       std::filesystem::directory_iterator(store_->state_dir() + "/staging", ec)) {
    std::string file = entry.path().filename().string();
    if (file.rfind("session-", 0) == 0 && sessions_.count(file.substr(8)) == 0) {
      std::filesystem::remove(entry.path(), ec);
    }
  }
}

std::string UploadSessions::SessionFile(const std::string& id) const {
  return store_->state_dir() + "/sessions/" + id + ".json";
}

std::string UploadSessions::StagedFile(const std::string& id) const {
  return store_->state_dir() + "/staging/session-" + id;
}

bool UploadSessions::IsSessionId(const std::string& id) {
  return id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

void UploadSessions::Save(const std::string& id, const UploadSession& s) const {
  (void)WritePrivateFile(SessionFile(id), ToJson(s).dump());
}

void UploadSessions::Forget(const std::string& id) {
  ::unlink(SessionFile(id).c_str());
  sessions_.erase(id);
}

Result<std::string> UploadSessions::Start(UploadSession session) {
  RETURN_IF_ERROR(store_->GetBucket(session.bucket).status());
  RETURN_IF_ERROR(ObjectStore::CheckObjectName(session.name));
  std::string id = RandomHex(*random_, 32);
  ASSIGN_OR_RETURN(session.staged, store_->NewStagingFile("session-" + id));
  if (session.staged != StagedFile(id)) return Internal("staging file misplaced: " + id);
  std::lock_guard<std::mutex> lock(mu_);
  Save(id, session);
  sessions_[id] = std::move(session);
  return id;
}

Result<UploadProgress> UploadSessions::Put(
    const std::string& id, uint64_t first, const std::string& chunk_file,
    std::optional<uint64_t> total, bool last,
    const std::pair<std::string, std::string>* chunk_hashes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto done = finished_.find(id); done != finished_.end()) {
    return UploadProgress{done->second.size, done->second};
  }
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return NotFound("No such upload session: " + id);
  UploadSession& s = it->second;
  if (first > s.persisted) {
    return InvalidArgument("Content-Range starts at byte " + std::to_string(first) + " but only " +
                           std::to_string(s.persisted) + " bytes are persisted");
  }
  const uint64_t chunk = FileSize(chunk_file);
  const bool whole = s.persisted == 0 && first == 0 && chunk > 0;
  if (whole) {
    // The common case (gcloud sends a whole file in one PUT): move, do not copy.
    if (::rename(chunk_file.c_str(), s.staged.c_str()) != 0) {
      return Internal("cannot keep the upload: " + std::string(std::strerror(errno)));
    }
    s.persisted = chunk;
  } else if (first + chunk > s.persisted) {
    // Bytes the session already holds (a client resending after a lost answer) are skipped.
    RETURN_IF_ERROR(AppendFile(chunk_file, s.persisted - first, s.staged));
    s.persisted = first + chunk;
  }
  const bool learnt_total = (total && !s.total) || (last && !s.total);
  if (total) s.total = *total;
  if (last && !s.total) s.total = s.persisted;
  if (learnt_total) Save(id, s);
  const bool chunk_is_object = whole && s.total && *s.total == chunk;
  return MaybeFinish(id, &s, chunk_is_object ? chunk_hashes : nullptr);
}

Result<UploadProgress> UploadSessions::Query(const std::string& id, std::optional<uint64_t> total) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto done = finished_.find(id); done != finished_.end()) {
    return UploadProgress{done->second.size, done->second};
  }
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return NotFound("No such upload session: " + id);
  if (total) it->second.total = *total;
  return MaybeFinish(id, &it->second);
}

Result<UploadProgress> UploadSessions::MaybeFinish(
    const std::string& id, UploadSession* s, const std::pair<std::string, std::string>* hashes) {
  UploadProgress progress{s->persisted, std::nullopt};
  if (!s->total || s->persisted < *s->total) return progress;
  if (s->persisted > *s->total) {
    return InvalidArgument("the upload holds " + std::to_string(s->persisted) +
                           " bytes, more than the declared " + std::to_string(*s->total));
  }
  Result<ObjectInfo> object =
      store_->Commit(s->bucket, s->name, s->attributes, s->preconditions, s->staged, 0, hashes);
  Forget(id);  // Commit consumed the staged file either way.
  if (!object.ok()) return object.status();
  if (finished_.size() >= kFinishedKept) finished_.erase(finished_.begin());
  finished_[id] = *object;
  progress.object = *object;
  return progress;
}

std::optional<std::string> UploadSessions::BucketOf(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = sessions_.find(id); it != sessions_.end()) return it->second.bucket;
  if (auto it = finished_.find(id); it != finished_.end()) return it->second.bucket;
  return std::nullopt;
}

void UploadSessions::Cancel(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  ::unlink(it->second.staged.c_str());
  Forget(id);
}

}  // namespace ty::gcs
