// Search spaces in both dialects' JSON (model/study_json.h).
#include "model/study_json.h"

#include <gtest/gtest.h>

namespace ty::model {
namespace {

using nlohmann::json;

const json kMixedParams = json::parse(R"([
  {"parameterName":"learning_rate","type":"DOUBLE","minValue":1e-05,"maxValue":1.0,"scaleType":"UNIT_LOG_SCALE"},
  {"parameterName":"optimizer","type":"CATEGORICAL","categoricalValues":["sgd","momentum","rmsprop","adam"]},
  {"parameterName":"num_layers","type":"INTEGER","minValue":1,"maxValue":10,"scaleType":"UNIT_LINEAR_SCALE"},
  {"parameterName":"batch_size","type":"DISCRETE","discreteValues":[16,32,64,128,256,512],"scaleType":"UNIT_LOG_SCALE"},
  {"parameterName":"dropout","type":"DOUBLE","minValue":0.0,"maxValue":0.7},
  {"parameterName":"beta","type":"DOUBLE","minValue":0.001,"maxValue":0.999,"scaleType":"UNIT_REVERSE_LOG_SCALE"}])");

TEST(StudyJsonTest, ReadsMlParamsAndNamesTheBrokenField) {
  auto params = ParseMlParams(kMixedParams, "trainingInput.hyperparameters.params");
  ASSERT_TRUE(params.ok()) << params.status().message();
  ASSERT_EQ(params->size(), 6u);
  EXPECT_EQ((*params)[0].scale, Scale::kLog);
  EXPECT_EQ((*params)[3].discrete.back(), 512);

  json bad = kMixedParams;
  bad[2]["type"] = "PARAMETER_TYPE_UNSPECIFIED";
  auto r = ParseMlParams(bad, "trainingInput.hyperparameters.params");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "trainingInput.hyperparameters.params[2].type");
  bad = kMixedParams;
  bad[0]["minValue"] = 0;
  r = ParseMlParams(bad, "p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "p[0]");
  EXPECT_NE(r.status().message().find("a log scale needs a strictly positive range"),
            std::string::npos);
  bad = kMixedParams;
  bad[4].erase("maxValue");
  EXPECT_EQ(ParseMlParams(bad, "p").status().field(), "p[4].maxValue");
  EXPECT_EQ(ParseMlParams(json::array(), "p").status().field(), "p");
}

TEST(StudyJsonTest, ReadsVertexParametersWithConditionalChildren) {
  json params = json::parse(R"([
    {"parameterId":"optimizer","categoricalValueSpec":{"values":["sgd","adam"]},
     "conditionalParameterSpecs":[
       {"parameterSpec":{"parameterId":"momentum","doubleValueSpec":{"minValue":0,"maxValue":0.99}},
        "parentCategoricalValues":{"values":["sgd"]}}]},
    {"parameterId":"units","integerValueSpec":{"minValue":"8","maxValue":"512"},"scaleType":"UNIT_LOG_SCALE"}])");
  auto parsed = ParseVertexParams(params, "studySpec.parameters");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  ASSERT_EQ(parsed->size(), 2u);
  ASSERT_EQ((*parsed)[0].children.size(), 1u);
  EXPECT_EQ((*parsed)[0].children[0].parent_categories, std::vector<std::string>{"sgd"});
  EXPECT_EQ((*parsed)[1].max, 512);  // int64 written as a string.
  params[0]["conditionalParameterSpecs"][0].erase("parentCategoricalValues");
  auto bad = ParseVertexParams(params, "studySpec.parameters");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "studySpec.parameters[0].conditionalParameterSpecs[0]");
}

}  // namespace
}  // namespace ty::model
