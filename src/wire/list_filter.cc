// List filters: the one filter engine (filter/filter_syntax.h) parses them with the
// table below; this file binds the tree to model::Job's fields and evaluates it. See
// list_filter.h for the fields.
//
// Precedence follows AIP-160 (https://google.aip.dev/160), which binds OR tighter
// than AND: `a AND b OR c` is `a AND (b OR c)`. Adjacent terms are joined by AND.
//
// Semantics chosen where the public docs are silent:
//   * `:` on a string is a case-insensitive match where `*` matches any run of
//     characters (`jobId:census*`, `display_name:"my_job_*"`); without `*` it is a
//     case-insensitive equality. `=` / `!=` are exact and case-sensitive (AIP-160).
//   * `labels.k:*` (quoted or not) tests that the key exists; `labels:k` does too.
//     `labels.k=v` on a job without key k is false and `labels.k!=v` is true.
//   * `state` takes either dialect's names (`JOB_STATE_FAILED`, `FAILED`), Vertex
//     numbers (`5`), case-insensitively; only `=`, `!=` and `:` (equality) apply.
//     Vertex states Trainyard never uses (PAUSED, EXPIRED, ...) are valid and match
//     nothing. Vertex PENDING is our PREPARING.
//   * Times accept RFC 3339, and also `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM` and a missing
//     zone (taken as UTC), because the ml docs show `createTime>2017-01-15T19:00`.
//   * Backslash in a quoted value escapes the next character; there is no way to
//     match a literal `*` with `:`.
#include "wire/list_filter.h"

#include <cctype>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "filter/filter_syntax.h"

namespace ty::wire {

using namespace model;  // The domain the wire dialects read and write.

// Named, not anonymous: ListFilter::Node, declared in the header, holds them (gcc
// warns of a class with members of an anonymous namespace's types when the module
// is compiled as one unit).
namespace list_filter_internal {
enum class Field { kDisplayName, kJobId, kState, kCreateTime, kLabel, kLabelsMap };
}  // namespace list_filter_internal
using filter::Op;
using list_filter_internal::Field;

namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Case-insensitive glob where `*` matches any run (possibly empty) of characters.
// Iterative with one backtrack point: linear enough for filter-sized patterns.
bool WildcardMatch(std::string_view pattern, std::string_view text) {
  auto eq = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  };
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && eq(pattern[p], text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool IsDigits(std::string_view s, size_t from, size_t n) {
  if (s.size() < from + n) return false;
  for (size_t i = from; i < from + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// RFC 3339, plus the shortened forms the ml docs show (see the file comment).
Result<TimeMicros> ParseFilterTime(const std::string& text) {
  auto parsed = ParseRfc3339(text);
  if (parsed.ok()) return parsed;
  std::string s = text;
  if (s.size() == 10 && IsDigits(s, 0, 4) && s[4] == '-' && s[7] == '-') s += "T00:00:00";
  if (s.size() == 16 && s[10] == 'T' && s[13] == ':') s += ":00";
  bool has_zone =
      !s.empty() && (s.back() == 'Z' || s.back() == 'z' ||
                     (s.size() > 19 && (s[s.size() - 6] == '+' || s[s.size() - 6] == '-')));
  if (!has_zone) s += "Z";
  parsed = ParseRfc3339(s);
  if (parsed.ok()) return parsed;
  return InvalidArgument("invalid filter: \"" + text +
                         "\" is not an RFC 3339 time (e.g. \"2021-05-18T00:00:00Z\")");
}

// A `state` filter value: `valid` false for an unknown name; `state` empty for a
// valid Vertex state that Trainyard never enters.
struct StateValue {
  bool valid = false;
  std::optional<JobState> state;
};
StateValue Known(JobState s) { return {true, s}; }
StateValue Unused() { return {true, std::nullopt}; }

// Vertex JobState names and numbers (docs/contracts/client-wire.md §8) plus ml v1 names.
StateValue ParseStateValue(const std::string& raw) {
  std::string v = Upper(raw);
  static const char* const kVertexOnly[] = {"PAUSED", "EXPIRED", "UPDATING", "PARTIALLY_SUCCEEDED"};
  // Numbers: JOB_STATE_UNSPECIFIED=0 ... CANCELLED=7, then the unused ones 8..11.
  if (!v.empty() && IsDigits(v, 0, v.size()) && v.size() <= 2) {
    int n = std::stoi(v);
    static const JobState kByNumber[] = {
        JobState::kUnspecified, JobState::kQueued, JobState::kPreparing,  JobState::kRunning,
        JobState::kSucceeded,   JobState::kFailed, JobState::kCancelling, JobState::kCancelled};
    if (n < 8) return Known(kByNumber[n]);
    if (n <= 11) return Unused();
    return {};
  }
  // trainingPipelines name the same states PIPELINE_STATE_* (PAUSED unused here).
  const size_t prefix = v.rfind("JOB_STATE_", 0) == 0        ? 10
                        : v.rfind("PIPELINE_STATE_", 0) == 0 ? 15
                                                             : 0;
  if (prefix > 0) {
    v = v.substr(prefix);
    if (v == "PENDING") return Known(JobState::kPreparing);
    if (v == "PREPARING") return {};  // Not a Vertex name.
    for (const char* name : kVertexOnly) {
      if (v == name) return Unused();
    }
  } else if (v == "PENDING") {
    return Known(JobState::kPreparing);
  }
  if (v == "UNSPECIFIED") v = "STATE_UNSPECIFIED";
  auto state = JobStateFromName(v);
  if (!state) return {};
  return Known(*state);
}

}  // namespace

struct ListFilter::Node {
  enum class Kind { kAnd, kOr, kNot, kRestriction };
  Kind kind = Kind::kRestriction;
  std::vector<std::shared_ptr<const Node>> children;  // kAnd, kOr: 2+; kNot: 1.

  // kRestriction only.
  Field field = Field::kDisplayName;
  std::string label_key;  // kLabel.
  Op op = Op::kEq;
  std::string value;
  bool exists_test = false;       // `labels.k:*`.
  TimeMicros time = 0;            // kCreateTime.
  std::optional<JobState> state;  // kState; empty = a state we never use.
};

namespace {

using NodePtr = std::shared_ptr<const ListFilter::Node>;
using Node = ListFilter::Node;

}  // namespace

const filter::FilterGrammar& ListFilterGrammar() {
  static const filter::FilterGrammar g = [] {
    filter::FilterGrammar g;
    g.operators = {{"!=", Op::kNe}, {"<=", Op::kLe}, {">=", Op::kGe}, {"=", Op::kEq},
                   {":", Op::kHas}, {"<", Op::kLt},  {">", Op::kGt}};
    g.single_quotes = true;
    g.value_runs_to_space = true;
    g.max_depth = 64;  // Bounds recursion on hostile input.
    g.error_style = filter::FilterGrammar::ErrorStyle::kListFilter;
    return g;
  }();
  return g;
}

namespace {

// The engine's tree bound to a dialect's job fields.
class Binder {
 public:
  explicit Binder(Dialect dialect) : dialect_(dialect) {}

  Result<NodePtr> Bind(const filter::FilterExpr& e) {
    using Kind = filter::FilterExpr::Kind;
    if (e.kind == Kind::kCompare) return MakeRestriction(e.field, e.op, e.value);
    if (e.kind == Kind::kSearch)
      return InvalidArgument("invalid filter: \"" + e.value + "\" has no operator");
    auto node = std::make_shared<Node>();
    node->kind = e.kind == Kind::kAnd  ? Node::Kind::kAnd
                 : e.kind == Kind::kOr ? Node::Kind::kOr
                                       : Node::Kind::kNot;
    for (const filter::FilterExpr& c : e.children) {
      ASSIGN_OR_RETURN(NodePtr child, Bind(c));
      node->children.push_back(std::move(child));
    }
    return NodePtr(node);
  }

 private:
  Status Unsupported(const std::string& name) {
    return InvalidArgument("unsupported filter field \"" + name + "\" (supported: " +
                           (dialect_ == Dialect::kVertex
                                ? "display_name, state, create_time, labels.KEY"
                                : "jobId, state, createTime, labels.KEY") +
                           ")");
  }

  Result<NodePtr> MakeRestriction(const std::string& name, Op op, std::string value) {
    auto node = std::make_shared<Node>();
    node->op = op;
    node->value = std::move(value);
    bool vertex = dialect_ == Dialect::kVertex;
    if (name.rfind("labels.", 0) == 0 && name.size() > 7) {
      node->field = Field::kLabel;
      node->label_key = name.substr(7);
      node->exists_test = op == Op::kHas && node->value == "*";
    } else if (name == "labels") {
      if (op != Op::kHas) {
        return InvalidArgument("invalid filter: use labels.KEY or labels:KEY, not labels" +
                               std::string(op == Op::kEq ? "=" : " with this operator"));
      }
      node->field = Field::kLabelsMap;
    } else if (name == "state") {
      node->field = Field::kState;
      if (op != Op::kEq && op != Op::kNe && op != Op::kHas) {
        return InvalidArgument("invalid filter: state supports only =, != and :");
      }
      StateValue state = ParseStateValue(node->value);
      if (!state.valid) {
        return InvalidArgument(
            "invalid filter: unknown state \"" + node->value + "\"" +
            (vertex ? " (expected e.g. JOB_STATE_SUCCEEDED)" : " (expected e.g. SUCCEEDED)"));
      }
      node->state = state.state;
    } else if (name == "create_time" || name == "createTime") {
      node->field = Field::kCreateTime;
      ASSIGN_OR_RETURN(node->time, ParseFilterTime(node->value));
    } else if (vertex && (name == "display_name" || name == "displayName")) {
      node->field = Field::kDisplayName;
    } else if (!vertex && (name == "jobId" || name == "job_id")) {
      node->field = Field::kJobId;
    } else {
      return Unsupported(name);
    }
    return NodePtr(node);
  }

  Dialect dialect_;
};

bool MatchString(Op op, const std::string& pattern, const std::string& actual) {
  if (op == Op::kHas) return WildcardMatch(pattern, actual);
  return filter::Ordered(op, actual, pattern);
}

bool Eval(const Node& n, const Job& job) {
  switch (n.kind) {
    case Node::Kind::kAnd:
      for (const auto& c : n.children) {
        if (!Eval(*c, job)) return false;
      }
      return true;
    case Node::Kind::kOr:
      for (const auto& c : n.children) {
        if (Eval(*c, job)) return true;
      }
      return false;
    case Node::Kind::kNot:
      return !Eval(*n.children[0], job);
    case Node::Kind::kRestriction:
      break;
  }
  switch (n.field) {
    case Field::kDisplayName:
      return MatchString(n.op, n.value, job.spec.display_name);
    case Field::kJobId:
      return MatchString(n.op, n.value, job.spec.job_id);
    case Field::kState: {
      bool equal = n.state.has_value() && *n.state == job.state;
      return n.op == Op::kNe ? !equal : equal;
    }
    case Field::kCreateTime:
      return filter::Ordered(n.op, job.create_time, n.time);
    case Field::kLabelsMap:
      return job.spec.labels.count(n.value) > 0;
    case Field::kLabel: {
      auto it = job.spec.labels.find(n.label_key);
      if (n.exists_test) return it != job.spec.labels.end();
      if (it == job.spec.labels.end()) return n.op == Op::kNe;
      return MatchString(n.op, n.value, it->second);
    }
  }
  return false;
}

}  // namespace

Result<ListFilter> ListFilter::Parse(Dialect dialect, std::string_view text) {
  ASSIGN_OR_RETURN(filter::FilterExpr expr, filter::ParseFilter(ListFilterGrammar(), text));
  if (expr.kind == filter::FilterExpr::Kind::kAnd && expr.children.empty()) {
    return ListFilter(nullptr, dialect);  // Blank: everything.
  }
  ASSIGN_OR_RETURN(NodePtr root, Binder(dialect).Bind(expr));
  return ListFilter(std::move(root), dialect);
}

bool ListFilter::Matches(const Job& job) const { return root_ == nullptr || Eval(*root_, job); }

}  // namespace ty::wire
