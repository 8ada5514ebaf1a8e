#include "artifacts/repositories.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "common/files.h"
#include "model/resource_ids.h"

namespace ty::artifacts {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kMaxFileBytes = 64 * 1024;  // A record with 64 labels and a description.
constexpr size_t kMaxDescription = 2048;
constexpr size_t kMaxLabels = 64;
constexpr char kSuffix[] = ".json";

std::string Encode(const Repository& r) {
  return json{{"format", r.format},
              {"description", r.description},
              {"labels", r.labels},
              {"createTime", r.create_time},
              {"updateTime", r.update_time}}
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

// Nothing for a file that is not a record we wrote (a hostile or damaged one).
std::optional<Repository> Decode(const std::string& text, const std::string& project,
                                 const std::string& location, const std::string& id) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  try {
    Repository r;
    r.project = project;
    r.location = location;
    r.id = id;
    r.format = j.at("format").get<std::string>();
    r.description = j.value("description", "");
    r.labels = j.value("labels", std::map<std::string, std::string>{});
    r.create_time = j.value("createTime", TimeMicros{0});
    r.update_time = j.value("updateTime", TimeMicros{0});
    return r;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

Status CheckRecord(const Repository& r) {
  RETURN_IF_ERROR(CheckRepositoryId(r.id));
  if (!IsKnownFormat(r.format)) {
    return InvalidArgument("repository.format: \"" + r.format +
                           "\" is not a repository format (DOCKER, MAVEN, NPM, PYTHON, APT, "
                           "YUM, GO, KFP, GENERIC)")
        .WithField("repository.format");
  }
  if (r.description.size() > kMaxDescription) {
    return InvalidArgument("repository.description: at most " + std::to_string(kMaxDescription) +
                           " bytes")
        .WithField("repository.description");
  }
  if (r.labels.size() > kMaxLabels) {
    return InvalidArgument("repository.labels: at most " + std::to_string(kMaxLabels) + " labels")
        .WithField("repository.labels");
  }
  for (const auto& [key, value] : r.labels) {
    if (key.empty() || key.size() > 63 || value.size() > 63) {
      return InvalidArgument("repository.labels: keys are 1 to 63 characters, values at most 63")
          .WithField("repository.labels");
    }
  }
  return Status::Ok();
}

std::vector<std::string> SubdirectoriesOf(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) out.push_back(it->path().filename());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string Repository::name() const {
  return "projects/" + project + "/locations/" + location + "/repositories/" + id;
}

bool IsKnownFormat(const std::string& format) {
  for (const char* f : {"DOCKER", "MAVEN", "NPM", "PYTHON", "APT", "YUM", "GO", "KFP", "GENERIC"}) {
    if (format == f) return true;
  }
  return false;
}

Status CheckRepositoryId(const std::string& id) {
  const bool shaped = !id.empty() && id.size() <= 63 && id.front() >= 'a' && id.front() <= 'z' &&
                      id.back() != '-' && std::all_of(id.begin(), id.end(), [](char c) {
                        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                      });
  if (shaped) return Status::Ok();
  return InvalidArgument("repositoryId: \"" + id +
                         "\" must be 1 to 63 lower-case letters, digits and hyphens, start "
                         "with a letter and not end with a hyphen")
      .WithField("repositoryId");
}

Result<std::unique_ptr<Repositories>> Repositories::Open(std::string dir, const Clock* clock) {
  if (clock == nullptr) return InvalidArgument("repositories need a clock");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir + ": " + ec.message());
  return std::unique_ptr<Repositories>(new Repositories(std::move(dir), clock));
}

std::string Repositories::PathOf(const std::string& project, const std::string& location,
                                 const std::string& id) const {
  return dir_ + "/" + project + "/" + location + "/" + id + kSuffix;
}

Result<Repository> Repositories::Create(Repository r) {
  RETURN_IF_ERROR(model::CheckProjectId(r.project));
  RETURN_IF_ERROR(model::CheckLocationId(r.location));
  RETURN_IF_ERROR(CheckRecord(r));
  std::lock_guard<std::mutex> lock(mu_);
  const std::string path = PathOf(r.project, r.location, r.id);
  std::error_code ec;
  if (fs::symlink_status(path, ec).type() != fs::file_type::not_found) {
    return AlreadyExists("the repository already exists: " + r.name());
  }
  if (CountLocked(r.project) >= kMaxPerProject) {
    return Status(StatusCode::kResourceExhausted, "project " + r.project + " has " +
                                                      std::to_string(kMaxPerProject) +
                                                      " repositories, the most it may have");
  }
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return Internal("cannot create the repository's directory: " + ec.message());
  r.create_time = r.update_time = clock_->Now();
  RETURN_IF_ERROR(WriteFileAtomically(path, Encode(r)));
  return r;
}

Result<Repository> Repositories::Get(const std::string& project, const std::string& location,
                                     const std::string& id) const {
  RETURN_IF_ERROR(model::CheckProjectId(project));
  RETURN_IF_ERROR(model::CheckLocationId(location));
  const std::string name = "projects/" + project + "/locations/" + location + "/repositories/" + id;
  if (!CheckRepositoryId(id).ok()) return NotFound("Requested entity was not found: " + name);
  std::lock_guard<std::mutex> lock(mu_);
  Result<std::string> text = ReadStateFile(PathOf(project, location, id), kMaxFileBytes);
  std::optional<Repository> r =
      text.ok() ? Decode(*text, project, location, id) : std::optional<Repository>();
  if (!r) return NotFound("Requested entity was not found: " + name);
  return *r;
}

std::vector<Repository> Repositories::ReadLocation(const std::string& project,
                                                   const std::string& location) const {
  std::vector<Repository> out;
  std::error_code ec;
  const std::string dir = dir_ + "/" + project + "/" + location;
  std::vector<std::string> ids;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename();
    if (file.size() <= sizeof(kSuffix) - 1 || !file.ends_with(kSuffix)) continue;
    ids.push_back(file.substr(0, file.size() - (sizeof(kSuffix) - 1)));
    if (ids.size() > kMaxPerProject) break;  // More than were ever written: not ours.
  }
  std::sort(ids.begin(), ids.end());
  for (const std::string& id : ids) {
    if (!CheckRepositoryId(id).ok()) continue;
    Result<std::string> text = ReadStateFile(dir + "/" + id + kSuffix, kMaxFileBytes);
    if (!text.ok()) continue;
    if (std::optional<Repository> r = Decode(*text, project, location, id)) out.push_back(*r);
  }
  return out;
}

size_t Repositories::CountLocked(const std::string& project) const {
  size_t n = 0;
  for (const std::string& location : SubdirectoriesOf(dir_ + "/" + project)) {
    std::error_code ec;
    for (fs::directory_iterator it(dir_ + "/" + project + "/" + location, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (it->path().filename().string().ends_with(kSuffix)) ++n;
    }
  }
  return n;
}

Result<std::vector<Repository>> Repositories::List(const std::string& project,
                                                   const std::string& location) const {
  RETURN_IF_ERROR(model::CheckProjectId(project));
  const bool every = location.empty() || location == "-";
  if (!every) RETURN_IF_ERROR(model::CheckLocationId(location));
  std::lock_guard<std::mutex> lock(mu_);
  if (!every) return ReadLocation(project, location);
  std::vector<Repository> out;
  for (const std::string& l : SubdirectoriesOf(dir_ + "/" + project)) {
    if (!model::CheckLocationId(l).ok()) continue;
    for (Repository& r : ReadLocation(project, l)) out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<std::string>> Repositories::Locations(const std::string& project) const {
  RETURN_IF_ERROR(model::CheckProjectId(project));
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const std::string& l : SubdirectoriesOf(dir_ + "/" + project)) {
    if (model::CheckLocationId(l).ok() && !ReadLocation(project, l).empty()) out.push_back(l);
  }
  return out;
}

}  // namespace ty::artifacts
