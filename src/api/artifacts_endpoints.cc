// Artifact Registry's repositories (artifacts/repositories.h) as `gcloud artifacts
// repositories create|describe|list` call them (artifactregistry v1; gcloud lists the
// locations through v1beta2). A create is done when it answers: its operation comes back
// with `done` and the repository, so gcloud reads the repository without polling.
#include <nlohmann/json.hpp>
#include <string>

#include "api/endpoints.h"
#include "api/http_status.h"
#include "artifacts/repositories.h"
#include "common/time.h"

namespace ty::api::internal {

namespace {

using json = nlohmann::json;
using artifacts::Repository;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

json RepositoryJson(const Repository& r) {
  json j = {
      {"name", r.name()},
      {"format", r.format},
      {"mode", "STANDARD_REPOSITORY"},
      {"createTime", FormatRfc3339(r.create_time)},
      {"updateTime", FormatRfc3339(r.update_time)},
      {"sizeBytes", "0"},
      {"registryUri", r.location + "-" + Lower(r.format) + ".pkg.dev/" + r.project + "/" + r.id}};
  if (!r.description.empty()) j["description"] = r.description;
  if (!r.labels.empty()) j["labels"] = r.labels;
  return j;
}

// The repository a create's body describes. What this registry cannot do (keys of the
// customer's own, remote and virtual repositories) is refused naming the field.
Result<Repository> RepositoryFromBody(const json& body) {
  for (const char* unsupported :
       {"kmsKeyName", "remoteRepositoryConfig", "virtualRepositoryConfig", "cleanupPolicies"}) {
    if (body.contains(unsupported)) {
      return InvalidArgument(std::string("repository.") + unsupported +
                             ": not supported by this registry")
          .WithField(std::string("repository.") + unsupported);
    }
  }
  Repository r;
  try {
    r.format = body.value("format", "DOCKER");
    r.description = body.value("description", "");
    r.labels = body.value("labels", std::map<std::string, std::string>{});
    const std::string mode = body.value("mode", "STANDARD_REPOSITORY");
    if (mode != "STANDARD_REPOSITORY" && mode != "MODE_UNSPECIFIED") {
      return InvalidArgument("repository.mode: only STANDARD_REPOSITORY is supported")
          .WithField("repository.mode");
    }
  } catch (const json::exception&) {
    return InvalidArgument(
        "repository: format, mode and description are strings, labels an object of strings");
  }
  return r;
}

}  // namespace

HttpResponse CreateRepository(const RouteCall& call) {
  const std::string& project = call.params.project;
  const std::string& location = call.params.location;
  Result<json> body = BodyObject(call.request);
  if (!body.ok()) return ErrorResponse(body.status());
  Result<Repository> wanted = RepositoryFromBody(*body);
  if (!wanted.ok()) return ErrorResponse(wanted.status());
  wanted->project = project;
  wanted->location = location;
  wanted->id = Param(call.request, "repositoryId");
  Result<Repository> made = call.artifacts->Create(std::move(*wanted));
  if (!made.ok()) return ErrorResponse(made.status());
  json response = RepositoryJson(*made);
  response["@type"] = "type.googleapis.com/google.devtools.artifactregistry.v1.Repository";
  return JsonResponse(
      {{"name", "projects/" + project + "/locations/" + location + "/operations/create-" +
                    made->id + "-" + std::to_string(made->create_time)},
       {"metadata",
        {{"@type", "type.googleapis.com/google.devtools.artifactregistry.v1.OperationMetadata"}}},
       {"done", true},
       {"response", std::move(response)}});
}

HttpResponse GetRepository(const RouteCall& call) {
  const RouteParams& p = call.params;
  Result<Repository> r = call.artifacts->Get(p.project, p.location, p.repository);
  if (!r.ok()) return ErrorResponse(r.status());
  return JsonResponse(RepositoryJson(*r));
}

HttpResponse ListRepositories(const RouteCall& call) {
  Result<std::vector<Repository>> all =
      call.artifacts->List(call.params.project, call.params.location);
  if (!all.ok()) return ErrorResponse(all.status());
  json out = json::object();
  for (const Repository& r : *all) out["repositories"].push_back(RepositoryJson(r));
  return JsonResponse(out);
}

HttpResponse ListRepositoryLocations(const RouteCall& call) {
  const std::string& project = call.params.project;
  Result<std::vector<std::string>> locations = call.artifacts->Locations(project);
  if (!locations.ok()) return ErrorResponse(locations.status());
  json out = json::object();
  for (const std::string& l : *locations) {
    out["locations"].push_back(
        {{"name", "projects/" + project + "/locations/" + l}, {"locationId", l}});
  }
  return JsonResponse(out);
}

}  // namespace ty::api::internal
