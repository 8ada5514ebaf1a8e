// A study (hyperparameter tuning) as the service keeps it: the search space, the goal,
// the budget and the algorithm, for both dialects (ml v1 `trainingInput.hyperparameters`,
// Vertex `HyperparameterTuningJob.studySpec`). Plain values; tuning/ turns them into
// suggestions. Pure; safe to copy.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace ty::model {

enum class ParamType { kDouble, kInteger, kCategorical, kDiscrete };
// "DOUBLE", "INTEGER", "CATEGORICAL", "DISCRETE": the APIs' spelling.
const char* ParamTypeName(ParamType t);
enum class Scale { kLinear, kLog, kReverseLog };

struct ConditionalChild;

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kDouble;
  double min = 0;  // DOUBLE, INTEGER (inclusive).
  double max = 0;
  std::vector<double> discrete;         // DISCRETE: strictly increasing.
  std::vector<std::string> categories;  // CATEGORICAL: distinct.
  Scale scale = Scale::kLinear;
  std::vector<ConditionalChild> children;  // Active only when this one's value matches.
};

// A child parameter and the parent values that make it active: numbers for INTEGER
// and DISCRETE parents, category names for CATEGORICAL ones.
struct ConditionalChild {
  std::vector<double> parent_numbers;
  std::vector<std::string> parent_categories;
  ParamSpec spec;
};

struct ParamValue {
  double number = 0;     // DOUBLE, INTEGER (integral), DISCRETE.
  std::string category;  // CATEGORICAL.
  bool operator==(const ParamValue& o) const {
    return number == o.number && category == o.category;
  }
};

// The values of the active parameters of one trial, by name.
using Assignment = std::map<std::string, ParamValue>;

// Formats a value as trials receive it on the command line (`--name=value`) and as ml
// v1 reports it: integers without a fraction, doubles in the shortest exact form.
std::string FormatValue(const ParamSpec& spec, const ParamValue& value);

// Bounds on what one study may ask for, so that a request cannot make the daemon (or
// the tuner, whose work grows with parameters x trials) allocate without limit: 10,000
// DOUBLE parameters once grew the daemon to 20 GB, maxTrialCount = 10^6 took 4 GB.
// Google's API references publish no numeric limits for these fields (neither ml v1
// `HyperparameterSpec` nor Vertex `StudySpec`); these are ours, far above what
// Bayesian optimisation is useful for (its guidance is tens of parameters).
inline constexpr size_t kMaxStudyParams = 100;       // Counting conditional children.
inline constexpr int kMaxConditionalDepth = 4;       // Children of children of ...
inline constexpr size_t kMaxParamValues = 1000;      // Discrete, categorical, parent values.
inline constexpr size_t kMaxCategoryChars = 256;     // One categorical value.
inline constexpr int32_t kMaxStudyTrials = 10000;    // maxTrials / maxTrialCount.
inline constexpr int32_t kMaxParallelTrials = 1000;  // maxParallelTrials / parallelTrialCount.

// Checks a search space's rules (names unique and non-empty, without whitespace or
// '='; min < max; integral INTEGER bounds; log scales on positive ranges; discrete
// values increasing; categories distinct; the bounds above; conditions on INTEGER,
// DISCRETE or CATEGORICAL parents naming values the parent takes). The message names
// the parameter and the rule.
Status ValidateParams(const std::vector<ParamSpec>& params);
// The same for one parameter, without its children.
Status ValidateParam(const ParamSpec& param);

enum class Goal { kMaximize, kMinimize };
enum class Algorithm { kBayesian, kGrid, kRandom };
// "ALGORITHM_UNSPECIFIED" (or "") | "GRID_SEARCH" | "RANDOM_SEARCH": the APIs' spelling.
Result<Algorithm> ParseAlgorithm(const std::string& name);
const char* AlgorithmName(Algorithm a);

// Automated early stopping of trials (tuning/early_stopping.h).
enum class StoppingRule { kNone, kMedian, kDecayCurve };
// Which reported measurement is a trial's final one (Vertex measurementSelectionType).
enum class MeasurementSelection { kLast, kBest };

inline constexpr char kDefaultMetricTag[] = "training/hptuning/metric";

struct StudySpec {
  std::vector<ParamSpec> params;
  Goal goal = Goal::kMaximize;
  std::string metric_tag;  // ml v1 hyperparameterMetricTag / Vertex metricId; "" = default.
  int32_t max_trials = 1;
  int32_t parallel_trials = 1;
  int32_t max_failed_trials = 0;  // 0: the service decides (the first trial failing ends it).
  Algorithm algorithm = Algorithm::kBayesian;
  StoppingRule stopping = StoppingRule::kNone;
  bool stopping_use_elapsed = false;  // Compare by elapsed time instead of steps.
  MeasurementSelection selection = MeasurementSelection::kLast;
  std::string resume_previous_job_id;  // ml v1 resumePreviousJobId.

  const std::string& tag() const {
    static const std::string kDefault = kDefaultMetricTag;
    return metric_tag.empty() ? kDefault : metric_tag;
  }
};

}  // namespace ty::model
