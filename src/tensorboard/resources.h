// Vertex AI TensorBoard's resources as Trainyard keeps them: a tensorboard holds
// experiments, an experiment runs, a run time series, a time series its scalar points
// (aiplatform v1: Tensorboard, TensorboardExperiment, TensorboardRun,
// TensorboardTimeSeries, TimeSeriesDataPoint). Plain data; the store
// (tensorboard/store.h) checks and keeps them.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"
#include "common/time.h"

namespace ty::tensorboard {

// Where a resource is, from the tensorboard down: the deepest non-empty field says
// which kind it names.
struct ResourcePath {
  std::string project;
  std::string location;
  std::string tensorboard;
  std::string experiment;
  std::string run;
  std::string time_series;

  // "projects/P/locations/L/tensorboards/T[/experiments/E[/runs/R[/timeSeries/S]]]".
  std::string name() const;
  ResourcePath Tensorboard() const { return {project, location, tensorboard, "", "", ""}; }
  ResourcePath Experiment() const { return {project, location, tensorboard, experiment, "", ""}; }
  ResourcePath Run() const { return {project, location, tensorboard, experiment, run, ""}; }
};

// "projects/P/locations/L/tensorboards/T" -> its path; InvalidArgument naming `field`
// for anything else.
Result<ResourcePath> ParseTensorboardName(const std::string& name, const std::string& field);

// What every resource here has.
struct Described {
  std::string display_name;
  std::string description;
  std::map<std::string, std::string> labels;
  TimeMicros create_time = 0;
  TimeMicros update_time = 0;
};

struct Tensorboard : Described {
  ResourcePath path;
  int64_t run_count = 0;  // Runs in all its experiments (Tensorboard.runCount).
};

struct Experiment : Described {
  ResourcePath path;
  std::string source;  // "" for one a client made; "trainyard" for a job's.
};

struct Run : Described {
  ResourcePath path;
};

struct TimeSeries : Described {
  ResourcePath path;
  std::string value_type = "SCALAR";
  std::string plugin_name = "scalars";
  int64_t max_step = 0;          // Of its points (TimeSeries.metadata.maxStep).
  TimeMicros max_wall_time = 0;  // TimeSeries.metadata.maxWallTime.
  int64_t max_blob_sequence_length = 0;
};

struct Point {
  int64_t step = 0;
  TimeMicros wall_time = 0;
  double value = 0;
};

// Ids: Vertex's rule for client-chosen experiment and run ids ([a-z0-9][a-z0-9-]{0,127}).
Status CheckChildId(const std::string& id, const std::string& field);

}  // namespace ty::tensorboard
