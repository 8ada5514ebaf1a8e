// The one filter engine (filter/filter_syntax.h) under its three dialects: Vertex list
// filters (AIP-160), ml v1 list filters, and the Cloud Logging query language. The
// dialects' own tests (tests/wire/list_filter_test.cc, tests/logs/log_filter_test.cc)
// keep checking fields and types; these check what they share through the engine:
// precedence, negation, quoting, hostile nesting and garbage.
#include "filter/filter_syntax.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "logs/log_filter.h"
#include "wire/list_filter.h"

namespace ty::filter {
namespace {

// Each dialect as a parser of text: ok or not, and (for the shared shape) a matcher.
struct Dialect {
  std::string name;
  std::function<Status(const std::string&)> parse;
};

std::vector<Dialect> AllDialects() {
  return {
      {"vertex list",
       [](const std::string& t) {
         return wire::ListFilter::Parse(model::Dialect::kVertex, t).status();
       }},
      {"ml list",
       [](const std::string& t) {
         return wire::ListFilter::Parse(model::Dialect::kMlV1, t).status();
       }},
      {"logging", [](const std::string& t) { return logs::LogFilter::Parse(t).status(); }},
  };
}

// The dialects' own tables, as the daemon parses with them.
const FilterGrammar& ListLike() { return wire::ListFilterGrammar(); }
const FilterGrammar& LoggingLike() { return logs::LoggingQueryGrammar(); }

// The tree as text: AND(...), OR(...), NOT(...), field op value, ?search.
std::string Show(const FilterExpr& e) {
  switch (e.kind) {
    case FilterExpr::Kind::kCompare:
      return e.field + e.op_text + e.value;
    case FilterExpr::Kind::kSearch:
      return "?" + e.value;
    default:
      break;
  }
  std::string out = e.kind == FilterExpr::Kind::kAnd  ? "AND("
                    : e.kind == FilterExpr::Kind::kOr ? "OR("
                                                      : "NOT(";
  for (size_t i = 0; i < e.children.size(); ++i) out += (i ? " " : "") + Show(e.children[i]);
  return out + ")";
}

std::string Tree(const FilterGrammar& g, const std::string& text) {
  Result<FilterExpr> e = ParseFilter(g, text);
  return e.ok() ? Show(*e) : "error: " + e.status().message();
}

TEST(FilterSyntaxTest, BothGrammarsBindOrTighterThanAndAndJoinAdjacentTermsByAnd) {
  for (const FilterGrammar* g : {&ListLike(), &LoggingLike()}) {
    EXPECT_EQ(Tree(*g, "a=1 AND b=2 OR c=3"), "AND(a=1 OR(b=2 c=3))");
    EXPECT_EQ(Tree(*g, "a=1 b=2 OR c=3"), "AND(a=1 OR(b=2 c=3))");
    EXPECT_EQ(Tree(*g, "(a=1 AND b=2) OR c=3"), "OR(AND(a=1 b=2) c=3)");
    EXPECT_EQ(Tree(*g, "NOT a=1 -b=2"), "AND(NOT(a=1) NOT(b=2))");
    EXPECT_EQ(Tree(*g, "- a=1"), "NOT(a=1)");
    EXPECT_EQ(Tree(*g, "ANDROID=1"), "ANDROID=1");  // A keyword only as a whole word.
    EXPECT_EQ(Tree(*g, "  "), "AND()");             // Blank: everything.
  }
}

TEST(FilterSyntaxTest, TheGrammarTablesDecideQuotesValuesAndComments) {
  // AIP-160: single quotes; an unquoted value runs to a space (times hold colons).
  EXPECT_EQ(Tree(ListLike(), "createTime>2017-01-15T19:00 jobId='a b'"),
            "AND(createTime>2017-01-15T19:00 jobId=a b)");
  EXPECT_EQ(Tree(ListLike(), "labels.k:*"), "labels.k:*");
  EXPECT_EQ(Tree(ListLike(), "display_name=AND"), "display_name=AND");
  // Logging: presence, value groups, bare values, comments, quoted path parts, \n.
  EXPECT_EQ(Tree(LoggingLike(), "labels.k:*"), "labels.k:*");
  EXPECT_EQ(Tree(LoggingLike(), "severity=(ERROR OR NOT WARNING)"),
            "OR(severity=ERROR NOT(severity=WARNING))");
  EXPECT_EQ(Tree(LoggingLike(), "boom -- a comment\nx=1"), "AND(?boom x=1)");
  EXPECT_EQ(Tree(LoggingLike(), "labels.\"a.b\"=\"x\\ny\""), "labels.a.b=x\ny");
  ASSERT_TRUE(ParseFilter(LoggingLike(), "labels.\"a.b\"=1").ok());
  EXPECT_EQ(ParseFilter(LoggingLike(), "labels.\"a.b\"=1")->children.size(), 0u);
  EXPECT_EQ(ParseFilter(LoggingLike(), "labels.\"a.b\"=1")->path,
            (std::vector<std::string>{"labels", "a.b"}));
  // What one grammar reads, the other refuses.
  EXPECT_EQ(Tree(ListLike(), "boom"),
            "error: invalid filter: expected an operator (=, !=, :, <, <=, >, >=) after \"boom\"");
  EXPECT_EQ(Tree(LoggingLike(), "x='a'"), "x='a'");  // A quote like any character there.
}

TEST(FilterSyntaxTest, ErrorsAreWordedByTheGrammar) {
  EXPECT_EQ(Tree(ListLike(), "(a=1"), "error: invalid filter: missing \")\"");
  EXPECT_EQ(Tree(ListLike(), "a=1)"), "error: invalid filter: unexpected \")\" at position 4");
  EXPECT_EQ(Tree(ListLike(), "a='x"),
            "error: invalid filter: unterminated string starting at position 3");
  EXPECT_EQ(Tree(ListLike(), "a="), "error: invalid filter: missing value at the end");
  EXPECT_EQ(Tree(LoggingLike(), "(a=1"),
            "error: Unparseable filter: syntax error at line 1, column 5, token '<EOF>'");
  EXPECT_EQ(Tree(LoggingLike(), "a=1\n  OR ="),
            "error: Unparseable filter: syntax error at line 2, column 6, token '='");
  EXPECT_EQ(Tree(LoggingLike(), "a:\"x"),
            "error: Unparseable filter: syntax error at line 1, column 3, token '\"'");
  EXPECT_EQ(Tree(LoggingLike(), std::string(20001, 'a')),
            "error: filter is longer than 20000 characters");
}

// Hostile nesting is an error in every dialect, never a stack overflow: parentheses,
// NOTs, minus signs and (Logging) value groups.
TEST(FilterSyntaxTest, DeepNestingIsRefusedInEveryDialect) {
  for (const Dialect& d : AllDialects()) {
    EXPECT_FALSE(d.parse(std::string(10000, '(') + "labels.a=1").ok()) << d.name;
    std::string nots;
    for (int i = 0; i < 5000; ++i) nots += "NOT ";
    EXPECT_FALSE(d.parse(nots + "labels.a=1").ok()) << d.name;
    std::string minuses;  // Spaced: "--" starts a Logging comment.
    for (int i = 0; i < 5000; ++i) minuses += "- ";
    EXPECT_FALSE(d.parse(minuses + "labels.a=1").ok()) << d.name;
    // Within the limit, nesting works.
    EXPECT_TRUE(d.parse(std::string(30, '(') + "labels.a=1" + std::string(30, ')')).ok())
        << d.name << ": "
        << d.parse(std::string(30, '(') + "labels.a=1" + std::string(30, ')')).ToString();
  }
  EXPECT_FALSE(logs::LogFilter::Parse("labels.a=" + std::string(5000, '(') + "1").ok());
}

TEST(FilterSyntaxTest, GarbageIsAnErrorOrAFilterInEveryDialectNeverACrash) {
  // Beyond tests/logs/log_filter_test.cc's list (which runs in the Logging dialect only):
  // single quotes, unbalanced value groups, stray dots, dangling keywords, NUL.
  const std::vector<std::string> garbage = {"'",
                                            "a=(",
                                            "a=)",
                                            "labels.\"",
                                            "\"a\".",
                                            ". = .",
                                            "a=1 AND",
                                            "OR a=1",
                                            "NOT NOT",
                                            "a<=>b",
                                            "a=\"x\"y",
                                            "(((",
                                            ")))",
                                            "a:(\"x\" OR)",
                                            std::string("\x01\x02\xff"),
                                            std::string(1, '\0') + "=1"};
  for (const Dialect& d : AllDialects()) {
    for (const std::string& g : garbage) {
      Status s = d.parse(g);
      if (!s.ok()) {
        EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << d.name << ": " << g;
      }
    }
    // Some of them are certainly not filters.
    for (const char* bad : {"(((", ")))", "a=1 AND", "OR a=1", "()"}) {
      EXPECT_FALSE(d.parse(bad).ok()) << d.name << ": " << bad;
    }
  }
}

}  // namespace
}  // namespace ty::filter
