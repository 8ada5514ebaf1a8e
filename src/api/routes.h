// The route table: one row per endpoint, {method, path pattern, dialect, access,
// handler}. A request is matched once, here, and the match carries the typed path
// parameters to the access gate (access.h reads the row's access) and to the handler.
// The rows themselves are in route_table.cc; Router::Handle (handlers.cc) runs them.
//
// Pattern syntax, one item per path segment:
//   literal        matches itself ("jobs", "storage")
//   {name}         one non-empty segment, bound to RouteParams::name; {collection}
//                  binds only a Vertex collection's name
//   {name=**}      the rest of the path (one or more segments, joined by '/'); last only
//   ...:verb       on the last segment of a row that is not Cloud Storage's: the path's
//                  last segment must end in ":verb" (a custom method, `%3A` decoded)
// Segments are percent-decoded before matching (api/query.h), so a value never
// spans two segments and "%2F" inside one stays inside its parameter.
//
// Pure; a RouteTable is immutable and safe to share between threads.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "auth/tokens.h"
#include "model/job.h"

namespace ty::api {

// Who speaks on a route; it picks the error shape and how a handler reads the request.
enum class ApiDialect {
  kOps,           // /healthz, /metrics, /admin/...: google.rpc errors.
  kRegistry,      // The registry's token service: Docker's protocol.
  kMlV1,          // AI Platform Training (ml v1).
  kVertex,        // Vertex AI (aiplatform v1), with the /ui operation polls.
  kLogging,       // Cloud Logging v2.
  kStorage,       // Cloud Storage JSON API: its own error shape, form-encoded queries.
  kArtifacts,     // Artifact Registry's repositories.
  kTensorboards,  // Vertex AI TensorBoard (aiplatform v1): google.rpc errors, as kVertex.
};

// Whose role a route needs (access.cc turns it into auth::Needs).
enum class Scope {
  kAnyone,        // No one in particular (/healthz): the gate admits every caller.
  kOwnAuth,       // The handler authenticates its callers itself (registry tokens).
  kAdmin,         // Admins only.
  kProject,       // The role on {project}.
  kProjectQuery,  // The role on ?project= (bucket lists and inserts); admins without one.
  kBucket,        // The role on {bucket}'s owner (admins for a bucket of no project).
  kBucketAssign,  // As kBucket, but giving a bucket to a project (?project=) is for admins.
  kBucketCopy,    // Viewer of {bucket}, and the role on {target_bucket}.
  kLogging,       // Viewer of each project entries:list names in its body or query.
};

struct Access {
  Scope scope = Scope::kAdmin;
  auth::Role role = auth::Role::kNone;  // kNone only with kAnyone and kOwnAuth.
};

// The path's parameters, by the names patterns use. Unused ones stay empty.
struct RouteParams {
  std::string project;
  std::string location;
  std::string collection;  // The Vertex collection's path name, as sent.
  model::VertexCollection vertex_collection = model::VertexCollection::kCustomJobs;
  std::string job;
  std::string operation;
  std::string repository;
  std::string tensorboard;
  std::string experiment;
  std::string run;
  std::string time_series;
  std::string asset;  // A console file's path below /console/.
  std::string bucket;
  std::string object;
  std::string target_bucket;
  std::string target_object;
};

namespace internal {
struct RouteCall;  // What a handler gets (endpoints.h).
}  // namespace internal
struct Dispatch;  // What it answers (handlers.h).
using RouteHandler = Dispatch (*)(const internal::RouteCall& call);

struct Route {
  std::string method;   // "GET", "POST", ...
  std::string pattern;  // "/v1/projects/{project}/jobs/{job}:cancel"
  ApiDialect dialect = ApiDialect::kOps;
  Access access;
  RouteHandler handler = nullptr;
  // Served on the replica listener too (Cloud Storage, Logging, /healthz).
  bool on_replica_listener = false;
  // Only when {bucket} exists (path-style reads, GET /BUCKET/OBJECT), so a bucket can
  // never take a path that is not one.
  bool bucket_must_exist = false;
  // The body is an upload's bytes: spooled to a staging file, never held in memory.
  bool spools_body = false;
};

struct RouteMatch {
  const Route* route = nullptr;  // Null: no row serves this method at this path.
  // The first row whose pattern takes the path with another method: the request is
  // answered 404 in that row's dialect, after the gate asks that row's access.
  const Route* path_only = nullptr;
  RouteParams params;
  // The row that decides the error shape and the access: `route`, else `path_only`.
  const Route* shaping() const { return route != nullptr ? route : path_only; }
};

class RouteTable {
 public:
  explicit RouteTable(std::vector<Route> rows);

  using BucketExists = std::function<bool(const std::string& bucket)>;
  // The first row whose method and pattern take the raw (still percent-encoded) path.
  // `bucket_exists` answers for rows with `bucket_must_exist` (null: none exists).
  RouteMatch Match(const std::string& method, const std::string& path,
                   const BucketExists& bucket_exists = nullptr) const;

  const std::vector<Route>& rows() const { return rows_; }
  // A line per row that cannot serve (a pattern that does not parse, an unknown
  // parameter name, a missing role or handler, a repeated method and pattern). Such a
  // row never matches; the table's test asserts there are none.
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  struct Segment {
    enum Kind { kLiteral, kParam, kRest } kind = kLiteral;
    std::string text;  // The literal, or the parameter's name.
  };
  struct Compiled {
    std::vector<Segment> segments;
    std::string verb;  // After ':' on the last segment; "" for none.
    bool valid = false;
  };
  Compiled Compile(const Route& row, std::string* problem) const;
  bool Takes(const Route& row, const Compiled& compiled, const std::vector<std::string>& path,
             const std::string& verb, RouteParams* params) const;

  std::vector<Route> rows_;
  std::vector<Compiled> compiled_;
  std::vector<std::string> problems_;
};

// The table the daemon serves (route_table.cc): every endpoint of every dialect.
const RouteTable& ServiceRoutes();

}  // namespace ty::api
