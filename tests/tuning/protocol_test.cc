// The APIs' parameter JSON and the tuner protocol (docs/contracts/tuner-protocol.md).
#include <gtest/gtest.h>

#include "fakes/study_params.h"
#include "tuning/assignment_json.h"
#include "tuning/protocol_session.h"
#include "wire/study_json.h"

namespace ty::tuning {
namespace {

using nlohmann::json;

const json& kMixedParams = testing::MixedParamsJson();
json Call(ProtocolSession& s, const std::string& line) { return s.Handle(json::parse(line)); }

TEST(ProtocolSessionTest, RunsAStudyWithSuggestReportAddAndClose) {
  ProtocolSession s(Algorithm::kBayesian);
  json create = {{"op", "create"},
                 {"seed", 3},
                 {"study",
                  {{"goal", "MAXIMIZE"},
                   {"hyperparameterMetricTag", "accuracy"},
                   {"maxTrials", 12},
                   {"maxParallelTrials", 2},
                   {"params", kMixedParams}}}};
  json reply = s.Handle(create);
  ASSERT_TRUE(reply["ok"]) << reply.dump();
  EXPECT_EQ(reply["tuner"], "trainyard");
  auto space = SearchSpace::Create(*wire::ParseMlParams(kMixedParams, "p"));
  for (int round = 0; round < 5; ++round) {
    json sug = Call(s, R"({"op":"suggest","count":2})");
    ASSERT_TRUE(sug["ok"]) << sug.dump();
    ASSERT_EQ(sug["trials"].size(), 2u);
    for (const json& t : sug["trials"]) {
      // Every parameter, no other, each valid; INTEGER as a JSON integer.
      ASSERT_EQ(t["params"].size(), 6u);
      EXPECT_TRUE(t["params"]["num_layers"].is_number_integer()) << t.dump();
      EXPECT_TRUE(AssignmentFromJson(*space, t["params"]).ok()) << t.dump();
      json rep = {{"op", "report"}, {"trial", t["trial"]}, {"value", 0.5 + 0.01 * round}};
      EXPECT_TRUE(s.Handle(rep)["ok"]);
    }
  }
  json add = {{"op", "add"},
              {"params",
               {{"learning_rate", 0.01},
                {"optimizer", "adam"},
                {"num_layers", 3},
                {"batch_size", 64},
                {"dropout", 0.1},
                {"beta", 0.9}}},
              {"value", 0.9}};
  EXPECT_TRUE(s.Handle(add)["ok"]);
  EXPECT_TRUE(Call(s, R"({"op":"close"})")["ok"]);
  EXPECT_TRUE(s.closed());
}

TEST(ProtocolSessionTest, AnswersBadRequestsWithErrorsAndNeverThrows) {
  ProtocolSession s(Algorithm::kRandom);
  EXPECT_EQ(Call(s, R"({"op":"suggest","count":1})")["error"], "'suggest' before 'create'");
  EXPECT_FALSE(Call(s, R"({"nope":1})")["ok"]);
  EXPECT_FALSE(Call(s, R"({"op":"create","study":{"goal":7,"params":[]}})")["ok"]);
  json created = Call(s, R"({"op":"create","seed":1,"study":{"goal":"MINIMIZE","maxTrials":3,
      "maxParallelTrials":1,"params":[{"parameterName":"x","type":"DOUBLE","minValue":0,"maxValue":1}]}})");
  ASSERT_TRUE(created["ok"]) << created.dump();
  EXPECT_EQ(Call(s, R"({"op":"report","trial":99,"value":1})")["error"], "trial 99 is not pending");
  EXPECT_FALSE(Call(s, R"({"op":"add","params":{"x":2},"value":1})")["ok"]);
  EXPECT_FALSE(Call(s, R"({"op":"add","params":{"y":0.5},"value":1})")["ok"]);
  EXPECT_FALSE(Call(s, R"({"op":"suggest","count":"two"})")["ok"]);
  EXPECT_FALSE(Call(s, R"({"op":"dance"})")["ok"]);
}

TEST(ProtocolSessionTest, GridSearchSaysWhenTheSpaceRunsOut) {
  ProtocolSession s(Algorithm::kGrid);
  ASSERT_TRUE(Call(s, R"({"op":"create","seed":1,"study":{"goal":"MINIMIZE","maxTrials":3,
      "maxParallelTrials":3,"params":[{"parameterName":"n","type":"INTEGER","minValue":1,"maxValue":2}]}})")
                  ["ok"]);
  json reply = Call(s, R"({"op":"suggest","count":3})");
  EXPECT_FALSE(reply["ok"]);
  EXPECT_EQ(reply["error"], "the search space has only 2 unseen points left for 3 trials");
}

}  // namespace
}  // namespace ty::tuning
