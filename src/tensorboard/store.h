// The TensorBoard store: every tensorboard of every project, their experiments, runs
// and time series, the scalar points, and how far each event file has been read, in
// one SQLite database (<data dir>/tensorboards.db, WAL). An indexing pass writes its
// points and the new file offsets in one transaction, so a daemon that dies mid-pass
// reads the same records again and stores each point once.
//
// Limits keep one project from filling the daemon's disk or memory: tensorboards per
// project, runs per experiment, time series per run and points per time series
// (further points of a full series are counted and dropped). Pages are bounded.
//
// Thread-safe: one connection behind a mutex (API threads and the indexer).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "tensorboard/event_decoder.h"
#include "tensorboard/resources.h"

namespace ty::tensorboard {

class SqliteDb;  // tensorboard/sqlite_db.h

struct Limits {
  size_t tensorboards_per_project = 100;
  size_t experiments_per_tensorboard = 10000;
  size_t runs_per_experiment = 1000;
  size_t series_per_run = 1000;
  int64_t points_per_series = 100000;
};

// A page of a list: items and the token of the next page ("" on the last).
template <typename T>
struct Page {
  std::vector<T> items;
  std::string next_page_token;
};

struct PageRequest {
  int page_size = 0;  // 0 = 50; at most 1000.
  std::string page_token;
};

// What reading a time series asks: points with a step in [min_step, max_step], the
// first `max_points` of them in step order (0 = 1000; at most 10000).
struct PointQuery {
  int64_t min_step = INT64_MIN;
  int64_t max_step = INT64_MAX;
  int max_points = 0;
};

// One pass of the indexer over a job's log directory: the experiment it writes to, the
// scalars of each run, and where each file's reading got to.
struct IndexBatch {
  ResourcePath experiment;  // Tensorboard and experiment ids.
  std::string experiment_display_name;
  struct RunPoints {
    std::string run;           // Id.
    std::string display_name;  // The event files' directory, relative to the log dir.
    std::vector<ScalarPoint> points;
  };
  std::vector<RunPoints> runs;
  struct FileProgress {
    std::string key;  // The file, relative to the log directory's bucket root.
    uint64_t offset = 0;
    uint64_t bad_records = 0;  // Added to what was counted before.
    bool corrupt = false;
  };
  std::vector<FileProgress> files;
};

struct FileState {
  uint64_t offset = 0;
  uint64_t bad_records = 0;
  bool corrupt = false;
};

class Store {
 public:
  // Opens (creating) the database at `path`; ":memory:" for tests. `clock` (required,
  // not owned): create and update times.
  static Result<std::unique_ptr<Store>> Open(const std::string& path, const Clock* clock,
                                             Limits limits = {});
  ~Store();

  // Tensorboards: the id is the store's (numeric, as Google's).
  Result<Tensorboard> CreateTensorboard(Tensorboard t);  // ResourceExhausted past the limit.
  Result<Tensorboard> GetTensorboard(const ResourcePath& path) const;  // NotFound.
  Result<Page<Tensorboard>> ListTensorboards(const std::string& project,
                                             const std::string& location,
                                             const PageRequest& page) const;
  // Replaces the fields `mask` names (displayName, description, labels); an empty mask
  // replaces all three. InvalidArgument for another field.
  Result<Tensorboard> UpdateTensorboard(const Tensorboard& t, const std::vector<std::string>& mask);
  Status DeleteTensorboard(const ResourcePath& path);  // With everything in it.

  // Children: a client names their ids (CheckChildId); AlreadyExists, NotFound parent.
  Result<Experiment> CreateExperiment(Experiment e);
  Result<Experiment> GetExperiment(const ResourcePath& path) const;
  Result<Page<Experiment>> ListExperiments(const ResourcePath& tensorboard,
                                           const PageRequest& page) const;
  Status DeleteExperiment(const ResourcePath& path);
  Result<Run> CreateRun(Run r);
  Result<Run> GetRun(const ResourcePath& path) const;
  Result<Page<Run>> ListRuns(const ResourcePath& experiment, const PageRequest& page) const;
  Status DeleteRun(const ResourcePath& path);
  // A time series' id is the store's; its display name is unique in its run.
  Result<TimeSeries> CreateTimeSeries(TimeSeries s);
  Result<TimeSeries> GetTimeSeries(const ResourcePath& path) const;
  Result<Page<TimeSeries>> ListTimeSeries(const ResourcePath& run, const PageRequest& page) const;
  Result<std::vector<Point>> ReadPoints(const ResourcePath& time_series,
                                        const PointQuery& query) const;
  // Points a client writes (runs:write): by time series id, into existing series.
  Status WritePoints(const ResourcePath& run, const std::string& time_series,
                     const std::vector<Point>& points);

  // The indexer's side: creates what the batch names (experiment, runs, a series per
  // tag) and stores points and offsets in one transaction. NotFound when the
  // tensorboard is gone; runs and series past the limits are left out.
  Status ApplyIndexBatch(const IndexBatch& batch);
  // How far `key` was read for `tensorboard` (zero state when never).
  Result<FileState> GetFileState(const ResourcePath& tensorboard, const std::string& key) const;
  // The start of the indexer's last finished round, kept across restarts: a job that
  // ended after it may have missed its last pass (the daemon was down), so the next
  // daemon gives it one (indexing_loop.h). 0 when there was none.
  Result<TimeMicros> IndexedThrough() const;
  Status SetIndexedThrough(TimeMicros t);

 private:
  Store(std::unique_ptr<SqliteDb> db, const Clock* clock, Limits limits);

  std::unique_ptr<SqliteDb> db_;
  const Clock* const clock_;
  const Limits limits_;
  mutable std::mutex mu_;
};

}  // namespace ty::tensorboard
