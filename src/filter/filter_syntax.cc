#include "filter/filter_syntax.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace ty::filter {

namespace {

enum class Tok { kWord, kString, kBadString, kOp, kLParen, kRParen, kEnd };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // Word text, unescaped string, or operator spelling.
  size_t begin = 0;  // Offsets into the filter.
  size_t end = 0;
};

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

class Lexer {
 public:
  Lexer(const FilterGrammar& g, std::string_view text) : g_(g), text_(text) {
    for (const FilterGrammar::Operator& op : g_.operators) {
      for (char c : op.spelling) {
        if (c != '*') operator_chars_ += c;
      }
    }
  }

  std::vector<Token> Run() {
    std::vector<Token> out;
    for (;;) {
      SkipSpaceAndComments();
      if (pos_ >= text_.size()) break;
      out.push_back(Next());
      if (out.back().kind == Tok::kBadString) break;  // The rest is inside the string.
    }
    out.push_back(Token{Tok::kEnd, "", text_.size(), text_.size()});
    return out;
  }

 private:
  bool IsQuote(char c) const { return c == '"' || (g_.single_quotes && c == '\''); }
  bool IsWordChar(char c) const {
    return !IsSpace(c) && c != '(' && c != ')' && !IsQuote(c) &&
           operator_chars_.find(c) == std::string::npos;
  }

  void SkipSpaceAndComments() {
    while (pos_ < text_.size()) {
      if (IsSpace(text_[pos_])) {
        ++pos_;
      } else if (g_.comments && text_.compare(pos_, 2, "--") == 0) {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  Token Next() {
    const size_t begin = pos_;
    const char c = text_[pos_];
    if (c == '(' || c == ')') {
      ++pos_;
      return Token{c == '(' ? Tok::kLParen : Tok::kRParen, std::string(1, c), begin, pos_};
    }
    if (IsQuote(c)) return String(begin, c);
    for (const FilterGrammar::Operator& op : g_.operators) {
      if (text_.compare(pos_, op.spelling.size(), op.spelling) == 0) {
        pos_ += op.spelling.size();
        return Token{Tok::kOp, op.spelling, begin, pos_};
      }
    }
    while (pos_ < text_.size() && IsWordChar(text_[pos_])) ++pos_;
    if (pos_ == begin) {  // A stray operator character ('!', '~'): rejected by the parser.
      ++pos_;
      return Token{Tok::kOp, std::string(1, c), begin, pos_};
    }
    return Token{Tok::kWord, std::string(text_.substr(begin, pos_ - begin)), begin, pos_};
  }

  Token String(size_t begin, char quote) {
    std::string value;
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\' && pos_ < text_.size()) {
        char e = text_[pos_++];
        value += !g_.c_escapes ? e : e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        value += c;
      }
    }
    if (pos_ >= text_.size())
      return Token{Tok::kBadString, std::string(1, quote), begin, begin + 1};
    ++pos_;
    return Token{Tok::kString, std::move(value), begin, pos_};
  }

  const FilterGrammar& g_;
  std::string_view text_;
  std::string operator_chars_;
  size_t pos_ = 0;
};

FilterExpr Join(FilterExpr::Kind kind, std::vector<FilterExpr> parts) {
  if (parts.size() == 1) return std::move(parts[0]);
  FilterExpr e;
  e.kind = kind;
  e.children = std::move(parts);
  return e;
}

FilterExpr Negate(FilterExpr inner) {
  FilterExpr e;
  e.kind = FilterExpr::Kind::kNot;
  e.children.push_back(std::move(inner));
  return e;
}

class Parser {
 public:
  Parser(const FilterGrammar& g, std::string_view text, std::vector<Token> tokens)
      : g_(g), text_(text), tokens_(std::move(tokens)) {}

  Result<FilterExpr> Run() {
    ASSIGN_OR_RETURN(FilterExpr root, ParseExpression(0));
    if (Peek().kind != Tok::kEnd) return Error(SyntaxError::What::kUnexpected, Peek());
    return root;
  }

 private:
  const Token& Peek() const { return tokens_[at_]; }
  const Token& Take() { return tokens_[at_++]; }
  bool PeekWord(const char* w) const { return Peek().kind == Tok::kWord && Peek().text == w; }
  static bool IsKeyword(const Token& t) {
    return t.kind == Tok::kWord && (t.text == "AND" || t.text == "OR" || t.text == "NOT");
  }

  Status Error(SyntaxError::What what, const Token& t) const {
    SyntaxError e;
    e.what = what;
    e.at = t.begin;
    e.token = t.kind == Tok::kEnd ? "" : std::string(text_.substr(t.begin, t.end - t.begin));
    for (size_t i = 0; i < t.begin && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++e.line;
        e.column = 1;
      } else {
        ++e.column;
      }
    }
    if (t.kind == Tok::kBadString) e.what = SyntaxError::What::kUnterminatedString;
    return FilterSyntaxStatus(g_, e);
  }
  Status TooDeep() const {
    SyntaxError e;
    e.what = SyntaxError::What::kTooDeep;
    return FilterSyntaxStatus(g_, e);
  }

  // Whether the next token can start a term (for implicit AND).
  bool StartsTerm() const {
    const Token& t = Peek();
    if (t.kind == Tok::kLParen || t.kind == Tok::kString || t.kind == Tok::kBadString) return true;
    return t.kind == Tok::kWord && t.text != "AND" && t.text != "OR";
  }

  Result<FilterExpr> ParseExpression(int depth) {
    if (depth > g_.max_depth) return TooDeep();
    std::vector<FilterExpr> parts;
    ASSIGN_OR_RETURN(FilterExpr first, ParseSequence(depth));
    parts.push_back(std::move(first));
    for (;;) {
      if (PeekWord("AND")) {
        Take();
      } else if (!StartsTerm()) {
        break;
      }
      ASSIGN_OR_RETURN(FilterExpr next, ParseSequence(depth));
      parts.push_back(std::move(next));
    }
    return Join(FilterExpr::Kind::kAnd, std::move(parts));
  }

  Result<FilterExpr> ParseSequence(int depth) {
    std::vector<FilterExpr> parts;
    ASSIGN_OR_RETURN(FilterExpr first, ParseUnary(depth));
    parts.push_back(std::move(first));
    while (PeekWord("OR")) {
      Take();
      ASSIGN_OR_RETURN(FilterExpr next, ParseUnary(depth));
      parts.push_back(std::move(next));
    }
    return Join(FilterExpr::Kind::kOr, std::move(parts));
  }

  Result<FilterExpr> ParseUnary(int depth) {
    if (depth > g_.max_depth) return TooDeep();
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
    ASSIGN_OR_RETURN(FilterExpr inner, ParseUnary(depth + 1));
    return Negate(std::move(inner));
  }

  Result<FilterExpr> ParsePrimary(int depth) {
    const Token& t = Peek();
    if (t.kind == Tok::kLParen) {
      Take();
      ASSIGN_OR_RETURN(FilterExpr inner, ParseExpression(depth + 1));
      if (Peek().kind == Tok::kEnd) return Error(SyntaxError::What::kMissingParen, Peek());
      if (Peek().kind != Tok::kRParen) return Error(SyntaxError::What::kUnexpected, Peek());
      Take();
      return inner;
    }
    if (t.kind != Tok::kWord && t.kind != Tok::kString) {
      return Error(SyntaxError::What::kUnexpected, t);
    }
    const size_t start = at_;
    FilterExpr e;
    e.kind = FilterExpr::Kind::kCompare;
    e.field_at = t.begin;
    RETURN_IF_ERROR(ParsePath(&e));
    if (Peek().kind != Tok::kOp) {
      if (!g_.bare_values) return Error(SyntaxError::What::kMissingOperator, tokens_[start]);
      // A bare value: a global restriction on the text as written.
      const Token& first = tokens_[start];
      e.kind = FilterExpr::Kind::kSearch;
      e.value = first.kind == Tok::kString ? first.text : e.field;
      e.value_at = first.begin;
      e.path.clear();
      return e;
    }
    const Token& op = Take();
    auto known =
        std::find_if(g_.operators.begin(), g_.operators.end(),
                     [&](const FilterGrammar::Operator& o) { return o.spelling == op.text; });
    if (known == g_.operators.end()) return Error(SyntaxError::What::kUnexpected, op);
    e.op = known->op;
    e.op_text = op.text;
    if (e.op == Op::kPresent) {  // Presence: no value.
      e.value_at = op.begin;
      return e;
    }
    return ParseValues(std::move(e), depth);
  }

  static std::string JoinPath(const std::vector<std::string>& path) {
    std::string out;
    for (const std::string& p : path) out += (out.empty() ? "" : ".") + p;
    return out;
  }

  static void SplitWord(const std::string& word, std::vector<std::string>* path, bool* more) {
    size_t from = 0;
    for (;;) {
      size_t dot = word.find('.', from);
      std::string part =
          word.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
      if (!part.empty()) path->push_back(part);
      if (dot == std::string::npos) break;
      from = dot + 1;
      if (from == word.size()) *more = true;  // `labels."x"`: a quoted part follows.
    }
  }

  // `a.b."c.d".e` when the grammar has quoted parts: words split on '.', quoted parts
  // whole, parts touching. Otherwise one word or string.
  Status ParsePath(FilterExpr* e) {
    if (!g_.quoted_path_parts) {
      const Token& t = Take();
      e->field = t.text;
      bool more = false;
      SplitWord(t.text, &e->path, &more);
      return Status::Ok();
    }
    bool want_more = true;
    size_t prev_end = Peek().begin;
    while (want_more && (Peek().kind == Tok::kWord || Peek().kind == Tok::kString) &&
           Peek().begin == prev_end) {
      const Token& t = Take();
      prev_end = t.end;
      want_more = false;
      if (t.kind == Tok::kString) {
        e->path.push_back(t.text);
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
      SplitWord(t.text, &e->path, &want_more);
      if (e->path.empty()) return Error(SyntaxError::What::kUnexpected, t);
    }
    e->field = JoinPath(e->path);
    return Status::Ok();
  }

  // One value, or (with value groups) a parenthesized group of values joined by AND,
  // OR and NOT, each compared as `e` says.
  Result<FilterExpr> ParseValues(FilterExpr e, int depth) {
    if (depth > g_.max_depth) return TooDeep();
    if (g_.value_groups && Peek().kind == Tok::kLParen) return ParseValueGroup(std::move(e), depth);
    const Token& v = Peek();
    if (v.kind == Tok::kEnd) return Error(SyntaxError::What::kMissingValue, v);
    if (v.kind == Tok::kBadString) return Error(SyntaxError::What::kUnterminatedString, v);
    e.value_at = v.begin;
    if (v.kind == Tok::kString) {
      e.value = Take().text;
      return e;
    }
    if (g_.value_runs_to_space && v.kind != Tok::kLParen && v.kind != Tok::kRParen) {
      // The value as written up to a space or parenthesis; the tokens inside are its.
      size_t end = v.begin;
      while (end < text_.size() && !IsSpace(text_[end]) && text_[end] != '(' && text_[end] != ')') {
        ++end;
      }
      e.value = std::string(text_.substr(v.begin, end - v.begin));
      while (Peek().kind != Tok::kEnd && Peek().begin < end) Take();
      return e;
    }
    if (v.kind != Tok::kWord || IsKeyword(v)) return Error(SyntaxError::What::kUnexpected, v);
    e.value = Take().text;
    return e;
  }

  Result<FilterExpr> ParseValueGroup(FilterExpr e, int depth) {
    Take();  // "("
    std::vector<FilterExpr> conj;
    std::vector<FilterExpr> disj;
    for (;;) {
      bool negate = PeekWord("NOT");
      if (negate) Take();
      ASSIGN_OR_RETURN(FilterExpr v, ParseValues(e, depth + 1));
      disj.push_back(negate ? Negate(std::move(v)) : std::move(v));
      if (PeekWord("OR")) {
        Take();
        continue;
      }
      conj.push_back(Join(FilterExpr::Kind::kOr, std::move(disj)));
      disj.clear();
      if (PeekWord("AND")) {
        Take();
        continue;
      }
      if (Peek().kind == Tok::kRParen) break;
      if (Peek().kind == Tok::kWord || Peek().kind == Tok::kString) continue;  // Implicit AND.
      return Error(SyntaxError::What::kUnexpected, Peek());
    }
    Take();
    return Join(FilterExpr::Kind::kAnd, std::move(conj));
  }

  const FilterGrammar& g_;
  std::string_view text_;
  std::vector<Token> tokens_;
  size_t at_ = 0;
};

}  // namespace

Status FilterSyntaxStatus(const FilterGrammar& grammar, const SyntaxError& e) {
  using What = SyntaxError::What;
  if (grammar.error_style == FilterGrammar::ErrorStyle::kLogging) {
    switch (e.what) {
      case What::kTooDeep:
        return InvalidArgument("Unparseable filter: nested too deeply");
      case What::kTooLong:
        return InvalidArgument("filter is longer than " + std::to_string(grammar.max_chars) +
                               " characters");
      default:
        return InvalidArgument("Unparseable filter: syntax error at line " +
                               std::to_string(e.line) + ", column " + std::to_string(e.column) +
                               ", token '" + (e.token.empty() ? "<EOF>" : e.token) + "'");
    }
  }
  const std::string position = " at position " + std::to_string(e.at + 1);
  switch (e.what) {
    case What::kUnexpected:
      if (e.token.empty()) return InvalidArgument("invalid filter: unexpected end of filter");
      return InvalidArgument("invalid filter: unexpected \"" + e.token + "\"" + position);
    case What::kUnterminatedString:
      return InvalidArgument("invalid filter: unterminated string starting" + position);
    case What::kMissingParen:
      return InvalidArgument("invalid filter: missing \")\"");
    case What::kMissingOperator:
      return InvalidArgument(
          "invalid filter: expected an operator (=, !=, :, <, <=, >, >=) after \"" + e.token +
          "\"");
    case What::kMissingValue:
      return InvalidArgument("invalid filter: missing value at the end");
    case What::kTooDeep:
      return InvalidArgument("invalid filter: nested too deeply");
    case What::kTooLong:
      return InvalidArgument("invalid filter: longer than " + std::to_string(grammar.max_chars) +
                             " characters");
  }
  return InvalidArgument("invalid filter");
}

Result<FilterExpr> ParseFilter(const FilterGrammar& grammar, std::string_view text) {
  if (grammar.max_chars > 0 && text.size() > grammar.max_chars) {
    SyntaxError e;
    e.what = SyntaxError::What::kTooLong;
    return FilterSyntaxStatus(grammar, e);
  }
  std::vector<Token> tokens = Lexer(grammar, text).Run();
  if (tokens.size() == 1) return FilterExpr{};  // Only the end: match everything.
  return Parser(grammar, text, std::move(tokens)).Run();
}

}  // namespace ty::filter
