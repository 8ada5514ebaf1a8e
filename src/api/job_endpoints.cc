// Job endpoints of both dialects: create, get, list, cancel, delete, operations.
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "api/endpoints.h"
#include "api/http_status.h"
#include "common/text.h"
#include "common/time.h"

namespace ty::api::internal {

namespace {

using model::Dialect;

// snake_case -> lowerCamelCase, so `readMask=create_time` and `createTime` agree.
std::string LowerCamel(const std::string& path) {
  std::string out;
  bool upper = false;
  for (char c : path) {
    if (c == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
  }
  return out;
}

// `readMask` (Vertex list): keeps the top-level fields the mask names. A nested path
// ("jobSpec.workerPoolSpecs") keeps its whole top-level field: a superset of what was
// asked, which proto3 clients ignore.
void ApplyReadMask(const std::string& mask, nlohmann::json* resource) {
  if (mask.empty() || !resource->is_object()) return;
  std::set<std::string> keep;
  for (std::string_view part : SplitOn(mask, ',')) {
    std::string path(part);
    while (!path.empty() && path.front() == ' ') path.erase(path.begin());
    path = path.substr(0, path.find('.'));
    if (!path.empty()) keep.insert(LowerCamel(path));
  }
  for (auto it = resource->begin(); it != resource->end();) {
    if (keep.count(it.key()) == 0) {
      it = resource->erase(it);
    } else {
      ++it;
    }
  }
}

// google.longrunning.Operation of a Vertex delete (docs/contracts/client-wire.md §5): the @types
// must be ones the GAPIC client knows, or it throws.
nlohmann::json RenderOperation(const service::Operation& op) {
  nlohmann::json generic = nlohmann::json::object();
  if (op.create_time != 0) generic["createTime"] = FormatRfc3339(op.create_time);
  if (op.update_time != 0) generic["updateTime"] = FormatRfc3339(op.update_time);
  nlohmann::json out = {
      {"name", op.name},
      {"metadata",
       {{"@type", "type.googleapis.com/google.cloud.aiplatform.v1.DeleteOperationMetadata"},
        {"genericMetadata", std::move(generic)}}},
  };
  if (op.done) {
    out["done"] = true;
    out["response"] = {{"@type", "type.googleapis.com/google.protobuf.Empty"}};
  }
  return out;
}

}  // namespace

namespace {

// A training pipeline read through customJobs is its backing CustomJob.
wire::RenderOptions RenderFor(const Call& call, const service::JobRef& ref, const model::Job& job) {
  wire::RenderOptions render = call.render;
  render.as_backing_custom_job = ref.dialect == Dialect::kVertex &&
                                 ref.collection == model::VertexCollection::kCustomJobs &&
                                 job.kind == model::JobKind::kPipeline;
  return render;
}

}  // namespace

HttpResponse CreateJob(const Call& call, const service::JobRef& parent) {
  Result<nlohmann::json> body = BodyObject(call.request);
  if (!body.ok()) return ErrorResponse(body.status());
  Result<wire::ParsedJob> parsed =
      parent.dialect == Dialect::kMlV1 ? wire::ParseMlJob(*body)
      : parent.collection == model::VertexCollection::kHyperparameterTuningJobs
          ? wire::ParseVertexHyperparameterTuningJob(*body)
      : parent.collection == model::VertexCollection::kTrainingPipelines
          ? wire::ParseVertexTrainingPipeline(*body)
          : wire::ParseVertexCustomJob(*body);
  if (!parsed.ok()) return ErrorResponse(parsed.status());
  Result<model::Job> job = call.service->Submit(parent.dialect, parent.project, parent.location,
                                                std::move(parsed).value());
  if (!job.ok()) return ErrorResponse(job.status());
  return JsonResponse(wire::RenderJob(*job, call.render));
}

HttpResponse GetJob(const Call& call, const service::JobRef& ref) {
  Result<std::shared_ptr<const service::JobRead>> read = call.service->Read(ref);
  if (!read.ok()) return ErrorResponse(read.status());
  // A finished job renders once per encoding; every later GET sends the same text.
  wire::RenderOptions render = RenderFor(call, ref, (*read)->job());
  HttpResponse response;
  const int variant = (render.enum_as_int ? 1 : 0) + (render.as_backing_custom_job ? 2 : 0);
  response.body = (*read)->Rendered(
      variant, [&](const model::Job& job) { return DumpJson(wire::RenderJob(job, render)); });
  return response;
}

HttpResponse ListJobs(const Call& call, const service::JobRef& parent) {
  Result<int> page_size = IntParam(call.request, "pageSize", 0);
  if (!page_size.ok()) return ErrorResponse(page_size.status());
  service::ListRequest request;
  request.dialect = parent.dialect;
  request.project = parent.project;
  request.location = parent.location;
  request.filter = Param(call.request, "filter");
  request.collection = parent.collection;
  request.page_size = *page_size;
  request.page_token = Param(call.request, "pageToken");
  Result<service::ListResponse> listed = call.service->List(request);
  if (!listed.ok()) return ErrorResponse(listed.status());

  const bool vertex = parent.dialect == Dialect::kVertex;
  const std::string mask = vertex ? Param(call.request, "readMask") : "";
  // An empty list is `{}` (docs/contracts/ml-v1.md §1), so the array is only added when used.
  nlohmann::json out = nlohmann::json::object();
  if (!listed->jobs.empty()) {
    nlohmann::json& items = out[vertex ? model::CollectionName(parent.collection) : "jobs"];
    items = nlohmann::json::array();
    for (const model::Job& job : listed->jobs) {
      nlohmann::json rendered = wire::RenderJob(job, RenderFor(call, parent, job));
      rendered.erase("trials");  // Omitted in list results (docs/contracts/vertex-v1.md §1).
      ApplyReadMask(mask, &rendered);
      items.push_back(std::move(rendered));
    }
  }
  if (!listed->next_page_token.empty()) out["nextPageToken"] = listed->next_page_token;
  return JsonResponse(out);
}

HttpResponse CancelJob(const Call& call, const service::JobRef& ref) {
  // The body is a CancelJobRequest with no fields: `{}` or nothing at all. It is
  // still parsed so garbage is rejected as Google would.
  Result<nlohmann::json> body = BodyObject(call.request);
  if (!body.ok()) return ErrorResponse(body.status());
  Status status = call.service->Cancel(ref);
  if (!status.ok()) return ErrorResponse(status);
  // `{}` rather than an empty body: GAPIC rejects a 200 with no body (§5).
  return JsonResponse(nlohmann::json::object());
}

HttpResponse DeleteJob(const Call& call, const service::JobRef& ref) {
  Result<service::Operation> op = call.service->Delete(ref);
  if (!op.ok()) return ErrorResponse(op.status());
  return JsonResponse(RenderOperation(*op));
}

HttpResponse GetOperation(const Call& call, const std::string& name) {
  Result<service::Operation> op = call.service->GetOperation(name);
  if (!op.ok()) return ErrorResponse(op.status());
  return JsonResponse(RenderOperation(*op));
}

}  // namespace ty::api::internal
