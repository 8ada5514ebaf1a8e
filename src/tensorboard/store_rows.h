// Rows of the TensorBoard store (store.h) to records and back, and the lookups each
// level shares. Internal to tensorboard/; callers hold the store's mutex.
#pragma once

#include <algorithm>
#include <string>

#include "tensorboard/sqlite_db.h"
#include "tensorboard/store.h"

namespace ty::tensorboard {

#define TY_TB_DESCRIBED "display_name, description, labels, create_time, update_time"
#define TY_TB_SELECT_TENSORBOARD \
  "SELECT id, project, location, " TY_TB_DESCRIBED " FROM tensorboards"
#define TY_TB_SELECT_EXPERIMENT "SELECT id, " TY_TB_DESCRIBED ", source FROM experiments"
#define TY_TB_SELECT_RUN "SELECT id, " TY_TB_DESCRIBED " FROM runs"
#define TY_TB_SELECT_TIME_SERIES                                                      \
  "SELECT id, display_name, description, '{}', create_time, update_time, value_type," \
  " plugin_name, (SELECT MAX(step) FROM points WHERE series = time_series.id)"        \
  " FROM time_series"

// A page's size: 50 when unset, at most 1000.
inline int PageSize(const PageRequest& page) {
  return page.page_size <= 0 ? 50 : std::min(page.page_size, 1000);
}

// Every row `q` answers, each made a T by `row_of`; with one row more than `size` the
// page is cut and its token is the last id kept (`id_of`).
template <typename T, typename RowOf, typename IdOf>
Result<Page<T>> PageOfRows(Stmt* q, int size, RowOf row_of, IdOf id_of) {
  Page<T> page;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) break;
    page.items.push_back(row_of(*q));
  }
  if (static_cast<int>(page.items.size()) > size) {
    page.items.resize(static_cast<size_t>(size));
    page.next_page_token = id_of(page.items.back());
  }
  return page;
}

// A tensorboard id as stored (a positive decimal), or -1 for anything else: a name
// that cannot be one matches nothing. "" (a first page) is 0.
int64_t IdAfter(const std::string& id);

void BindDescribed(Stmt* q, const Described& d);
Tensorboard TensorboardRow(const Stmt& q);
Experiment ExperimentRow(const Stmt& q, const ResourcePath& tensorboard);
Run RunRow(const Stmt& q, const ResourcePath& experiment);
TimeSeries TimeSeriesRow(const Stmt& q, const ResourcePath& run);

// NotFound naming the resource when it is not there (or not under its parents). A
// tensorboard read here has no run_count: every child's read checks its tensorboard
// through this, and only the tensorboard's own Get and List answer with the count.
Result<Tensorboard> ReadTensorboard(sqlite3* db, const ResourcePath& path);
Result<Experiment> ReadExperiment(sqlite3* db, const ResourcePath& path);
Result<Run> ReadRun(sqlite3* db, const ResourcePath& path);
Result<TimeSeries> ReadTimeSeries(sqlite3* db, const ResourcePath& path);
int64_t CountRuns(sqlite3* db, const ResourcePath& tensorboard);

// Inserts under a parent that exists; AlreadyExists, or ResourceExhausted past `limits`.
// Sets the record's times (and a time series' id).
Status InsertExperiment(SqliteDb* db, TimeMicros now, const Limits& limits, Experiment* e);
Status InsertRun(SqliteDb* db, TimeMicros now, const Limits& limits, Run* r);
Status InsertTimeSeries(SqliteDb* db, TimeMicros now, const Limits& limits, TimeSeries* s);

}  // namespace ty::tensorboard
