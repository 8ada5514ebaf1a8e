// Cloud Logging v2 read side: `POST /v2/entries:list` with a JSON body, as gcloud
// and the client libraries send it (docs/contracts/cloud-logging-v2.md §1), and `GET
// /v2/entries:list?filter=...&resourceNames=...` for curl users. The deprecated
// `projectIds` field is still honoured (each id means `projects/<id>`).
#include <nlohmann/json.hpp>
#include <string>

#include "api/endpoints.h"
#include "api/http_status.h"

namespace ty::api::internal {

namespace {

using json = nlohmann::json;

// Field `name` of `body` as a string; "" when absent. Google's wording for a
// wrongly typed field.
Result<std::string> StringField(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return InvalidArgument(std::string("Invalid value at '") + name + "' (TYPE_STRING), " +
                           it->dump());
  }
  return it->get<std::string>();
}

Result<std::vector<std::string>> StringList(const json& body, const char* name) {
  std::vector<std::string> out;
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return out;
  if (!it->is_array()) {
    return InvalidArgument(std::string("Invalid value at '") + name + "' (TYPE_STRING), " +
                           it->dump());
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    if (!v.is_string()) {
      return InvalidArgument(std::string("Invalid value at '") + name + "[" + std::to_string(i) +
                             "]' (TYPE_STRING), " + v.dump());
    }
    out.push_back(v.get<std::string>());
  }
  return out;
}

// pageSize is an int32: a JSON number or a decimal string (proto3 JSON).
Result<int> PageSizeField(const json& body) {
  auto it = body.find("pageSize");
  if (it == body.end() || it->is_null()) return 0;
  auto bad = [&] {
    return InvalidArgument("Invalid value at 'page_size' (TYPE_INT32), " + it->dump());
  };
  if (it->is_number_integer()) {
    int64_t v = it->get<int64_t>();
    if (v < INT32_MIN || v > INT32_MAX) return bad();
    return static_cast<int>(v);
  }
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    json parsed = json::parse(s, nullptr, false);
    if (!parsed.is_number_integer()) return bad();
    return PageSizeField(json{{"pageSize", parsed}});
  }
  return bad();
}

Result<service::LogEntriesRequest> RequestFromBody(const json& body) {
  service::LogEntriesRequest r;
  ASSIGN_OR_RETURN(r.resource_names, StringList(body, "resourceNames"));
  ASSIGN_OR_RETURN(std::vector<std::string> project_ids, StringList(body, "projectIds"));
  for (const std::string& p : project_ids) r.resource_names.push_back("projects/" + p);
  ASSIGN_OR_RETURN(r.filter, StringField(body, "filter"));
  ASSIGN_OR_RETURN(r.order_by, StringField(body, "orderBy"));
  ASSIGN_OR_RETURN(r.page_size, PageSizeField(body));
  ASSIGN_OR_RETURN(r.page_token, StringField(body, "pageToken"));
  return r;
}

// GET: the same fields as query parameters (one resource name).
json BodyFromQuery(const HttpRequest& request) {
  json body = json::object();
  for (const char* name : {"filter", "orderBy", "pageSize", "pageToken"}) {
    std::string v = Param(request, name);
    if (!v.empty()) body[name] = v;
  }
  std::string resource = Param(request, "resourceNames");
  if (!resource.empty()) body["resourceNames"] = json::array({resource});
  return body;
}

}  // namespace

HttpResponse ListLogEntries(const Call& call, const std::string& only_job) {
  json body;
  if (call.request.method == "GET") {
    body = BodyFromQuery(call.request);
  } else {
    Result<json> parsed = BodyObject(call.request);
    if (!parsed.ok()) return ErrorResponse(parsed.status());
    body = std::move(parsed).value();
  }
  Result<service::LogEntriesRequest> request = RequestFromBody(body);
  if (!request.ok()) return ErrorResponse(request.status());
  request->only_job_uid = only_job;
  Result<service::LogEntriesPage> page = call.service->ListLogEntries(*request);
  if (!page.ok()) return ErrorResponse(page.status());
  json out = json::object();
  if (!page->entries.empty()) out["entries"] = std::move(page->entries);
  if (!page->next_page_token.empty()) out["nextPageToken"] = page->next_page_token;
  return JsonResponse(out);
}

}  // namespace ty::api::internal
