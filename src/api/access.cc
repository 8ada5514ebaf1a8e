#include "api/access.h"

#include <nlohmann/json.hpp>

#include "api/endpoints.h"
#include "auth/replica_credentials.h"

namespace ty::api {

namespace {

using auth::Need;
using auth::Role;

// A need on `bucket` at `role`, from its owner; nothing for a bucket that does not
// exist (its route answers 404), an admin for one no project owns.
void AddBucket(std::vector<Need>* needs, const std::string& bucket, Role role,
               const BucketOwnerFn& owner_of) {
  std::optional<std::string> owner = owner_of(bucket);
  if (!owner) return;
  needs->push_back(Need{*owner, owner->empty() ? Role::kAdmin : role, bucket});
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

std::vector<Need> NeedsOf(const RouteMatch& match, const HttpRequest& r,
                          const BucketOwnerFn& owner_of) {
  const Need admin{"", Role::kAdmin, ""};
  const Route* row = match.shaping();
  if (row == nullptr) return {admin};  // Anything else is no project's (then 404).
  const RouteParams& p = match.params;
  const Role role = row->access.role;
  std::vector<Need> needs;
  switch (row->access.scope) {
    case Scope::kAnyone:
    case Scope::kOwnAuth:
      return {};
    case Scope::kAdmin:
      return {admin};
    case Scope::kProject:
      return {Need{p.project, role, ""}};
    case Scope::kProjectQuery: {
      auto project = r.query.find("project");
      if (project == r.query.end() || project->second.empty()) return {admin};
      return {Need{project->second, role, ""}};
    }
    case Scope::kBucketAssign:
      // Giving a bucket to a project (PATCH ?project=, `trainyard buckets assign`).
      if (r.query.count("project") > 0) return {admin};
      [[fallthrough]];
    case Scope::kBucket:
      AddBucket(&needs, p.bucket, role, owner_of);
      return needs;
    case Scope::kBucketCopy:
      AddBucket(&needs, p.bucket, Role::kViewer, owner_of);
      AddBucket(&needs, p.target_bucket, role, owner_of);
      return needs;
    case Scope::kLogging:
      return LoggingNeeds(r);
  }
  return {admin};
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

Result<auth::Principal> Admit(const AccessGate& gate, const RouteMatch& match,
                              const HttpRequest& request, const BucketOwnerFn& owner_of) {
  if (gate.open()) return Anyone();
  const Route* row = match.shaping();
  if (row != nullptr && row->access.scope == Scope::kAnyone) {
    Result<auth::Principal> who = Authenticate(gate, request);
    return who.ok() ? *who : auth::Principal{"nobody", Role::kNone, {}, {}, ""};
  }
  ASSIGN_OR_RETURN(auth::Principal who, Authenticate(gate, request));
  RETURN_IF_ERROR(auth::CheckNeeds(who, NeedsOf(match, request, owner_of)));
  return who;
}

}  // namespace ty::api
