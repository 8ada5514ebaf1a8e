// One filter engine for the filter languages Trainyard reads: the list filters of
// both job APIs (AIP-160 and its ml v1 cousin: wire/list_filter.h) and the Cloud
// Logging query language (logs/log_filter.h). They share lexing, precedence and
// comparison syntax; what differs is a table (FilterGrammar): the operators, quote
// characters, comments, bare values, value groups, how far an unquoted value runs and
// how errors read. The engine turns text into a FilterExpr tree; each dialect binds
// the tree to its fields and types.
//
// Precedence (both AIP-160 and Google's Logging docs): NOT binds tightest, then OR,
// then AND, and adjacent terms are joined by AND: `a b OR c` is `a AND (b OR c)`.
//
//   expression = sequence { ["AND"] sequence }      (implicit AND)
//   sequence   = unary { "OR" unary }
//   unary      = ("NOT" | "-") unary | primary
//   primary    = "(" expression ")" | comparison | bare value
//   comparison = path operator (value | "(" value group ")")
//
// Hostile input: nesting is bounded (max_depth) so parsing never exhausts the stack,
// and the text's length by max_chars where the dialect has a limit.
//
// Pure: no I/O; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace ty::filter {

// The comparison operators of all the dialects (each grammar spells the ones it has).
enum class Op { kEq, kNe, kLt, kLe, kGt, kGe, kHas, kPresent, kRegex, kNotRegex };

// `a OP b` for the ordering operators (= != < <= > >=), `:` read as equality; false for
// the others, which each dialect gives its own meaning.
template <typename T>
bool Ordered(Op op, const T& a, const T& b) {
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
    default:
      return false;
  }
}

struct FilterExpr {
  enum class Kind { kAnd, kOr, kNot, kCompare, kSearch };
  Kind kind = Kind::kAnd;
  std::vector<FilterExpr> children;  // kAnd, kOr: 2+; kNot: 1.
  // kCompare: `field` as written ("labels.team") and split into `path` (on dots,
  // quoted parts whole: `labels."a.b"` is {"labels", "a.b"}); the operator, and its
  // spelling as written.
  std::string field;
  std::vector<std::string> path;
  Op op = Op::kEq;
  std::string op_text;
  // kCompare: the value, unquoted and unescaped; kSearch: the bare value.
  std::string value;
  size_t field_at = 0;  // Offsets into the text, for errors naming a column.
  size_t value_at = 0;
};

// Where and why a text is no filter; the dialect words it (FilterGrammar::error_style).
struct SyntaxError {
  enum class What {
    kUnexpected,          // `token` cannot come here (kEnd: the text ended early).
    kUnterminatedString,  // A quote at `at` is never closed.
    kMissingParen,        // The text ended before a ")".
    kMissingOperator,     // `token` (a field) is not followed by an operator.
    kMissingValue,        // An operator at the end of the text.
    kTooDeep,             // Nested deeper than max_depth.
    kTooLong,             // Longer than max_chars.
  };
  What what = What::kUnexpected;
  size_t at = 0;      // Offset of the token.
  size_t line = 1;    // 1-based, of `at`.
  size_t column = 1;  // 1-based, of `at`.
  std::string token;  // As written; "" at the end of the text.
};

struct FilterGrammar {
  // The operators and their spellings, longest first where one is a prefix of another
  // (":*" before ":"). Op::kPresent takes no value.
  struct Operator {
    std::string spelling;
    Op op;
  };
  std::vector<Operator> operators;
  bool single_quotes = false;      // '...' strings too (AIP-160).
  bool c_escapes = false;          // \n and \t in strings (Logging); else \x is x.
  bool comments = false;           // `--` to the end of the line (Logging).
  bool bare_values = false;        // A term without an operator is a global search.
  bool value_groups = false;       // `field = ("a" OR "b")`.
  bool quoted_path_parts = false;  // `labels."a.b"` (Logging).
  // An unquoted value runs to the next space or parenthesis (AIP-160, whose times
  // `createTime>2017-01-15T19:00` hold colons); else it is one word.
  bool value_runs_to_space = false;
  int max_depth = 64;
  size_t max_chars = 0;  // 0: no limit.
  enum class ErrorStyle {
    kListFilter,  // invalid filter: unexpected "X" at position N
    kLogging,     // Unparseable filter: syntax error at line L, column C, token 'X'
  };
  ErrorStyle error_style = ErrorStyle::kListFilter;
};

// Parses `text`; an empty expression (only spaces or comments) is Kind::kAnd with no
// children, which matches everything. InvalidArgument worded by the grammar.
Result<FilterExpr> ParseFilter(const FilterGrammar& grammar, std::string_view text);

// The grammar's wording of `error` (ParseFilter's errors use it).
Status FilterSyntaxStatus(const FilterGrammar& grammar, const SyntaxError& error);

}  // namespace ty::filter
