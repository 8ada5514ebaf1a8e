// Search spaces in both dialects' JSON (wire/study_json.h).
#include "wire/study_json.h"

#include <gtest/gtest.h>

#include <functional>

#include "fakes/study_params.h"
#include "model/spec_record.h"
#include "wire/dialect.h"

namespace ty::wire {

using namespace model;
namespace {

using nlohmann::json;

const json& kMixedParams = testing::MixedParamsJson();
// The Vertex SDK's REST transport sends every enum as its number (docs/contracts/client-wire.md): a
// scaleType of 2 was a 400 ("must be a string"), before that a 500.
TEST(StudyJsonTest, EnumsMayBeNumbers) {
  json ml = json::parse(R"([{"parameterName": "lr", "type": 1, "minValue": 0.001, "maxValue": 1,
                             "scaleType": 2},
                            {"parameterName": "n", "type": 2, "minValue": 1, "maxValue": 5}])");
  auto params = ParseMlParams(ml, "p");
  ASSERT_TRUE(params.ok()) << params.status().message();
  EXPECT_EQ((*params)[0].type, ParamType::kDouble);
  EXPECT_EQ((*params)[0].scale, Scale::kLog);
  EXPECT_EQ((*params)[1].type, ParamType::kInteger);
  json vertex = json::parse(R"({"metrics": [{"metricId": "acc", "goal": 2}], "algorithm": 3,
      "measurementSelectionType": 2, "parameters": [
        {"parameterId": "lr", "doubleValueSpec": {"minValue": 0.001, "maxValue": 1}, "scaleType": 3},
        {"parameterId": "c", "categoricalValueSpec": {"values": ["a", "b"]},
         "conditionalParameterSpecs": [{"parentCategoricalValues": {"values": ["a"]},
           "parameterSpec": {"parameterId": "d", "discreteValueSpec": {"values": [1, 2]},
                             "scaleType": 1}}]}]})");
  StudySpec study;
  auto canonical = ParseVertexStudySpec(vertex, "studySpec", &study);
  ASSERT_TRUE(canonical.ok()) << canonical.status().message();
  EXPECT_EQ(study.goal, Goal::kMinimize);
  EXPECT_EQ(study.algorithm, Algorithm::kRandom);  // Vertex numbers it 3 (ml v1: 2).
  EXPECT_EQ(study.selection, MeasurementSelection::kBest);
  EXPECT_EQ(study.params[0].scale, Scale::kReverseLog);
  // Stored by name, so every client reads the same job back...
  EXPECT_EQ((*canonical)["algorithm"], "RANDOM_SEARCH");
  EXPECT_EQ((*canonical)["metrics"][0]["goal"], "MINIMIZE");
  EXPECT_EQ((*canonical)["parameters"][0]["scaleType"], "UNIT_REVERSE_LOG_SCALE");
  EXPECT_EQ(
      (*canonical)["parameters"][1]["conditionalParameterSpecs"][0]["parameterSpec"]["scaleType"],
      "UNIT_LINEAR_SCALE");
  // ...and numbers go back out where a client asks for them.
  json out = *canonical;
  VertexStudySpecEnumsToInt(out);
  EXPECT_EQ(out["algorithm"], 3);
  EXPECT_EQ(out["metrics"][0]["goal"], 2);
  EXPECT_EQ(out["measurementSelectionType"], 2);
  EXPECT_EQ(out["parameters"][0]["scaleType"], 3);
  EXPECT_EQ(out["parameters"][1]["conditionalParameterSpecs"][0]["parameterSpec"]["scaleType"], 1);
  vertex["algorithm"] = 1;  // Unused in Vertex's numbering.
  EXPECT_EQ(ParseVertexStudySpec(vertex, "studySpec", &study).status().field(),
            "studySpec.algorithm");
}

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
  // Found by fuzz/ml_job_fuzzer.cc (issue 19): members of another type threw from
  // nlohmann's value() (a 500, or a crash outside a handler). Now 400s naming them.
  bad = kMixedParams;
  bad[0]["parameterName"] = 1;
  EXPECT_EQ(ParseMlParams(bad, "p").status().field(), "p[0].parameterName");
  bad = kMixedParams;
  bad[1]["type"] = json::array();
  EXPECT_EQ(ParseMlParams(bad, "p").status().field(), "p[1].type");
  bad = kMixedParams;
  bad[0]["scaleType"] = 9;  // No such ScaleType number.
  EXPECT_EQ(ParseMlParams(bad, "p").status().field(), "p[0].scaleType");
  bad[0]["scaleType"] = true;
  EXPECT_EQ(ParseMlParams(bad, "p").status().field(), "p[0].scaleType");
  json vertex = json::array({{{"parameterId", 5}, {"doubleValueSpec", 1}}});
  EXPECT_EQ(ParseVertexParams(vertex, "v").status().field(), "v[0].parameterId");
  vertex[0]["parameterId"] = "x";
  EXPECT_FALSE(ParseVertexParams(vertex, "v").ok());
  vertex[0] = {{"parameterId", "d"}, {"discreteValueSpec", "not an object"}};
  EXPECT_EQ(ParseVertexParams(vertex, "v").status().field(), "v[0].discreteValueSpec.values");
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

// Issue 30 item 6: integer bounds are read exactly, never through a double; on
// 3c2a683 "-9007199254740993" (2^53 + 1, which a double rounds) was accepted.
TEST(StudyJsonTest, IntegerBoundsAreExactInt64WithinTwoToThe53) {
  auto vertex = [](const json& min, const json& max) {
    return ParseVertexParams(
        json::array(
            {{{"parameterId", "n"}, {"integerValueSpec", {{"minValue", min}, {"maxValue", max}}}}}),
        "v");
  };
  EXPECT_TRUE(vertex("-9007199254740992", "9007199254740992").ok());
  EXPECT_TRUE(vertex(1, 2.0).ok()) << "an integral number, as proto3 parsers accept";
  for (const json& bad : {json("-9007199254740993"), json("9007199254740993"), json("1.5"),
                          json(1.5), json("9223372036854775808"), json("1e3"), json("+4")}) {
    auto parsed = vertex(bad, "10000000000000000");
    ASSERT_FALSE(parsed.ok()) << bad.dump();
    EXPECT_EQ(parsed.status().field(), "v[0].integerValueSpec.minValue") << bad.dump();
  }
  json ml = json::array({{{"parameterName", "n"},
                          {"type", "INTEGER"},
                          {"minValue", "-9007199254740993"},
                          {"maxValue", 3}}});
  EXPECT_EQ(ParseMlParams(ml, "p").status().field(), "p[0].minValue");
  ml[0]["minValue"] = 1;
  EXPECT_TRUE(ParseMlParams(ml, "p").ok());
}

}  // namespace
}  // namespace ty::wire

namespace ty::wire {

using namespace model;
namespace {

json VertexStudyBody() {
  return json::parse(R"({
    "displayName": "study",
    "studySpec": {
      "metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
      "parameters": [
        {"parameterId": "opt", "categoricalValueSpec": {"values": ["sgd", "adam"]},
         "conditionalParameterSpecs": [
           {"parameterSpec": {"parameterId": "momentum",
                              "doubleValueSpec": {"minValue": 0, "maxValue": 0.99}},
            "parentCategoricalValues": {"values": ["sgd"]}}]},
        {"parameterId": "lr", "doubleValueSpec": {"minValue": 0.0001, "maxValue": 0.1},
         "scaleType": "UNIT_LOG_SCALE"}],
      "measurementSelectionType": "BEST_MEASUREMENT",
      "medianAutomatedStoppingSpec": {"useElapsedDuration": true}},
    "maxTrialCount": 8, "parallelTrialCount": 2, "maxFailedTrialCount": 3,
    "trialJobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "n1-standard-4"},
                                          "replicaCount": "1",
                                          "containerSpec": {"imageUri": "img"}}]},
    "labels": {"team": "ml"}})");
}

TEST(VertexStudyTest, AHyperparameterTuningJobBecomesAStudyOverItsTrialSpec) {
  Result<ParsedJob> r = ParseVertexHyperparameterTuningJob(VertexStudyBody());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->spec.study != nullptr);
  const StudySpec& s = *r->spec.study;
  EXPECT_EQ(s.goal, Goal::kMinimize);
  EXPECT_EQ(s.tag(), "loss");
  EXPECT_EQ(s.max_trials, 8);
  EXPECT_EQ(s.parallel_trials, 2);
  EXPECT_EQ(s.max_failed_trials, 3);
  EXPECT_EQ(s.selection, MeasurementSelection::kBest);
  EXPECT_EQ(s.stopping, StoppingRule::kMedian);
  EXPECT_TRUE(s.stopping_use_elapsed);
  ASSERT_EQ(s.params.size(), 2u);
  ASSERT_EQ(s.params[0].children.size(), 1u);
  ASSERT_EQ(r->spec.pools.size(), 1u);
  EXPECT_EQ(r->spec.display_name, "study");
  EXPECT_EQ(r->kind, JobKind::kStudy);
  // The stored form parses back to the same study (jobs stored without a record).
  Result<JobSpec> back = ParseStoredSpec(Dialect::kVertex, r->kind, r->spec_json);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->study != nullptr);
  EXPECT_EQ(EncodeStudy(*back->study), EncodeStudy(s));
}

TEST(VertexStudyTest, ABrokenHyperparameterTuningJobNamesTheField) {
  auto field_of = [](const std::function<void(json&)>& edit) {
    json body = VertexStudyBody();
    edit(body);
    Result<ParsedJob> r = ParseVertexHyperparameterTuningJob(body);
    return r.ok() ? std::string("(accepted)") : r.status().field();
  };
  EXPECT_EQ(field_of([](json& b) { b["studySpec"]["metrics"] = json::array(); }),
            "studySpec.metrics");
  EXPECT_EQ(field_of([](json& b) { b.erase("parallelTrialCount"); }), "parallelTrialCount");
  EXPECT_EQ(field_of([](json& b) { b["maxFailedTrialCount"] = 9; }), "maxFailedTrialCount");
  EXPECT_EQ(field_of([](json& b) { b["trialJobSpec"]["workerPoolSpecs"][0].erase("machineSpec"); }),
            "trialJobSpec.workerPoolSpecs[0].machineSpec");
  EXPECT_EQ(
      field_of([](json& b) { b["studySpec"]["convexAutomatedStoppingSpec"] = json::object(); }),
      "studySpec.convexAutomatedStoppingSpec");
  EXPECT_EQ(field_of([](json& b) { b["studySpec"]["decayCurveStoppingSpec"] = json::object(); }),
            "studySpec.medianAutomatedStoppingSpec");
  EXPECT_EQ(field_of([](json& b) { b["studySpec"]["algorithm"] = "GRID_SEARCH"; }),
            "studySpec.algorithm");
  EXPECT_EQ(field_of([](json& b) { b["studySpec"]["metrics"][0]["metricId"] = "a b"; }),
            "studySpec.metrics[0].metricId");
}

}  // namespace
}  // namespace ty::wire
