// List filters: a scannerless recursive-descent parser over the filter text and an
// evaluator over model::Job. See list_filter.h for the grammar and fields.
//
// Precedence follows AIP-160 (https://google.aip.dev/160), which binds OR tighter
// than AND: `a AND b OR c` is `a AND (b OR c)`. Adjacent terms are joined by AND.
//
//   expression  = sequence { "AND" sequence }
//   sequence    = factor { factor }                  (implicit AND)
//   factor      = term { "OR" term }
//   term        = [ "NOT" | "-" ] simple
//   simple      = "(" expression ")" | restriction
//   restriction = field comparator value
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
#include "model/list_filter.h"

#include <cctype>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ty::model {

// Named, not anonymous: ListFilter::Node, declared in the header, holds them (gcc
// warns of a class with members of an anonymous namespace's types when the module
// is compiled as one unit).
namespace list_filter_internal {
enum class Op { kEq, kNe, kHas, kLt, kLe, kGt, kGe };
enum class Field { kDisplayName, kJobId, kState, kCreateTime, kLabel, kLabelsMap };
}  // namespace list_filter_internal
using list_filter_internal::Field;
using list_filter_internal::Op;

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

template <typename T>
bool Compare(Op op, const T& a, const T& b) {
  switch (op) {
    case Op::kEq:
    case Op::kHas:
      return a == b;
    case Op::kNe:
      return a != b;
    case Op::kLt:
      return a < b;
    case Op::kLe:
      return a <= b;
    case Op::kGt:
      return a > b;
    case Op::kGe:
      return a >= b;
  }
  return false;
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

// Vertex JobState names and numbers (client-wire.md §8) plus ml v1 names.
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

class Parser {
 public:
  Parser(Dialect dialect, std::string_view text) : dialect_(dialect), s_(text) {}

  Result<NodePtr> ParseAll() {
    SkipSpace();
    ASSIGN_OR_RETURN(NodePtr root, ParseExpression());
    SkipSpace();
    if (pos_ < s_.size()) return Unexpected();
    return root;
  }

 private:
  static bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
  static bool IsOperatorChar(char c) {
    return c == '=' || c == '!' || c == ':' || c == '<' || c == '>';
  }

  void SkipSpace() {
    while (pos_ < s_.size() && IsSpace(s_[pos_])) ++pos_;
  }

  // True (and consumes it) if `word` follows as a whole word: the next character
  // after it is a space, a parenthesis or the end.
  bool AcceptKeyword(std::string_view word) {
    SkipSpace();
    if (s_.substr(pos_, word.size()) != word) return false;
    size_t end = pos_ + word.size();
    if (end < s_.size() && !IsSpace(s_[end]) && s_[end] != '(') return false;
    pos_ = end;
    return true;
  }

  bool AtKeyword(std::string_view word) {
    size_t saved = pos_;
    bool at = AcceptKeyword(word);
    pos_ = saved;
    return at;
  }

  Status Unexpected() {
    if (pos_ >= s_.size()) return InvalidArgument("invalid filter: unexpected end of filter");
    size_t end = pos_;
    while (end < s_.size() && !IsSpace(s_[end])) ++end;
    return InvalidArgument("invalid filter: unexpected \"" +
                           std::string(s_.substr(pos_, end - pos_)) + "\" at position " +
                           std::to_string(pos_ + 1));
  }

  static NodePtr Join(Node::Kind kind, std::vector<NodePtr> parts) {
    if (parts.size() == 1) return parts[0];
    auto node = std::make_shared<Node>();
    node->kind = kind;
    node->children = std::move(parts);
    return node;
  }

  Result<NodePtr> ParseExpression() {
    std::vector<NodePtr> parts;
    ASSIGN_OR_RETURN(NodePtr first, ParseSequence());
    parts.push_back(std::move(first));
    while (AcceptKeyword("AND")) {
      ASSIGN_OR_RETURN(NodePtr next, ParseSequence());
      parts.push_back(std::move(next));
    }
    return Join(Node::Kind::kAnd, std::move(parts));
  }

  // Implicit AND: another factor follows unless we are at AND, `)` or the end.
  Result<NodePtr> ParseSequence() {
    std::vector<NodePtr> parts;
    ASSIGN_OR_RETURN(NodePtr first, ParseFactor());
    parts.push_back(std::move(first));
    while (true) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] == ')' || AtKeyword("AND")) break;
      ASSIGN_OR_RETURN(NodePtr next, ParseFactor());
      parts.push_back(std::move(next));
    }
    return Join(Node::Kind::kAnd, std::move(parts));
  }

  Result<NodePtr> ParseFactor() {
    std::vector<NodePtr> parts;
    ASSIGN_OR_RETURN(NodePtr first, ParseTerm());
    parts.push_back(std::move(first));
    while (AcceptKeyword("OR")) {
      ASSIGN_OR_RETURN(NodePtr next, ParseTerm());
      parts.push_back(std::move(next));
    }
    return Join(Node::Kind::kOr, std::move(parts));
  }

  Result<NodePtr> ParseTerm() {
    SkipSpace();
    bool negate = false;
    if (AcceptKeyword("NOT")) {
      negate = true;
    } else if (pos_ < s_.size() && s_[pos_] == '-') {
      ++pos_;
      negate = true;
    }
    if (++depth_ > kMaxDepth) return InvalidArgument("invalid filter: nested too deeply");
    Result<NodePtr> simple = ParseSimple();
    --depth_;
    if (!simple.ok() || !negate) return simple;
    auto node = std::make_shared<Node>();
    node->kind = Node::Kind::kNot;
    node->children.push_back(std::move(simple).value());
    return NodePtr(node);
  }

  Result<NodePtr> ParseSimple() {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '(') {
      ++pos_;
      ASSIGN_OR_RETURN(NodePtr inner, ParseExpression());
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ')') {
        if (pos_ >= s_.size()) return InvalidArgument("invalid filter: missing \")\"");
        return Unexpected();
      }
      ++pos_;
      return inner;
    }
    return ParseRestriction();
  }

  Result<NodePtr> ParseRestriction() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < s_.size() && !IsSpace(s_[pos_]) && !IsOperatorChar(s_[pos_]) && s_[pos_] != '(' &&
           s_[pos_] != ')') {
      ++pos_;
    }
    if (pos_ == start) return Unexpected();
    std::string name(s_.substr(start, pos_ - start));
    SkipSpace();
    Result<Op> op = ParseOperator();
    if (!op.ok()) {
      return InvalidArgument(
          "invalid filter: expected an operator (=, !=, :, <, <=, >, >=) after \"" + name + "\"");
    }
    SkipSpace();
    ASSIGN_OR_RETURN(std::string value, ParseValue());
    return MakeRestriction(name, *op, std::move(value));
  }

  Result<Op> ParseOperator() {
    auto take = [&](std::string_view tok, Op op) -> std::optional<Op> {
      if (s_.substr(pos_, tok.size()) != tok) return std::nullopt;
      pos_ += tok.size();
      return op;
    };
    // Longest first.
    for (auto [tok, op] : {std::pair<std::string_view, Op>{"!=", Op::kNe},
                           {"<=", Op::kLe},
                           {">=", Op::kGe},
                           {"=", Op::kEq},
                           {":", Op::kHas},
                           {"<", Op::kLt},
                           {">", Op::kGt}}) {
      if (auto got = take(tok, op)) return *got;
    }
    return InvalidArgument("no operator");
  }

  Result<std::string> ParseValue() {
    if (pos_ >= s_.size()) return InvalidArgument("invalid filter: missing value at the end");
    char quote = s_[pos_];
    if (quote == '"' || quote == '\'') {
      size_t open = pos_++;
      std::string out;
      while (pos_ < s_.size() && s_[pos_] != quote) {
        if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
        out += s_[pos_++];
      }
      if (pos_ >= s_.size()) {
        return InvalidArgument("invalid filter: unterminated string starting at position " +
                               std::to_string(open + 1));
      }
      ++pos_;
      return out;
    }
    size_t start = pos_;
    while (pos_ < s_.size() && !IsSpace(s_[pos_]) && s_[pos_] != '(' && s_[pos_] != ')') ++pos_;
    if (pos_ == start) return Unexpected();
    return std::string(s_.substr(start, pos_ - start));
  }

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

  static constexpr int kMaxDepth = 64;  // Bounds recursion on hostile input.

  Dialect dialect_;
  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

bool MatchString(Op op, const std::string& pattern, const std::string& actual) {
  if (op == Op::kHas) return WildcardMatch(pattern, actual);
  return Compare(op, actual, pattern);
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
      return Compare(n.op, job.create_time, n.time);
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
  bool blank = true;
  for (char c : text) blank = blank && std::isspace(static_cast<unsigned char>(c));
  if (blank) return ListFilter(nullptr, dialect);
  Parser parser(dialect, text);
  ASSIGN_OR_RETURN(NodePtr root, parser.ParseAll());
  return ListFilter(std::move(root), dialect);
}

bool ListFilter::Matches(const Job& job) const { return root_ == nullptr || Eval(*root_, job); }

}  // namespace ty::model
