#include "logs/log_filter.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <vector>

#include "filter/filter_syntax.h"

namespace ty::logs {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxFilterChars = 20000;   // Google's documented limit.
constexpr int kMaxDepth = 64;               // Nesting a stack can afford.
constexpr double kMaxSeverityNumber = 1e6;  // Far above EMERGENCY (800).

constexpr std::array<std::pair<const char*, int>, 9> kSeverities = {{{"DEFAULT", 0},
                                                                     {"DEBUG", 100},
                                                                     {"INFO", 200},
                                                                     {"NOTICE", 300},
                                                                     {"WARNING", 400},
                                                                     {"ERROR", 500},
                                                                     {"CRITICAL", 600},
                                                                     {"ALERT", 700},
                                                                     {"EMERGENCY", 800}}};

// The LogEntry fields a filter may start with (REST LogEntry, docs/contracts/cloud-logging-v2.md
// §2).
constexpr std::array<const char*, 21> kEntryFields = {
    "logName",      "resource",       "timestamp", "receiveTimestamp", "severity", "insertId",
    "labels",       "httpRequest",    "metadata",  "operation",        "trace",    "spanId",
    "traceSampled", "sourceLocation", "split",     "errorGroups",      "apphub",   "textPayload",
    "jsonPayload",  "protoPayload",   "log_id"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

using filter::Op;

// ---- The expression --------------------------------------------------------------

struct LogFilter::Node {
  enum class Kind { kAnd, kOr, kNot, kCompare, kSearch } kind = Kind::kAnd;
  std::vector<std::shared_ptr<const Node>> children;
  // kCompare: path Op value. kSearch: `value` anywhere.
  std::vector<std::string> path;
  Op op = Op::kEq;
  std::string value;
  std::string value_lower;
  std::optional<TimeMicros> time;  // For timestamp fields.
  std::optional<int> severity;     // For `severity`.
  std::optional<double> number;    // When the value reads as a number.

  bool Matches(const json& entry) const;
  bool CompareField(const json& field) const;
  bool CompareString(const std::string& s) const;
};

namespace {

using NodePtr = std::shared_ptr<const LogFilter::Node>;
using Node = LogFilter::Node;

bool AnyStringContains(const json& j, const std::string& needle_lower) {
  if (j.is_string())
    return Lower(j.get_ref<const std::string&>()).find(needle_lower) != std::string::npos;
  if (j.is_object() || j.is_array()) {
    for (const auto& v : j) {
      if (AnyStringContains(v, needle_lower)) return true;
    }
    return false;
  }
  if (j.is_number() || j.is_boolean())
    return Lower(j.dump()).find(needle_lower) != std::string::npos;
  return false;
}

const json* Lookup(const json& entry, const std::vector<std::string>& path) {
  const json* at = &entry;
  for (const std::string& key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

bool IsTimeField(const std::vector<std::string>& path) {
  return path.size() == 1 && (path[0] == "timestamp" || path[0] == "receiveTimestamp");
}

bool IsSeverity(const std::vector<std::string>& path) {
  return path.size() == 1 && path[0] == "severity";
}

std::optional<double> ReadNumber(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

bool Node::CompareString(const std::string& s) const {
  switch (op) {
    case Op::kHas:
      return Lower(s).find(value_lower) != std::string::npos;
    default:
      return filter::Ordered(op, Lower(s), value_lower);
  }
}

bool Node::CompareField(const json& field) const {
  if (op == Op::kPresent) return true;
  if (field.is_array()) {
    return std::any_of(field.begin(), field.end(), [&](const json& e) { return CompareField(e); });
  }
  if (field.is_object()) return op == Op::kHas && AnyStringContains(field, value_lower);
  if (field.is_null()) return false;
  if (time && field.is_string() && op != Op::kHas) {
    Result<TimeMicros> t = ParseRfc3339(field.get_ref<const std::string&>());
    return t.ok() && filter::Ordered(op, *t, *time);
  }
  if (severity && field.is_string() && op != Op::kHas) {
    std::optional<int> level = SeverityLevel(field.get_ref<const std::string&>());
    return level && filter::Ordered(op, *level, *severity);
  }
  if (field.is_number() && number && op != Op::kHas) {
    return filter::Ordered(op, field.get<double>(), *number);
  }
  if (field.is_string()) return CompareString(field.get_ref<const std::string&>());
  return CompareString(field.dump());  // Numbers and booleans as they print.
}

bool Node::Matches(const json& entry) const {
  switch (kind) {
    case Kind::kAnd:
      return std::all_of(children.begin(), children.end(),
                         [&](const NodePtr& c) { return c->Matches(entry); });
    case Kind::kOr:
      return std::any_of(children.begin(), children.end(),
                         [&](const NodePtr& c) { return c->Matches(entry); });
    case Kind::kNot:
      return !children[0]->Matches(entry);
    case Kind::kSearch:
      return AnyStringContains(entry, value_lower);
    case Kind::kCompare: {
      const json* field = Lookup(entry, path);
      return field != nullptr && CompareField(*field);
    }
  }
  return false;
}

// ---- Parser ------------------------------------------------------------------------

namespace {}  // namespace

const filter::FilterGrammar& LoggingQueryGrammar() {
  static const filter::FilterGrammar g = [] {
    filter::FilterGrammar g;
    g.operators = {{":*", Op::kPresent}, {"!=", Op::kNe},       {"<=", Op::kLe}, {">=", Op::kGe},
                   {"=~", Op::kRegex},   {"!~", Op::kNotRegex}, {"=", Op::kEq},  {"<", Op::kLt},
                   {">", Op::kGt},       {":", Op::kHas}};
    g.c_escapes = true;
    g.comments = true;
    g.bare_values = true;
    g.value_groups = true;
    g.quoted_path_parts = true;
    g.max_depth = kMaxDepth;
    g.max_chars = kMaxFilterChars;
    g.error_style = filter::FilterGrammar::ErrorStyle::kLogging;
    return g;
  }();
  return g;
}

namespace {

std::string Column(size_t at) { return " at column " + std::to_string(at + 1); }

Status CheckField(const filter::FilterExpr& e) {
  for (const char* f : kEntryFields) {
    if (e.path[0] == f) return Status::Ok();
  }
  return InvalidArgument("Unparseable filter: unknown field '" + e.field +
                         "' (not a LogEntry field)" + Column(e.field_at));
}

Result<NodePtr> Compare(const filter::FilterExpr& e) {
  RETURN_IF_ERROR(CheckField(e));
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::kCompare;
  n->path = e.path;
  n->op = e.op;
  n->value = e.value;
  n->value_lower = Lower(e.value);
  n->number = ReadNumber(e.value);
  auto bad_value = [&](const std::string& why) {
    return InvalidArgument("Unparseable filter: " + why + Column(e.value_at));
  };
  const Op op = n->op;
  if (op == Op::kRegex || op == Op::kNotRegex) {
    // Not offered: a backtracking matcher on untrusted patterns and long lines
    // can exhaust the stack, and the daemon must not fall over on input.
    return bad_value("regular expressions (=~, !~) are not supported by this server");
  }
  if (op != Op::kPresent && op != Op::kHas && IsTimeField(n->path)) {
    const std::string& value = e.value;
    std::string text = value.size() == 10 ? value + "T00:00:00Z" : value;  // A bare date.
    Result<TimeMicros> t = ParseRfc3339(text);
    if (!t.ok()) return bad_value("invalid timestamp \"" + value + "\"");
    n->time = *t;
  } else if (op != Op::kPresent && op != Op::kHas && IsSeverity(n->path)) {
    n->severity = SeverityLevel(e.value);
    // A number stands for a level (DEBUG is 100); one an int cannot hold is no level
    // (casting it would be undefined: found by fuzz/log_filter_fuzzer.cc).
    if (!n->severity && n->number && std::fabs(*n->number) <= kMaxSeverityNumber) {
      n->severity = static_cast<int>(*n->number);
    }
    if (!n->severity) return bad_value("unknown severity \"" + e.value + "\"");
  }
  return NodePtr(n);
}

// The engine's tree bound to LogEntry fields and types.
Result<NodePtr> Bind(const filter::FilterExpr& e) {
  using Kind = filter::FilterExpr::Kind;
  if (e.kind == Kind::kCompare) return Compare(e);
  auto n = std::make_shared<Node>();
  if (e.kind == Kind::kSearch) {
    n->kind = Node::Kind::kSearch;
    n->value = e.value;
    n->value_lower = Lower(e.value);
    return NodePtr(n);
  }
  n->kind = e.kind == Kind::kAnd  ? Node::Kind::kAnd
            : e.kind == Kind::kOr ? Node::Kind::kOr
                                  : Node::Kind::kNot;
  for (const filter::FilterExpr& c : e.children) {
    ASSIGN_OR_RETURN(NodePtr child, Bind(c));
    n->children.push_back(std::move(child));
  }
  return NodePtr(n);
}

// Bounds implied by the expression (see TimestampFloor). `floor` true: the
// least time; false: the greatest.
std::optional<TimeMicros> Bound(const Node& n, bool floor) {
  switch (n.kind) {
    case Node::Kind::kCompare: {
      if (!n.time || n.path.size() != 1 || n.path[0] != "timestamp") return std::nullopt;
      bool gives = floor ? (n.op == Op::kGe || n.op == Op::kGt || n.op == Op::kEq)
                         : (n.op == Op::kLe || n.op == Op::kLt || n.op == Op::kEq);
      return gives ? n.time : std::nullopt;
    }
    case Node::Kind::kAnd: {
      std::optional<TimeMicros> out;
      for (const NodePtr& c : n.children) {
        std::optional<TimeMicros> b = Bound(*c, floor);
        if (b) out = !out ? *b : floor ? std::max(*out, *b) : std::min(*out, *b);
      }
      return out;
    }
    case Node::Kind::kOr: {
      std::optional<TimeMicros> out;
      for (const NodePtr& c : n.children) {
        std::optional<TimeMicros> b = Bound(*c, floor);
        if (!b) return std::nullopt;
        out = !out ? *b : floor ? std::min(*out, *b) : std::max(*out, *b);
      }
      return out;
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::set<std::string>> Required(const Node& n, const std::vector<std::string>& path) {
  switch (n.kind) {
    case Node::Kind::kCompare:
      if (n.op == Op::kEq && n.path == path) return std::set<std::string>{n.value};
      return std::nullopt;
    case Node::Kind::kAnd:
      for (const NodePtr& c : n.children) {
        if (auto r = Required(*c, path)) return r;
      }
      return std::nullopt;
    case Node::Kind::kOr: {
      std::set<std::string> out;
      for (const NodePtr& c : n.children) {
        auto r = Required(*c, path);
        if (!r) return std::nullopt;
        out.insert(r->begin(), r->end());
      }
      return out;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<int> SeverityLevel(std::string_view name) {
  for (const auto& [n, level] : kSeverities) {
    if (Lower(name) == Lower(n)) return level;
  }
  return std::nullopt;
}

LogFilter::LogFilter() = default;
LogFilter::~LogFilter() = default;
LogFilter::LogFilter(LogFilter&&) noexcept = default;
LogFilter& LogFilter::operator=(LogFilter&&) noexcept = default;

Result<LogFilter> LogFilter::Parse(std::string_view text) {
  ASSIGN_OR_RETURN(filter::FilterExpr expr, filter::ParseFilter(LoggingQueryGrammar(), text));
  LogFilter f;
  if (expr.kind == filter::FilterExpr::Kind::kAnd && expr.children.empty()) return f;  // All.
  ASSIGN_OR_RETURN(f.root_, Bind(expr));
  return f;
}

bool LogFilter::Matches(const json& entry) const {
  return root_ == nullptr || root_->Matches(entry);
}

std::optional<TimeMicros> LogFilter::TimestampFloor() const {
  return root_ == nullptr ? std::nullopt : Bound(*root_, true);
}

std::optional<TimeMicros> LogFilter::TimestampCeiling() const {
  return root_ == nullptr ? std::nullopt : Bound(*root_, false);
}

std::optional<std::set<std::string>> LogFilter::RequiredValues(const std::string& path) const {
  if (root_ == nullptr) return std::nullopt;
  std::vector<std::string> parts;
  size_t from = 0;
  for (;;) {
    size_t dot = path.find('.', from);
    parts.push_back(path.substr(from, dot == std::string::npos ? std::string::npos : dot - from));
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  return Required(*root_, parts);
}

}  // namespace ty::logs
