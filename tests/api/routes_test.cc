// The route table (api/routes.h): every row well formed and given a role, and each
// request matched once to the row that serves it, with its typed parameters.
#include "api/routes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "api/endpoints.h"

namespace ty::api {
namespace {

using auth::Role;

Dispatch Nothing(const internal::RouteCall&) { return Dispatch{}; }

// The pattern of the row that serves `method path` ("404" when none; "405 PATTERN"
// when a row takes the path with another method).
std::string RowFor(const RouteTable& table, const std::string& method, const std::string& path) {
  const RouteMatch m =
      table.Match(method, path, [](const std::string& b) { return b == "a-data"; });
  if (m.route != nullptr) return m.route->pattern;
  if (m.path_only != nullptr) return "405 " + m.path_only->pattern;
  return "404";
}

TEST(RouteTableTest, EveryRowParsesNamesARoleAndIsServedOnce) {
  const RouteTable& table = ServiceRoutes();
  EXPECT_THAT(table.problems(), testing::IsEmpty());
  std::set<std::string> seen;
  for (const Route& row : table.rows()) {
    SCOPED_TRACE(row.method + " " + row.pattern);
    EXPECT_NE(row.handler, nullptr);
    const bool anyone = row.access.scope == Scope::kAnyone || row.access.scope == Scope::kOwnAuth;
    // A row that must name a role names one; writes need an editor at least (Logging's
    // POST entries:list only reads).
    if (!anyone) {
      EXPECT_NE(row.access.role, Role::kNone);
    }
    if (!anyone && row.method != "GET" && row.dialect != ApiDialect::kLogging) {
      EXPECT_GE(row.access.role, Role::kEditor);
    }
    EXPECT_TRUE(seen.insert(row.method + " " + row.pattern).second);
  }
  EXPECT_GT(table.rows().size(), 50u);
}

TEST(RouteTableTest, ABadRowIsNamedAndNeverMatches) {
  const RouteTable table({
      {"GET", "/a/{job}", ApiDialect::kOps, {Scope::kProject, Role::kNone}, Nothing},
      {"GET", "/b/{nonsense}", ApiDialect::kOps, {Scope::kAdmin, Role::kAdmin}, Nothing},
      {"GET", "/c/{object=**}/d", ApiDialect::kStorage, {Scope::kAdmin, Role::kAdmin}, Nothing},
      {"GET", "/e", ApiDialect::kOps, {Scope::kAdmin, Role::kAdmin}, nullptr},
      {"GET", "/f", ApiDialect::kOps, {Scope::kAnyone, Role::kAdmin}, Nothing},
      {"GET", "/g", ApiDialect::kOps, {Scope::kAdmin, Role::kAdmin}, Nothing},
      {"GET", "/g", ApiDialect::kOps, {Scope::kAdmin, Role::kAdmin}, Nothing},
      {"GET", "/h{x}", ApiDialect::kOps, {Scope::kAdmin, Role::kAdmin}, Nothing},
  });
  EXPECT_THAT(
      table.problems(),
      testing::ElementsAre(
          testing::HasSubstr("/a/{job}: no role"),
          testing::HasSubstr("no parameter named nonsense"), testing::HasSubstr("must come last"),
          testing::HasSubstr("/e: no handler"), testing::HasSubstr("a role its scope cannot use"),
          testing::HasSubstr("/g: served twice"), testing::HasSubstr("must be a whole segment")));
  EXPECT_EQ(RowFor(table, "GET", "/a/x"), "404");
  EXPECT_EQ(RowFor(table, "GET", "/e"), "404");
  EXPECT_EQ(RowFor(table, "GET", "/g"), "/g");  // The first of the two still serves.
}

TEST(RouteTableTest, EachRequestFindsItsRow) {
  const RouteTable& t = ServiceRoutes();
  EXPECT_EQ(RowFor(t, "GET", "/healthz"), "/healthz");
  EXPECT_EQ(RowFor(t, "POST", "/v2/entries:list"), "/v2/entries:list");
  EXPECT_EQ(RowFor(t, "GET", "/v1/projects/p/jobs"), "/v1/projects/{project}/jobs");
  EXPECT_EQ(RowFor(t, "POST", "/v1/projects/p/jobs/j%3Acancel"),
            "/v1/projects/{project}/jobs/{job}:cancel");
  EXPECT_EQ(RowFor(t, "POST", "/v1/projects/p/jobs/j:stop"), "404");
  EXPECT_EQ(RowFor(t, "GET", "/v1/projects/p/jobs/j:cancel"),
            "405 /v1/projects/{project}/jobs/{job}:cancel");
  EXPECT_EQ(RowFor(t, "PUT", "/v1/projects/p/jobs"), "405 /v1/projects/{project}/jobs");
  EXPECT_EQ(RowFor(t, "DELETE", "/v1/projects/p/locations/l/customJobs/j"),
            "/v1/projects/{project}/locations/{location}/{collection}/{job}");
  EXPECT_EQ(RowFor(t, "GET", "/v1/projects/p/locations/l/otherJobs/j"), "404");
  EXPECT_EQ(
      RowFor(t, "GET", "/ui/projects/p/locations/l/customJobs/j/operations/o"),
      "/ui/projects/{project}/locations/{location}/{collection}/{job}/operations/{operation}");
  EXPECT_EQ(RowFor(t, "GET", "/ui/projects/p/jobs"), "404");
  EXPECT_EQ(RowFor(t, "GET", "/storage/v1/b/a-data/o/x"), "/storage/v1/b/{bucket}/o/{object}");
  EXPECT_EQ(RowFor(t, "POST", "/b/a-data/o/x/rewriteTo/b/other/o/y"),
            "/b/{bucket}/o/{object}/rewriteTo/b/{target_bucket}/o/{target_object}");
  EXPECT_EQ(RowFor(t, "PUT", "/resumable/upload/storage/v1/b/a-data/o"),
            "/resumable/upload/storage/v1/b/{bucket}/o");
  // Path-style reads take a path only for a bucket that exists, and only after every
  // other row: a bucket named like a route never shadows it.
  EXPECT_EQ(RowFor(t, "GET", "/a-data/dir/file"), "/{bucket}/{object=**}");
  EXPECT_EQ(RowFor(t, "GET", "/no-bucket/file"), "404");
  EXPECT_EQ(RowFor(t, "GET", "/"), "404");
}

TEST(RouteTableTest, ParametersArriveDecodedAndTyped) {
  const RouteTable& t = ServiceRoutes();
  RouteMatch m = t.Match("GET",
                         "/v1/projects/example.com:p/locations/us-central1/"
                         "hyperparameterTuningJobs/42/details");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.route->dialect, ApiDialect::kVertex);
  EXPECT_EQ(m.params.project, "example.com:p");  // Only the last segment has a verb.
  EXPECT_EQ(m.params.location, "us-central1");
  EXPECT_EQ(m.params.vertex_collection, model::VertexCollection::kHyperparameterTuningJobs);
  EXPECT_EQ(m.params.job, "42");
  // Object names keep their ':' and '/' (Cloud Storage rows have no custom verbs).
  m = t.Match("GET", "/storage/v1/b/bkt/o/logs%2Frun%3A1");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.params.bucket, "bkt");
  EXPECT_EQ(m.params.object, "logs/run:1");
  m = t.Match("GET", "/bkt/a/b%20c", [](const std::string&) { return true; });
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.params.object, "a/b c");
  // A dot-dot project is a parameter like any other; the handler refuses it (400).
  m = t.Match("GET", "/v1/projects/..%2fq/jobs");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.params.project, "../q");
}

}  // namespace
}  // namespace ty::api
