// How a study's trials read back (docs/contracts/ml-v1.md §6 TrainingOutput and
// HyperparameterOutput): best trial first, values as strings, int64 as strings. Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "model/job.h"

namespace ty::wire {

// The domain types the wire forms stand for.
using model::Goal;
using model::Job;
using model::Trial;

// The trials in the order users read them: succeeded trials best first (by the
// study's goal), then the others by id.
std::vector<const Trial*> TrialsBestFirst(const std::vector<Trial>& trials, Goal goal);

// The canonical `trainingInput.hyperparameters` of a rendered ml v1 job; {} if none.
nlohmann::json MlHyperparametersOf(const nlohmann::json& rendered);

// ml v1 `trainingOutput` of a tuning job whose rendered wire form (with its
// canonical `trainingInput.hyperparameters`) is `rendered`.
nlohmann::json MlStudyTrainingOutput(const Job& job, const nlohmann::json& rendered);

// Vertex `HyperparameterTuningJob.trials` (docs/contracts/vertex-v1.md §8) in id order, for a
// job whose rendered form (with its canonical `studySpec`) is `rendered`. Failed and
// cancelled trials are INFEASIBLE with their reason, as Vertex shows them.
nlohmann::json VertexTrials(const Job& job, const nlohmann::json& rendered);

}  // namespace ty::wire
