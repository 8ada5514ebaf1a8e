#include "api/access.h"

#include <nlohmann/json.hpp>

#include "api/endpoints.h"
#include "api/query.h"
#include "auth/replica_credentials.h"

namespace ty::api {

namespace {

using auth::Need;
using auth::Role;

bool IsRead(const HttpRequest& r) { return r.method == "GET" || r.method == "HEAD"; }

// A need on `bucket` at `role`, from its owner; nothing for a bucket that does not
// exist (its route answers 404), an admin for one no project owns.
void AddBucket(std::vector<Need>* needs, const std::string& bucket, Role role,
               const BucketOwnerFn& owner_of) {
  std::optional<std::string> owner = owner_of(bucket);
  if (!owner) return;
  needs->push_back(Need{*owner, owner->empty() ? Role::kAdmin : role, bucket});
}

// The JSON API below `at` (seg[at] == "b"): bucket lists and inserts by ?project=,
// everything else by the bucket's owner; a rewrite or copy also writes its target.
std::vector<Need> JsonApiNeeds(const HttpRequest& r, const std::vector<std::string>& seg, size_t at,
                               const BucketOwnerFn& owner_of) {
  std::vector<Need> needs;
  const Role rw = IsRead(r) ? Role::kViewer : Role::kEditor;
  if (seg.size() == at + 1) {
    auto project = r.query.find("project");
    if (project == r.query.end() || project->second.empty()) return {Need{"", Role::kAdmin, ""}};
    return {Need{project->second, rw, ""}};
  }
  // Giving a bucket to a project (PATCH ?project=, `trainyard buckets assign`).
  if (seg.size() == at + 2 && r.method == "PATCH" && r.query.count("project") > 0) {
    return {Need{"", Role::kAdmin, ""}};
  }
  const bool to_other = seg.size() >= at + 7 &&
                        (seg[at + 4] == "rewriteTo" || seg[at + 4] == "copyTo") &&
                        seg[at + 5] == "b";
  AddBucket(&needs, seg[at + 1], to_other ? Role::kViewer : rw, owner_of);
  if (to_other) AddBucket(&needs, seg[at + 6], Role::kEditor, owner_of);
  return needs;
}

// entries:list names its projects in the body (POST) or the query (GET), as the
// route reads them (logging_endpoints.cc). A body the route cannot read needs
// nothing here: the route answers 400 before it reads an entry.
std::vector<Need> LoggingNeeds(const HttpRequest& r) {
  std::vector<std::string> names;
  if (r.method == "GET") {
    auto it = r.query.find("resourceNames");
    if (it != r.query.end() && !it->second.empty()) names.push_back(it->second);
  } else {
    Result<nlohmann::json> body = internal::BodyObject(r);
    if (!body.ok()) return {};
    for (const char* field : {"resourceNames", "projectIds"}) {
      auto it = body->find(field);
      if (it == body->end() || it->is_null()) continue;
      if (!it->is_array()) return {Need{"", Role::kAdmin, ""}};
      for (const auto& v : *it) {
        if (!v.is_string()) return {Need{"", Role::kAdmin, ""}};
        names.push_back(std::string(field) == "projectIds" ? "projects/" + v.get<std::string>()
                                                           : v.get<std::string>());
      }
    }
  }
  if (names.empty()) return {Need{"", Role::kAdmin, ""}};
  std::vector<Need> needs;
  for (const std::string& name : names) {
    const std::string project = name.rfind("projects/", 0) == 0 ? name.substr(9) : "";
    const bool plain = !project.empty() && project.find('/') == std::string::npos;
    needs.push_back(plain ? Need{project, Role::kViewer, ""} : Need{"", Role::kAdmin, ""});
  }
  return needs;
}

}  // namespace

std::vector<Need> NeedsOf(const HttpRequest& r, const BucketOwnerFn& owner_of) {
  const std::vector<std::string> seg = SplitPath(r.path);
  const Role rw = IsRead(r) ? Role::kViewer : Role::kEditor;
  const Need admin{"", Role::kAdmin, ""};
  if (seg.empty()) return {admin};
  // The storage routes, in the order RouteStorage tries them.
  if (SegmentsStartWith(seg, {"storage", "v1", "b"})) return JsonApiNeeds(r, seg, 2, owner_of);
  if (seg[0] == "b") return JsonApiNeeds(r, seg, 0, owner_of);
  for (auto [at, upload] : {std::pair<size_t, bool>{4, true}, {5, true}, {4, false}}) {
    const bool match =
        at == 5 ? SegmentsStartWith(seg, {"resumable", "upload", "storage", "v1", "b"})
                : SegmentsStartWith(seg, {upload ? "upload" : "download", "storage", "v1", "b"});
    if (!match) continue;
    if (seg.size() <= at) return {admin};
    std::vector<Need> needs;
    AddBucket(&needs, seg[at], upload ? Role::kEditor : Role::kViewer, owner_of);
    return needs;
  }
  if (seg.size() == 1 && seg[0] == "metrics") return {admin};
  if (seg.size() == 2 && seg[0] == "v2" && seg[1] == "entries:list") return LoggingNeeds(r);
  if (seg.size() >= 3 && (seg[0] == "v1" || seg[0] == "ui") && seg[1] == "projects") {
    return {Need{seg[2], rw, ""}};
  }
  // Path-style reads (GET /BUCKET/OBJECT) of a bucket that exists.
  if (IsRead(r) && seg.size() >= 2 && owner_of(seg[0])) {
    std::vector<Need> needs;
    AddBucket(&needs, seg[0], Role::kViewer, owner_of);
    return needs;
  }
  return {admin};  // Anything else is no project's: admins only (then 404).
}

// Who a request is where the gate is open (or for /healthz): no one in particular,
// allowed everything.
namespace {
auth::Principal Anyone() { return auth::Principal{"anyone", Role::kAdmin, {"*"}, {}, ""}; }
}  // namespace

Result<auth::Principal> Authenticate(const AccessGate& gate, const HttpRequest& request) {
  if (gate.replica) {
    const std::string credential = auth::ReplicaCredential(request.Header("authorization"));
    std::optional<auth::Principal> who = gate.replica(request.peer, credential);
    if (!who) {
      return PermissionDenied(credential.empty()
                                  ? "Permission denied: " + request.peer +
                                        " is not a replica of a running job"
                                  : "Permission denied: the credential is no running job's");
    }
    return *who;
  }
  if (gate.open()) return Anyone();
  const std::string token = auth::BearerToken(request.Header("authorization"));
  if (token.empty()) {
    return Status(
        StatusCode::kUnauthenticated,
        "Request is missing an access token: send \"Authorization: Bearer TOKEN\" (gcloud: "
        "`trainyard config gcloud --access-token-file FILE`; trainyard: --access-token-file "
        "or $TRAINYARD_TOKEN)");
  }
  std::optional<auth::Principal> who = gate.tokens->Identify(token);
  if (!who) {
    return Status(StatusCode::kUnauthenticated,
                  "Request had an invalid access token (none of the daemon's tokens)");
  }
  return *who;
}

Result<auth::Principal> AdmitAs(const AccessGate& gate, const HttpRequest& request,
                                const BucketOwnerFn& owner_of) {
  if (gate.open() || request.path == "/healthz") return Anyone();
  ASSIGN_OR_RETURN(auth::Principal who, Authenticate(gate, request));
  RETURN_IF_ERROR(auth::CheckNeeds(who, NeedsOf(request, owner_of)));
  return who;
}

Status Admit(const AccessGate& gate, const HttpRequest& request, const BucketOwnerFn& owner_of) {
  return AdmitAs(gate, request, owner_of).status();
}

}  // namespace ty::api
