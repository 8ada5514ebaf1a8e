// The metrics file Google's cloudml-hypertune library writes in a trial
// (docs/contracts/runtime.md §8): the whole file is rewritten on every report and holds
// the last 100 reports, one JSON object per line, sort_keys order:
//
//   {"accuracy": "0.81", "checkpoint_path": "", "global_step": "100",
//    "timestamp": 1690000000.123456, "trial": "3"}
//
// The metric value and global_step are strings; timestamp is a number. An empty tag
// was written as `training/hptuning/metric`. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ty::tuning {

inline constexpr char kDefaultMetricTag[] = "training/hptuning/metric";
// Where the library writes by default (CLOUD_ML_HP_METRIC_FILE overrides it).
inline constexpr char kDefaultMetricFile[] = "/tmp/hypertune/output.metrics";

struct Measurement {
  int64_t step = 0;  // global_step.
  double value = 0;
  double timestamp = 0;  // Seconds since the epoch, as reported.
};

struct MetricsFile {
  std::vector<Measurement> measurements;  // In file order (oldest first).
  int64_t skipped = 0;  // Lines that were not a report of `tag` (malformed, other tag).
};

// Reads every line reporting `tag` ("" = the default tag). Malformed lines, values that
// are not finite numbers and lines of other tags are skipped and counted; never fails.
MetricsFile ParseMetricsFile(std::string_view text, std::string_view tag);

}  // namespace ty::tuning
