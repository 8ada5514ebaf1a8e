// Artifact Registry's repositories, as `gcloud artifacts repositories create|describe|
// list` and the guides use them: a name a project gives to a set of images at
// LOCATION-docker.pkg.dev/PROJECT/REPOSITORY. The images themselves live in the
// daemon's registry (executor/container/local_registry.h), which takes a push to any
// such name; a repository here is the record gcloud creates, describes and lists.
//
// Each repository is one JSON file, <dir>/<project>/<location>/<id>.json, written
// atomically; the ids are checked before they become paths. Files are read back as
// untrusted: an unreadable or oversized one is left out (and a create of its id refused).
//
// Thread-safe: one mutex orders creates against reads.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace ty::artifacts {

struct Repository {
  std::string project;
  std::string location;
  std::string id;
  std::string format = "DOCKER";  // Artifact Registry's Format enum name.
  std::string description;
  std::map<std::string, std::string> labels;
  TimeMicros create_time = 0;
  TimeMicros update_time = 0;

  // "projects/P/locations/L/repositories/ID".
  std::string name() const;
};

// The formats Artifact Registry knows; only DOCKER holds anything here.
bool IsKnownFormat(const std::string& format);

class Repositories {
 public:
  // At most this many repositories per project (Google's quota is 1,000 too).
  static constexpr size_t kMaxPerProject = 1000;

  // `dir` is created if missing. `clock` (required, not owned): create times.
  static Result<std::unique_ptr<Repositories>> Open(std::string dir, const Clock* clock);

  // InvalidArgument naming the field (`repositoryId`, `repository.format`, ...),
  // AlreadyExists, or ResourceExhausted past kMaxPerProject.
  Result<Repository> Create(Repository repository);
  // NotFound when there is none.
  Result<Repository> Get(const std::string& project, const std::string& location,
                         const std::string& id) const;
  // By id; `location` "-" or "" means every location.
  Result<std::vector<Repository>> List(const std::string& project,
                                       const std::string& location) const;
  // The locations where `project` has repositories, sorted.
  Result<std::vector<std::string>> Locations(const std::string& project) const;

 private:
  Repositories(std::string dir, const Clock* clock) : dir_(std::move(dir)), clock_(clock) {}
  std::string PathOf(const std::string& project, const std::string& location,
                     const std::string& id) const;
  std::vector<Repository> ReadLocation(const std::string& project,
                                       const std::string& location) const;
  size_t CountLocked(const std::string& project) const;

  const std::string dir_;
  const Clock* const clock_;
  mutable std::mutex mu_;
};

// Artifact Registry's rule for a repository id: lower-case letters, digits and hyphens,
// starting with a letter and not ending with a hyphen, at most 63 characters.
Status CheckRepositoryId(const std::string& id);

}  // namespace ty::artifacts
