// The store's time series and points, and what the indexer writes (store.h).
#include <algorithm>
#include <map>

#include "tensorboard/sqlite_db.h"
#include "tensorboard/store.h"
#include "tensorboard/store_rows.h"

namespace ty::tensorboard {

namespace {

constexpr int kDefaultPoints = 1000;
constexpr int kMaxPoints = 10000;

// Adds points, counting them against their series' limit: a step already there is
// replaced (a restarted trainer writes its steps again), a new one past the limit is
// dropped and counted. Statements are prepared once per batch, a new point costs one
// INSERT, and each series' counts are written once, by Flush.
class PointWriter {
 public:
  PointWriter(SqliteDb* db, int64_t limit)
      : db_(db),
        limit_(limit),
        insert_(
            db->get(),
            "INSERT OR IGNORE INTO points (series, step, wall_time, value) VALUES (?, ?, ?, ?)"),
        update_(db->get(),
                "UPDATE points SET wall_time = ?, value = ? WHERE series = ? AND step = ?"),
        count_(db->get(), "SELECT point_count FROM time_series WHERE id = ?"),
        save_(db->get(),
              "UPDATE time_series SET point_count = ?, dropped = dropped + ? WHERE id = ?") {}

  Status Put(int64_t series, const Point& p) {
    ASSIGN_OR_RETURN(Counts * counts, CountsOf(series));
    if (counts->points < limit_) {
      insert_.Reset();
      insert_.Bind(series).Bind(p.step).Bind(int64_t{p.wall_time}).Bind(p.value);
      RETURN_IF_ERROR(insert_.Run());
      if (db_->Changes() > 0) {
        ++counts->points;
        return Status::Ok();
      }
    }
    update_.Reset();
    update_.Bind(int64_t{p.wall_time}).Bind(p.value).Bind(series).Bind(p.step);
    RETURN_IF_ERROR(update_.Run());
    if (db_->Changes() == 0) ++counts->dropped;
    return Status::Ok();
  }

  Status Flush() {
    for (const auto& [series, counts] : counts_) {
      save_.Reset();
      save_.Bind(counts.points).Bind(counts.dropped).Bind(series);
      RETURN_IF_ERROR(save_.Run());
    }
    return Status::Ok();
  }

 private:
  struct Counts {
    int64_t points = 0;
    int64_t dropped = 0;  // This batch's.
  };
  Result<Counts*> CountsOf(int64_t series) {
    auto it = counts_.find(series);
    if (it != counts_.end()) return &it->second;
    count_.Reset();
    count_.Bind(series);
    ASSIGN_OR_RETURN(bool row, count_.Step());
    return &counts_.emplace(series, Counts{row ? count_.Int(0) : limit_, 0}).first->second;
  }

  SqliteDb* const db_;
  const int64_t limit_;
  Stmt insert_, update_, count_, save_;
  std::map<int64_t, Counts> counts_;
};

// The id of the series named `tag` in `run`, made when missing; nullopt past the limit.
Result<std::optional<int64_t>> SeriesFor(SqliteDb* db, TimeMicros now, const Limits& limits,
                                         const ResourcePath& run, const std::string& tag) {
  Stmt q(db->get(),
         "SELECT id FROM time_series WHERE tb = ? AND experiment = ? AND run = ?"
         " AND display_name = ?");
  q.Bind(IdAfter(run.tensorboard)).Bind(run.experiment).Bind(run.run).Bind(tag);
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (row) return std::optional<int64_t>(q.Int(0));
  TimeSeries s;
  s.path = run.Run();
  s.display_name = tag;
  Status made = InsertTimeSeries(db, now, limits, &s);
  if (made.code() == StatusCode::kResourceExhausted) return std::optional<int64_t>();
  RETURN_IF_ERROR(made);
  return std::optional<int64_t>(IdAfter(s.path.time_series));
}

// Makes the experiment, or the run, when it is not there; past a limit, false.
template <typename T>
Result<bool> Ensure(SqliteDb* db, TimeMicros now, const Limits& limits, T record,
                    Result<T> (*read)(sqlite3*, const ResourcePath&),
                    Status (*insert)(SqliteDb*, TimeMicros, const Limits&, T*)) {
  if (read(db->get(), record.path).ok()) return true;
  Status made = insert(db, now, limits, &record);
  if (made.code() == StatusCode::kResourceExhausted) return false;
  RETURN_IF_ERROR(made);
  return true;
}

Status SaveFile(SqliteDb* db, const ResourcePath& tb, const IndexBatch::FileProgress& f) {
  Stmt q(db->get(),
         "INSERT INTO event_files (tb, key, offset, bad_records, corrupt) VALUES (?, ?, ?, ?, ?)"
         " ON CONFLICT (tb, key) DO UPDATE SET offset = excluded.offset,"
         " bad_records = bad_records + excluded.bad_records, corrupt = excluded.corrupt");
  q.Bind(IdAfter(tb.tensorboard)).Bind(f.key).Bind(static_cast<int64_t>(f.offset));
  q.Bind(static_cast<int64_t>(f.bad_records)).Bind(int64_t{f.corrupt ? 1 : 0});
  return q.Run();
}

}  // namespace

Result<TimeSeries> Store::CreateTimeSeries(TimeSeries s) {
  if (s.display_name.empty() || s.display_name.size() > 128) {
    return InvalidArgument("tensorboardTimeSeries.displayName: 1 to 128 characters")
        .WithField("tensorboardTimeSeries.displayName");
  }
  if (s.value_type != "SCALAR") {
    return InvalidArgument("tensorboardTimeSeries.valueType: only SCALAR is kept here")
        .WithField("tensorboardTimeSeries.valueType");
  }
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(db_.get());
  RETURN_IF_ERROR(tx.begun());
  RETURN_IF_ERROR(ReadRun(db_->get(), s.path.Run()).status());
  RETURN_IF_ERROR(InsertTimeSeries(db_.get(), clock_->Now(), limits_, &s));
  RETURN_IF_ERROR(tx.Commit());
  return s;
}

Result<TimeSeries> Store::GetTimeSeries(const ResourcePath& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ReadTimeSeries(db_->get(), path);
}

Result<Page<TimeSeries>> Store::ListTimeSeries(const ResourcePath& run,
                                               const PageRequest& page) const {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ReadRun(db_->get(), run).status());
  const int size = PageSize(page);
  Stmt q(db_->get(), TY_TB_SELECT_TIME_SERIES
         " WHERE tb = ? AND experiment = ? AND run = ? AND id > ? ORDER BY id LIMIT ?");
  q.Bind(IdAfter(run.tensorboard)).Bind(run.experiment).Bind(run.run);
  q.Bind(IdAfter(page.page_token)).Bind(int64_t{size + 1});
  return PageOfRows<TimeSeries>(
      &q, size, [&](const Stmt& r) { return TimeSeriesRow(r, run); },
      [](const TimeSeries& s) { return s.path.time_series; });
}

Result<std::vector<Point>> Store::ReadPoints(const ResourcePath& time_series,
                                             const PointQuery& query) const {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ReadTimeSeries(db_->get(), time_series).status());
  const int limit = query.max_points <= 0 ? kDefaultPoints : std::min(query.max_points, kMaxPoints);
  Stmt q(db_->get(),
         "SELECT step, wall_time, value FROM points WHERE series = ? AND step >= ? AND step <= ?"
         " ORDER BY step LIMIT ?");
  q.Bind(IdAfter(time_series.time_series)).Bind(query.min_step).Bind(query.max_step);
  q.Bind(int64_t{limit});
  std::vector<Point> points;
  while (true) {
    ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    points.push_back({q.Int(0), q.Int(1), q.Real(2)});
  }
  return points;
}

Status Store::WritePoints(const ResourcePath& run, const std::string& time_series,
                          const std::vector<Point>& points) {
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(db_.get());
  RETURN_IF_ERROR(tx.begun());
  ResourcePath series = run.Run();
  series.time_series = time_series;
  RETURN_IF_ERROR(ReadTimeSeries(db_->get(), series).status());
  PointWriter writer(db_.get(), limits_.points_per_series);
  for (const Point& p : points) RETURN_IF_ERROR(writer.Put(IdAfter(time_series), p));
  RETURN_IF_ERROR(writer.Flush());
  return tx.Commit();
}

Status Store::ApplyIndexBatch(const IndexBatch& batch) {
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(db_.get());
  RETURN_IF_ERROR(tx.begun());
  const TimeMicros now = clock_->Now();
  Experiment e;
  e.path = batch.experiment.Experiment();
  e.display_name = batch.experiment_display_name;
  e.source = "trainyard";
  ASSIGN_OR_RETURN(bool have_experiment,
                   Ensure(db_.get(), now, limits_, e, ReadExperiment, InsertExperiment));
  PointWriter writer(db_.get(), limits_.points_per_series);
  for (const IndexBatch::RunPoints& rp : batch.runs) {
    if (!have_experiment || rp.points.empty()) continue;
    Run r;
    r.path = e.path;
    r.path.run = rp.run;
    r.display_name = rp.display_name;
    ASSIGN_OR_RETURN(bool have_run, Ensure(db_.get(), now, limits_, r, ReadRun, InsertRun));
    if (!have_run) continue;
    std::map<std::string, std::optional<int64_t>> series;
    for (const ScalarPoint& p : rp.points) {
      auto it = series.find(p.tag);
      if (it == series.end()) {
        ASSIGN_OR_RETURN(std::optional<int64_t> id,
                         SeriesFor(db_.get(), now, limits_, r.path, p.tag));
        it = series.emplace(p.tag, id).first;
      }
      if (!it->second) continue;
      RETURN_IF_ERROR(writer.Put(*it->second, {p.step, p.wall_time, p.value}));
    }
  }
  RETURN_IF_ERROR(writer.Flush());
  for (const IndexBatch::FileProgress& f : batch.files) {
    RETURN_IF_ERROR(SaveFile(db_.get(), batch.experiment, f));
  }
  return tx.Commit();
}

Result<FileState> Store::GetFileState(const ResourcePath& tensorboard,
                                      const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt q(db_->get(),
         "SELECT offset, bad_records, corrupt FROM event_files WHERE tb = ? AND key = ?");
  q.Bind(IdAfter(tensorboard.tensorboard)).Bind(key);
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return FileState{};
  return FileState{static_cast<uint64_t>(q.Int(0)), static_cast<uint64_t>(q.Int(1)), q.Int(2) != 0};
}

Result<TimeMicros> Store::IndexedThrough() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt q(db_->get(), "SELECT value FROM marks WHERE name = 'indexed_through'");
  ASSIGN_OR_RETURN(bool row, q.Step());
  return row ? q.Int(0) : TimeMicros{0};
}

Status Store::SetIndexedThrough(TimeMicros t) {
  std::lock_guard<std::mutex> lock(mu_);
  Stmt q(db_->get(),
         "INSERT INTO marks (name, value) VALUES ('indexed_through', ?)"
         " ON CONFLICT (name) DO UPDATE SET value = excluded.value");
  q.Bind(t);
  return q.Run();
}

}  // namespace ty::tensorboard
