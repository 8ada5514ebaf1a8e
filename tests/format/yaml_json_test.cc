#include "format/yaml_json.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

namespace ty::format {
namespace {

using nlohmann::json;

json MustParse(std::string_view text) {
  Result<json> r = ParseYamlOrJson(text);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : json();
}

TEST(ParseYamlOrJsonTest, JsonIsParsedAsJson) {
  json j =
      MustParse(R"({"replicaCount": "1", "n": 2, "f": 1.5, "b": false, "z": null, "a": [1, "x"]})");
  EXPECT_EQ(j["replicaCount"], "1");
  EXPECT_TRUE(j["replicaCount"].is_string());
  EXPECT_EQ(j["n"], 2);
  EXPECT_DOUBLE_EQ(j["f"].get<double>(), 1.5);
  EXPECT_EQ(j["b"], false);
  EXPECT_TRUE(j["z"].is_null());
  EXPECT_EQ(j["a"], json::array({1, "x"}));
}

TEST(ParseYamlOrJsonTest, PlainScalarsResolveUnderCoreSchema) {
  json j = MustParse(
      "int: 42\nneg: -7\nplus: +3\nhex: 0x1F\noct: 0o17\nfloat: 2.5\nexp: 1e3\ndot: .5\n"
      "t: true\nT: True\nf: FALSE\nnul: null\ntilde: ~\nempty:\n"
      "yes11: yes\noff11: off\ninf: .inf\nword: hello world\nuri: gs://b/x\nbig: "
      "18446744073709551615\n");
  EXPECT_EQ(j["int"], 42);
  EXPECT_TRUE(j["int"].is_number_integer());
  EXPECT_EQ(j["neg"], -7);
  EXPECT_EQ(j["plus"], 3);
  EXPECT_EQ(j["hex"], 31);
  EXPECT_EQ(j["oct"], 15);
  EXPECT_DOUBLE_EQ(j["float"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(j["exp"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(j["dot"].get<double>(), 0.5);
  EXPECT_EQ(j["t"], true);
  EXPECT_EQ(j["T"], true);
  EXPECT_EQ(j["f"], false);
  EXPECT_TRUE(j["nul"].is_null());
  EXPECT_TRUE(j["tilde"].is_null());
  EXPECT_TRUE(j["empty"].is_null());
  EXPECT_EQ(j["yes11"], "yes");  // YAML 1.1 booleans stay strings.
  EXPECT_EQ(j["off11"], "off");
  EXPECT_EQ(j["inf"], ".inf");
  EXPECT_EQ(j["word"], "hello world");
  EXPECT_EQ(j["uri"], "gs://b/x");
  EXPECT_TRUE(j["big"].is_number_unsigned());
  EXPECT_EQ(j["big"].get<uint64_t>(), 18446744073709551615ULL);
}

// Found by fuzz/yaml_fuzzer.cc: a hex integer past a double's range threw out of stod and
// took the process down; "1e999" read as 0.
TEST(ParseYamlOrJsonTest, NumbersPastADoublesRangeStayText) {
  const std::string huge_hex = "0x" + std::string(300, 'f');
  const std::string huge_dec = std::string(400, '9');
  json j =
      MustParse("hex: " + huge_hex + "\ndec: " + huge_dec +
                "\nbig: 0x10000000000000000\nover: 1e999\nunder: 1e-999\nneg: -" + huge_dec + "\n");
  EXPECT_EQ(j["hex"], huge_hex);
  EXPECT_EQ(j["dec"], huge_dec);
  EXPECT_EQ(j["neg"], "-" + huge_dec);
  EXPECT_DOUBLE_EQ(j["big"].get<double>(), 18446744073709551616.0);
  EXPECT_EQ(j["over"], "1e999");
  EXPECT_DOUBLE_EQ(j["under"].get<double>(), 0.0);
  // Emitting such text must not throw either, and it must read back as the same text.
  json text = {{"v", huge_hex}, {"w", "1e999"}};
  EXPECT_EQ(MustParse(ToYaml(text)), text);
}

TEST(ParseYamlOrJsonTest, QuotedAndBlockScalarsStayStrings) {
  json j = MustParse(
      "a: \"1\"\nb: '2'\nc: 'true'\nd: \"null\"\ne: !!str 5\nf: |\n  line1\n  line2\ng: >\n  "
      "folded\n  text\n");
  EXPECT_EQ(j["a"], "1");
  EXPECT_EQ(j["b"], "2");
  EXPECT_EQ(j["c"], "true");
  EXPECT_EQ(j["d"], "null");
  EXPECT_EQ(j["e"], "5");
  EXPECT_EQ(j["f"], "line1\nline2\n");
  EXPECT_EQ(j["g"], "folded text\n");
}

TEST(ParseYamlOrJsonTest, NestedGcloudStyleConfig) {
  json j = MustParse(R"(
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-standard-8
  workerCount: 2
  args:
  - --epochs=10
  - "--lr=0.1"
  masterConfig:
    imageUri: gcr.io/p/t:1
labels:
  team: ml
)");
  EXPECT_EQ(j["trainingInput"]["scaleTier"], "CUSTOM");
  EXPECT_EQ(j["trainingInput"]["workerCount"], 2);
  EXPECT_EQ(j["trainingInput"]["args"], json::array({"--epochs=10", "--lr=0.1"}));
  EXPECT_EQ(j["trainingInput"]["masterConfig"]["imageUri"], "gcr.io/p/t:1");
  EXPECT_EQ(j["labels"]["team"], "ml");
}

TEST(ParseYamlOrJsonTest, EmptyTextIsNull) { EXPECT_TRUE(MustParse("").is_null()); }

TEST(ParseYamlOrJsonTest, AnchorsAreResolved) {
  json j = MustParse("base: &b {x: 1}\ncopy: *b\n");
  EXPECT_EQ(j["copy"]["x"], 1);
}

TEST(ParseYamlOrJsonTest, InvalidYamlReportsLine) {
  Result<json> r = ParseYamlOrJson("a: 1\nb: [1, 2\nc: 3\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("line"), std::string::npos) << r.status().message();
}

TEST(ParseYamlOrJsonTest, BrokenJsonReportsJsonError) {
  Result<json> r = ParseYamlOrJson(R"({"a": [1, 2})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("invalid JSON"), std::string::npos) << r.status().message();
}

TEST(ToYamlTest, BlockStyleLikeGcloud) {
  json j = json::parse(R"({"displayName": "train-1", "jobSpec": {"workerPoolSpecs": [
      {"replicaCount": "1", "containerSpec": {"imageUri": "gcr.io/p/t:1", "args": ["--epochs=10"]}},
      {}]}, "labels": {}})");
  EXPECT_EQ(ToYaml(j),
            "displayName: train-1\n"
            "jobSpec:\n"
            "  workerPoolSpecs:\n"
            "  - containerSpec:\n"
            "      args:\n"
            "      - --epochs=10\n"
            "      imageUri: gcr.io/p/t:1\n"
            "    replicaCount: \"1\"\n"
            "  - {}\n"
            "labels: {}\n");
}

TEST(ToYamlTest, QuotesOnlyWhenNeeded) {
  json j = {
      {"plain", "n1-standard-4"}, {"num", "1"},    {"bool", "true"}, {"yes", "yes"}, {"empty", ""},
      {"colon", "a: b"},          {"dash", "- x"}, {"hash", "#x"},   {"nl", "a\nb"}, {"int", 3},
      {"null", nullptr}};
  std::string y = ToYaml(j);
  EXPECT_NE(y.find("plain: n1-standard-4\n"), std::string::npos) << y;
  EXPECT_NE(y.find("num: \"1\"\n"), std::string::npos) << y;
  EXPECT_NE(y.find("bool: \"true\"\n"), std::string::npos) << y;
  EXPECT_NE(y.find("\"yes\": \"yes\"\n"), std::string::npos) << y;
  EXPECT_NE(y.find("empty: \"\"\n"), std::string::npos) << y;
  EXPECT_NE(y.find("colon: \"a: b\"\n"), std::string::npos) << y;
  EXPECT_NE(y.find("nl: \"a\\nb\"\n"), std::string::npos) << y;
  EXPECT_NE(y.find("int: 3\n"), std::string::npos) << y;
  EXPECT_NE(y.find("\"null\": null\n"), std::string::npos) << y;
}

TEST(ToYamlTest, RoundTripsThroughParse) {
  json j = json::parse(R"({
    "s": ["123", "1.5", "true", "no", "", "a: b", "- x", "#c", "x #y", "multi\nline", "--flag=1",
          "gs://b/x/", "héllo", " lead", "trail ", "{x}", "[y]", "*a", "&b", "!t", "%p", "@q", "'q'", "\"dq\"",
          "tab\there", "-", "-1", "0x10", "~", "null", "key:"],
    "n": [0, -5, 3.25, 1e100, true, false, null],
    "nested": [[1, [2, {"k": "v"}]], {"a": {"b": []}}, {}],
    "weird key: x": 1, "123": "numeric key"
  })");
  Result<json> back = ParseYamlOrJson(ToYaml(j));
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << ToYaml(j);
  EXPECT_EQ(*back, j) << ToYaml(j);
}

TEST(ToYamlTest, ScalarAndEmptyTopLevel) {
  EXPECT_EQ(ToYaml(json("x")), "x\n");
  EXPECT_EQ(ToYaml(json::object()), "{}\n");
  EXPECT_EQ(ToYaml(json::array({1, 2})), "- 1\n- 2\n");
}

TEST(ReadYamlOrJsonFileTest, ReadsYamlFile) {
  std::string path = ::testing::TempDir() + "yaml_json_test_config.yaml";
  {
    std::ofstream out(path);
    out << "jobId: census_001\ntrainingInput:\n  region: us-central1\n";
  }
  Result<json> r = ReadYamlOrJsonFile(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["jobId"], "census_001");
  EXPECT_EQ((*r)["trainingInput"]["region"], "us-central1");
  std::remove(path.c_str());
}

TEST(ReadYamlOrJsonFileTest, MissingFileIsNotFound) {
  Result<json> r = ReadYamlOrJsonFile(::testing::TempDir() + "does-not-exist.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(ReadYamlOrJsonFileTest, ParseErrorNamesThePath) {
  std::string path = ::testing::TempDir() + "yaml_json_test_bad.yaml";
  {
    std::ofstream out(path);
    out << "a: [1,\n";
  }
  Result<json> r = ReadYamlOrJsonFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(path), std::string::npos);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ty::format

namespace ty::format {
namespace {

// Found by fuzz/yaml_fuzzer.cc (issue 19): YAML takes any bytes, so a file with a
// string that is not UTF-8 parsed, and every later dump() of it threw (the CLI's
// request body, its YAML output). Such text is refused up front.
TEST(ParseYamlOrJsonTest, TextThatIsNotUtf8IsRefused) {
  for (const std::string& bad : {std::string("name: a\xff"
                                             "b\n"),
                                 std::string("x: \xe0\xe0\n"),
                                 std::string("k: \xed\xa0\x80\n"),  // A surrogate.
                                 std::string("k: \xc0\xaf\n")}) {   // Overlong '/'.
    Result<nlohmann::json> r = ParseYamlOrJson(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("not valid UTF-8"), std::string::npos);
  }
  // A NUL made yaml-cpp read the text as UTF-16 and hand back bytes of no encoding.
  Result<nlohmann::json> nul = ParseYamlOrJson(std::string("listen: 127.0.0.\x01\0N4YAML:1", 25));
  ASSERT_FALSE(nul.ok());
  EXPECT_NE(nul.status().message().find("control character"), std::string::npos);
  // An alias inside its own anchor made a cycle that recursed to a stack overflow.
  EXPECT_FALSE(ParseYamlOrJson("&a\nr: *a\n").ok());
  // yaml-cpp turns the escape \N into the single byte 0x85, which is not UTF-8.
  Result<nlohmann::json> nel = ParseYamlOrJson(R"(name: "a\Nb")");
  ASSERT_FALSE(nel.ok());
  EXPECT_NE(nel.status().message().find("not valid UTF-8"), std::string::npos);
  Result<nlohmann::json> ok = ParseYamlOrJson("name: caf\xc3\xa9 \xf0\x9f\x9a\x82\n");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ToYaml(*ok), "name: caf\xc3\xa9 \xf0\x9f\x9a\x82\n");
}

}  // namespace
}  // namespace ty::format
