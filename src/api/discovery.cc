// The ml v1 discovery document: what Google's discovery-based Python client
// (`googleapiclient.discovery.build('ml', 'v1', discoveryServiceUrl=...)`, Debian's
// python3-googleapi) reads to make `projects().jobs().create(...)` and friends. It
// describes the methods this daemon serves (docs/contracts/ml-v1.md §1) and points the
// client back at the daemon it was read from.
//
// No `auth` section: with none, the client sends no credentials of its own accord, so a
// daemon without tokens answers it as is; with tokens, the caller passes `credentials=`
// (a bearer token) and the client sends them.
#include <nlohmann/json.hpp>
#include <string>

#include "api/endpoints.h"
#include "api/http_status.h"
#include "api/storage_api.h"

namespace ty::api::internal {

namespace {

using json = nlohmann::json;

json PathParam(const std::string& pattern, const std::string& what) {
  return {{"type", "string"},
          {"location", "path"},
          {"required", true},
          {"pattern", pattern},
          {"description", what}};
}

json QueryParam(const std::string& type, const std::string& what) {
  json p = {{"type", type}, {"location", "query"}, {"description", what}};
  if (type == "integer") p["format"] = "int32";
  return p;
}

json Method(const std::string& id, const std::string& http_method, const std::string& path,
            json parameters, const std::string& order, const std::string& request,
            const std::string& response) {
  json m = {{"id", id},
            {"httpMethod", http_method},
            {"path", path},
            {"flatPath", path},
            {"parameters", std::move(parameters)},
            {"parameterOrder", json::array({order})},
            {"response", {{"$ref", response}}}};
  if (!request.empty()) m["request"] = {{"$ref", request}};
  return m;
}

json JobsMethods() {
  const json parent = PathParam("^projects/[^/]+$", "The project: projects/PROJECT.");
  const json name = PathParam("^projects/[^/]+/jobs/[^/]+$", "The job: projects/PROJECT/jobs/ID.");
  json list_params = {{"parent", parent},
                      {"filter", QueryParam("string", "Only jobs that match this filter.")},
                      {"pageSize", QueryParam("integer", "At most this many jobs (20; 100).")},
                      {"pageToken", QueryParam("string", "The page after a previous list's.")}};
  return {
      {"create",
       Method("ml.projects.jobs.create", "POST", "v1/{+parent}/jobs", {{"parent", parent}},
              "parent", "GoogleCloudMlV1__Job", "GoogleCloudMlV1__Job")},
      {"get", Method("ml.projects.jobs.get", "GET", "v1/{+name}", {{"name", name}}, "name", "",
                     "GoogleCloudMlV1__Job")},
      {"list", Method("ml.projects.jobs.list", "GET", "v1/{+parent}/jobs", std::move(list_params),
                      "parent", "", "GoogleCloudMlV1__ListJobsResponse")},
      {"cancel", Method("ml.projects.jobs.cancel", "POST", "v1/{+name}:cancel", {{"name", name}},
                        "name", "GoogleCloudMlV1__CancelJobRequest", "GoogleProtobuf__Empty")}};
}

json Object(const std::string& id, json properties = json::object()) {
  return {{"id", id}, {"type", "object"}, {"properties", std::move(properties)}};
}

// The shapes the methods name. The client does not check bodies against them; they say
// what each field is for a reader (and the client's generated docstrings).
json Schemas() {
  const json text = {{"type", "string"}};
  const json any = {{"type", "object"}, {"additionalProperties", {{"type", "any"}}}};
  json job = Object("GoogleCloudMlV1__Job",
                    {{"jobId", text},
                     {"trainingInput", any},
                     {"trainingOutput", any},
                     {"createTime", {{"type", "string"}, {"format", "google-datetime"}}},
                     {"startTime", {{"type", "string"}, {"format", "google-datetime"}}},
                     {"endTime", {{"type", "string"}, {"format", "google-datetime"}}},
                     {"state", text},
                     {"errorMessage", text},
                     {"etag", {{"type", "string"}, {"format", "byte"}}},
                     {"labels", {{"type", "object"}, {"additionalProperties", text}}},
                     {"jobPosition", {{"type", "string"}, {"format", "int64"}}}});
  json list = Object("GoogleCloudMlV1__ListJobsResponse",
                     {{"jobs", {{"type", "array"}, {"items", {{"$ref", "GoogleCloudMlV1__Job"}}}}},
                      {"nextPageToken", text}});
  return {{"GoogleCloudMlV1__Job", std::move(job)},
          {"GoogleCloudMlV1__ListJobsResponse", std::move(list)},
          {"GoogleCloudMlV1__CancelJobRequest", Object("GoogleCloudMlV1__CancelJobRequest")},
          {"GoogleProtobuf__Empty", Object("GoogleProtobuf__Empty")}};
}

}  // namespace

HttpResponse MlDiscoveryDocument(const HttpRequest& request) {
  const std::string root = BaseUrl(request) + "/";
  json doc = {
      {"kind", "discovery#restDescription"},
      {"discoveryVersion", "v1"},
      {"id", "ml:v1"},
      {"name", "ml"},
      {"version", "v1"},
      {"title", "AI Platform Training (Trainyard)"},
      {"protocol", "rest"},
      {"rootUrl", root},
      {"servicePath", ""},
      {"baseUrl", root},
      {"batchPath", "batch"},
      {"parameters", {{"alt", QueryParam("string", "Data format for the response (json).")}}},
      {"resources", {{"projects", {{"resources", {{"jobs", {{"methods", JobsMethods()}}}}}}}}},
      {"schemas", Schemas()}};
  return JsonResponse(doc);
}

}  // namespace ty::api::internal
