#include "api/routes.h"

#include <set>
#include <utility>

#include "api/query.h"

namespace ty::api {

namespace {

// Where each pattern parameter lands in RouteParams.
std::string* ParamField(RouteParams* p, const std::string& name) {
  if (name == "project") return &p->project;
  if (name == "location") return &p->location;
  if (name == "collection") return &p->collection;
  if (name == "job") return &p->job;
  if (name == "operation") return &p->operation;
  if (name == "repository") return &p->repository;
  if (name == "tensorboard") return &p->tensorboard;
  if (name == "experiment") return &p->experiment;
  if (name == "run") return &p->run;
  if (name == "time_series") return &p->time_series;
  if (name == "asset") return &p->asset;
  if (name == "bucket") return &p->bucket;
  if (name == "object") return &p->object;
  if (name == "target_bucket") return &p->target_bucket;
  if (name == "target_object") return &p->target_object;
  return nullptr;
}

std::optional<model::VertexCollection> CollectionNamed(const std::string& name) {
  for (auto c :
       {model::VertexCollection::kCustomJobs, model::VertexCollection::kHyperparameterTuningJobs,
        model::VertexCollection::kTrainingPipelines}) {
    if (name == model::CollectionName(c)) return c;
  }
  return std::nullopt;
}

// Custom methods ("jobs/123:cancel") are a suffix of the last segment. Only the last,
// so a domain-scoped project ("example.com:p") stays whole. Cloud Storage has none:
// its object names may hold ':' anywhere.
bool SplitsVerb(const Route& row) { return row.dialect != ApiDialect::kStorage; }

std::string CutVerb(std::string* last) {
  const size_t colon = last->rfind(':');
  if (colon == std::string::npos) return "";
  std::string verb = last->substr(colon + 1);
  last->resize(colon);
  return verb;
}

bool NeedsRole(Scope scope) { return scope != Scope::kAnyone && scope != Scope::kOwnAuth; }

}  // namespace

RouteTable::RouteTable(std::vector<Route> rows) : rows_(std::move(rows)) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const Route& row : rows_) {
    std::string problem;
    Compiled compiled = Compile(row, &problem);
    if (!seen.insert({row.method, row.pattern}).second) problem = "served twice";
    if (!problem.empty()) {
      compiled.valid = false;
      problems_.push_back(row.method + " " + row.pattern + ": " + problem);
    }
    compiled_.push_back(std::move(compiled));
  }
}

RouteTable::Compiled RouteTable::Compile(const Route& row, std::string* problem) const {
  Compiled out;
  if (row.handler == nullptr) *problem = "no handler";
  if (NeedsRole(row.access.scope) == (row.access.role == auth::Role::kNone)) {
    *problem = NeedsRole(row.access.scope) ? "no role" : "a role its scope cannot use";
  }
  if (row.pattern.empty() || row.pattern[0] != '/') *problem = "the pattern must start with '/'";
  std::vector<std::string> parts;
  for (size_t start = 1; start <= row.pattern.size();) {
    size_t end = row.pattern.find('/', start);
    if (end == std::string::npos) end = row.pattern.size();
    if (end > start) parts.push_back(row.pattern.substr(start, end - start));
    start = end + 1;
  }
  if (!parts.empty() && SplitsVerb(row)) out.verb = CutVerb(&parts.back());
  RouteParams probe;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    Segment segment;
    if (part.size() > 2 && part.front() == '{' && part.back() == '}') {
      std::string name = part.substr(1, part.size() - 2);
      segment.kind = Segment::kParam;
      if (name.size() > 3 && name.compare(name.size() - 3, 3, "=**") == 0) {
        name.resize(name.size() - 3);
        segment.kind = Segment::kRest;
        if (i + 1 != parts.size()) *problem = "{" + name + "=**} must come last";
      }
      if (ParamField(&probe, name) == nullptr) *problem = "no parameter named " + name;
      segment.text = name;
    } else if (part.find_first_of("{}") != std::string::npos) {
      *problem = "a parameter must be a whole segment: " + part;
    } else {
      segment.text = part;
    }
    out.segments.push_back(std::move(segment));
  }
  if (row.bucket_must_exist && row.pattern.find("{bucket}") == std::string::npos) {
    *problem = "bucket_must_exist without {bucket}";
  }
  out.valid = problem->empty();
  return out;
}

bool RouteTable::Takes(const Route& row, const Compiled& compiled,
                       const std::vector<std::string>& path, const std::string& verb,
                       RouteParams* params) const {
  const std::vector<Segment>& want = compiled.segments;
  const bool rest = !want.empty() && want.back().kind == Segment::kRest;
  if (rest ? path.size() < want.size() : path.size() != want.size()) return false;
  if (verb != compiled.verb) return false;
  RouteParams p;
  for (size_t i = 0; i < want.size(); ++i) {
    const Segment& s = want[i];
    if (s.kind == Segment::kLiteral) {
      if (path[i] != s.text) return false;
      continue;
    }
    std::string value = path[i];
    if (s.kind == Segment::kRest) {
      for (size_t j = i + 1; j < path.size(); ++j) value += "/" + path[j];
    }
    if (value.empty()) return false;
    if (s.text == "collection") {
      std::optional<model::VertexCollection> c = CollectionNamed(value);
      if (!c) return false;
      p.vertex_collection = *c;
    }
    *ParamField(&p, s.text) = std::move(value);
  }
  *params = std::move(p);
  return true;
}

RouteMatch RouteTable::Match(const std::string& method, const std::string& path,
                             const BucketExists& bucket_exists) const {
  const std::vector<std::string> whole = SplitPath(path);
  std::vector<std::string> cut = whole;  // The same with the last segment's verb cut off.
  const std::string verb = cut.empty() ? "" : CutVerb(&cut.back());
  RouteMatch match;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Route& row = rows_[i];
    if (!compiled_[i].valid) continue;
    RouteParams params;
    const bool split = SplitsVerb(row);
    if (!Takes(row, compiled_[i], split ? cut : whole, split ? verb : "", &params)) continue;
    if (row.bucket_must_exist && (!bucket_exists || !bucket_exists(params.bucket))) continue;
    if (row.method == method) {
      match.route = &row;
      match.params = std::move(params);
      return match;
    }
    if (match.path_only == nullptr) {
      match.path_only = &row;
      match.params = std::move(params);
    }
  }
  return match;
}

}  // namespace ty::api
