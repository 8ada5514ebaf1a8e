#include "logs/log_filter.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

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

// The LogEntry fields a filter may start with (REST LogEntry, spec §2).
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

// Named, not anonymous: LogFilter::Node, declared in the header, holds it (gcc warns
// of a class with a member of an anonymous namespace's type when the module is
// compiled as one unit).
namespace log_filter_internal {
enum class Op { kEq, kNe, kLt, kLe, kGt, kGe, kHas, kPresent, kRegex, kNotRegex };
}  // namespace log_filter_internal
using log_filter_internal::Op;

namespace {

// ---- Tokens -------------------------------------------------------------------

enum class Tok { kWord, kString, kOp, kLParen, kRParen, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // Word text, unescaped string, or operator spelling.
  size_t begin = 0;  // Offsets into the filter.
  size_t end = 0;
};

bool IsWordChar(char c) {
  return !std::isspace(static_cast<unsigned char>(c)) && c != '(' && c != ')' && c != '"' &&
         c != '=' && c != '!' && c != '<' && c != '>' && c != ':' && c != '~';
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Result<std::vector<Token>> Run() {
    std::vector<Token> out;
    for (;;) {
      SkipSpaceAndComments();
      if (pos_ >= text_.size()) break;
      ASSIGN_OR_RETURN(Token t, Next());
      out.push_back(std::move(t));
    }
    out.push_back(Token{Tok::kEnd, "", text_.size(), text_.size()});
    return out;
  }

 private:
  void SkipSpaceAndComments() {
    while (pos_ < text_.size()) {
      if (std::isspace(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
      } else if (text_.compare(pos_, 2, "--") == 0) {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  Result<Token> Next() {
    const size_t begin = pos_;
    const char c = text_[pos_];
    if (c == '(' || c == ')') {
      ++pos_;
      return Token{c == '(' ? Tok::kLParen : Tok::kRParen, std::string(1, c), begin, pos_};
    }
    if (c == '"') return String(begin);
    for (const char* op : {":*", "!=", "<=", ">=", "=~", "!~", "=", "<", ">", ":"}) {
      if (text_.compare(pos_, std::strlen(op), op) == 0) {
        pos_ += std::strlen(op);
        return Token{Tok::kOp, op, begin, pos_};
      }
    }
    while (pos_ < text_.size() && IsWordChar(text_[pos_])) ++pos_;
    if (pos_ == begin) ++pos_;  // A stray character ('!', '~'): a token of its own.
    if (pos_ == begin + 1 && !IsWordChar(c)) {
      return Token{Tok::kOp, std::string(1, c), begin, pos_};  // Rejected by the parser.
    }
    return Token{Tok::kWord, std::string(text_.substr(begin, pos_ - begin)), begin, pos_};
  }

  Result<Token> String(size_t begin) {
    std::string value;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        char e = text_[pos_++];
        value += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        value += c;
      }
    }
    if (pos_ >= text_.size()) return Token{Tok::kOp, "\"", begin, begin + 1};  // Unterminated.
    ++pos_;
    return Token{Tok::kString, std::move(value), begin, pos_};
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

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
  template <typename T>
  bool Ordered(const T& a, const T& b) const;
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

template <typename T>
bool Node::Ordered(const T& a, const T& b) const {
  switch (op) {
    case Op::kEq:
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
    default:
      return false;
  }
}

bool Node::CompareString(const std::string& s) const {
  switch (op) {
    case Op::kHas:
      return Lower(s).find(value_lower) != std::string::npos;
    default:
      return Ordered(Lower(s), value_lower);
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
    return t.ok() && Ordered(*t, *time);
  }
  if (severity && field.is_string() && op != Op::kHas) {
    std::optional<int> level = SeverityLevel(field.get_ref<const std::string&>());
    return level && Ordered(*level, *severity);
  }
  if (field.is_number() && number && op != Op::kHas) {
    return Ordered(field.get<double>(), *number);
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

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::vector<Token> tokens)
      : text_(text), tokens_(std::move(tokens)) {}

  Result<NodePtr> Run() {
    ASSIGN_OR_RETURN(NodePtr root, ParseAnd(0));
    if (Peek().kind != Tok::kEnd) return SyntaxError(Peek());
    return root;
  }

 private:
  const Token& Peek() const { return tokens_[at_]; }
  const Token& Take() { return tokens_[at_++]; }
  bool PeekWord(const char* w) const { return Peek().kind == Tok::kWord && Peek().text == w; }

  Status SyntaxError(const Token& t) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < t.begin && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string token =
        t.kind == Tok::kEnd ? "<EOF>" : std::string(text_.substr(t.begin, t.end - t.begin));
    return InvalidArgument("Unparseable filter: syntax error at line " + std::to_string(line) +
                           ", column " + std::to_string(column) + ", token '" + token + "'");
  }

  // Whether the next token can start a term (for implicit AND).
  bool StartsTerm() const {
    const Token& t = Peek();
    if (t.kind == Tok::kLParen || t.kind == Tok::kString) return true;
    return t.kind == Tok::kWord && t.text != "AND" && t.text != "OR";
  }

  static NodePtr Join(Node::Kind kind, std::vector<NodePtr> children) {
    if (children.size() == 1) return children[0];
    auto n = std::make_shared<Node>();
    n->kind = kind;
    n->children = std::move(children);
    return n;
  }

  Result<NodePtr> ParseAnd(int depth) {
    if (depth > kMaxDepth) return InvalidArgument("Unparseable filter: nested too deeply");
    std::vector<NodePtr> terms;
    ASSIGN_OR_RETURN(NodePtr first, ParseOr(depth));
    terms.push_back(first);
    for (;;) {
      if (PeekWord("AND")) {
        Take();
      } else if (!StartsTerm()) {
        break;
      }
      ASSIGN_OR_RETURN(NodePtr next, ParseOr(depth));
      terms.push_back(next);
    }
    return Join(Node::Kind::kAnd, std::move(terms));
  }

  Result<NodePtr> ParseOr(int depth) {
    std::vector<NodePtr> terms;
    ASSIGN_OR_RETURN(NodePtr first, ParseUnary(depth));
    terms.push_back(first);
    while (PeekWord("OR")) {
      Take();
      ASSIGN_OR_RETURN(NodePtr next, ParseUnary(depth));
      terms.push_back(next);
    }
    return Join(Node::Kind::kOr, std::move(terms));
  }

  Result<NodePtr> ParseUnary(int depth) {
    if (depth > kMaxDepth) return InvalidArgument("Unparseable filter: nested too deeply");
    bool negate = false;
    if (PeekWord("NOT")) {
      Take();
      negate = true;
    } else if (Peek().kind == Tok::kWord && Peek().text[0] == '-') {
      // `-term`: the '-' negates; the rest of the word (if any) starts the term.
      Token& t = tokens_[at_];
      negate = true;
      t.text.erase(0, 1);
      t.begin += 1;
      if (t.text.empty()) Take();
    }
    if (!negate) return ParsePrimary(depth);
    ASSIGN_OR_RETURN(NodePtr inner, ParseUnary(depth + 1));
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::kNot;
    n->children = {inner};
    return NodePtr(n);
  }

  Result<NodePtr> ParsePrimary(int depth) {
    const Token& t = Peek();
    if (t.kind == Tok::kLParen) {
      Take();
      ASSIGN_OR_RETURN(NodePtr inner, ParseAnd(depth + 1));
      if (Peek().kind != Tok::kRParen) return SyntaxError(Peek());
      Take();
      return inner;
    }
    if (t.kind != Tok::kWord && t.kind != Tok::kString) return SyntaxError(t);
    const size_t start = at_;
    ASSIGN_OR_RETURN(std::vector<std::string> path, ParsePath());
    if (Peek().kind != Tok::kOp) {
      // A bare value: a global restriction on the text as written.
      const Token& first = tokens_[start];
      auto n = std::make_shared<Node>();
      n->kind = Node::Kind::kSearch;
      n->value = first.kind == Tok::kString ? first.text : JoinPath(path);
      n->value_lower = Lower(n->value);
      return NodePtr(n);
    }
    const Token& op_token = Take();
    ASSIGN_OR_RETURN(Op op, OpOf(op_token));
    RETURN_IF_ERROR(CheckField(path, tokens_[start]));
    if (op == Op::kPresent) return Compare(path, op, "", op_token);
    return ParseValues(path, op, depth);
  }

  static std::string JoinPath(const std::vector<std::string>& path) {
    std::string out;
    for (const std::string& p : path) out += (out.empty() ? "" : ".") + p;
    return out;
  }

  // `a.b."c.d".e`: words split on '.', quoted parts whole; parts must touch.
  Result<std::vector<std::string>> ParsePath() {
    std::vector<std::string> path;
    bool want_more = true;
    size_t prev_end = Peek().begin;
    while (want_more && (Peek().kind == Tok::kWord || Peek().kind == Tok::kString) &&
           Peek().begin == prev_end) {
      const Token& t = Take();
      prev_end = t.end;
      want_more = false;
      if (t.kind == Tok::kString) {
        path.push_back(t.text);
        // A following word that starts with '.' continues the path.
        want_more = Peek().kind == Tok::kWord && Peek().begin == t.end && Peek().text[0] == '.';
        if (want_more) {
          Token& next = tokens_[at_];
          next.text.erase(0, 1);
          next.begin += 1;
          prev_end = next.begin;
          if (next.text.empty()) {
            Take();
            prev_end = Peek().begin;
          }
        }
        continue;
      }
      size_t from = 0;
      for (;;) {
        size_t dot = t.text.find('.', from);
        std::string part =
            t.text.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
        if (!part.empty()) path.push_back(part);
        if (dot == std::string::npos) break;
        from = dot + 1;
        if (from == t.text.size()) want_more = true;  // `labels."x"`: a quoted part follows.
      }
      if (path.empty()) return SyntaxError(t);
    }
    return path;
  }

  Result<Op> OpOf(const Token& t) const {
    static const std::pair<const char*, Op> kOps[] = {
        {"=", Op::kEq},     {"!=", Op::kNe},      {"<", Op::kLt},  {"<=", Op::kLe},
        {">", Op::kGt},     {">=", Op::kGe},      {":", Op::kHas}, {":*", Op::kPresent},
        {"=~", Op::kRegex}, {"!~", Op::kNotRegex}};
    for (const auto& [spelling, op] : kOps) {
      if (t.text == spelling) return op;
    }
    return SyntaxError(t);
  }

  Status CheckField(const std::vector<std::string>& path, const Token& at) const {
    for (const char* f : kEntryFields) {
      if (path[0] == f) return Status::Ok();
    }
    return InvalidArgument("Unparseable filter: unknown field '" + JoinPath(path) +
                           "' (not a LogEntry field) at column " + std::to_string(at.begin + 1));
  }

  // One value, or a parenthesized group of values joined by AND / OR / NOT.
  Result<NodePtr> ParseValues(const std::vector<std::string>& path, Op op, int depth) {
    if (depth > kMaxDepth) return InvalidArgument("Unparseable filter: nested too deeply");
    if (Peek().kind == Tok::kLParen) {
      Take();
      std::vector<NodePtr> conj;
      std::vector<NodePtr> disj;
      for (;;) {
        bool negate = PeekWord("NOT");
        if (negate) Take();
        ASSIGN_OR_RETURN(NodePtr v, ParseValues(path, op, depth + 1));
        if (negate) {
          auto n = std::make_shared<Node>();
          n->kind = Node::Kind::kNot;
          n->children = {v};
          v = n;
        }
        disj.push_back(v);
        if (PeekWord("OR")) {
          Take();
          continue;
        }
        conj.push_back(Join(Node::Kind::kOr, std::move(disj)));
        disj.clear();
        if (PeekWord("AND")) {
          Take();
          continue;
        }
        if (Peek().kind == Tok::kRParen) break;
        if (Peek().kind == Tok::kWord || Peek().kind == Tok::kString) continue;  // Implicit AND.
        return SyntaxError(Peek());
      }
      Take();
      return Join(Node::Kind::kAnd, std::move(conj));
    }
    const Token& v = Peek();
    if (v.kind != Tok::kWord && v.kind != Tok::kString) return SyntaxError(v);
    if (v.kind == Tok::kWord && (v.text == "AND" || v.text == "OR" || v.text == "NOT")) {
      return SyntaxError(v);
    }
    Take();
    return Compare(path, op, v.text, v);
  }

  Result<NodePtr> Compare(const std::vector<std::string>& path, Op op, const std::string& value,
                          const Token& at) {
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::kCompare;
    n->path = path;
    n->op = op;
    n->value = value;
    n->value_lower = Lower(value);
    n->number = ReadNumber(value);
    auto bad_value = [&](const std::string& why) {
      return InvalidArgument("Unparseable filter: " + why + " at column " +
                             std::to_string(at.begin + 1));
    };
    if (op == Op::kRegex || op == Op::kNotRegex) {
      // Not offered: a backtracking matcher on untrusted patterns and long lines
      // can exhaust the stack, and the daemon must not fall over on input.
      return bad_value("regular expressions (=~, !~) are not supported by this server");
    }
    if (op != Op::kPresent && op != Op::kHas && IsTimeField(path)) {
      std::string text = value.size() == 10 ? value + "T00:00:00Z" : value;  // A bare date.
      Result<TimeMicros> t = ParseRfc3339(text);
      if (!t.ok()) return bad_value("invalid timestamp \"" + value + "\"");
      n->time = *t;
    } else if (op != Op::kPresent && op != Op::kHas && IsSeverity(path)) {
      n->severity = SeverityLevel(value);
      // A number stands for a level (DEBUG is 100); one an int cannot hold is no level
      // (casting it would be undefined: found by fuzz/log_filter_fuzzer.cc).
      if (!n->severity && n->number && std::fabs(*n->number) <= kMaxSeverityNumber) {
        n->severity = static_cast<int>(*n->number);
      }
      if (!n->severity) return bad_value("unknown severity \"" + value + "\"");
    }
    return NodePtr(n);
  }

  std::string_view text_;
  std::vector<Token> tokens_;
  size_t at_ = 0;
};

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
  if (text.size() > kMaxFilterChars) {
    return InvalidArgument("filter is longer than " + std::to_string(kMaxFilterChars) +
                           " characters");
  }
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Lexer(text).Run());
  LogFilter f;
  if (tokens.size() == 1) return f;  // Only kEnd: match all.
  ASSIGN_OR_RETURN(f.root_, Parser(text, std::move(tokens)).Run());
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
