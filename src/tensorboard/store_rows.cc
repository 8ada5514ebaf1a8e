#include "tensorboard/store_rows.h"

#include <nlohmann/json.hpp>

namespace ty::tensorboard {

namespace {

std::string LabelsJson(const std::map<std::string, std::string>& labels) {
  return nlohmann::json(labels).dump();
}

// Stored text is ours, but read as untrusted: anything but an object of strings is {}.
std::map<std::string, std::string> LabelsOf(const std::string& text) {
  std::map<std::string, std::string> labels;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return labels;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_string()) labels[it.key()] = it.value().get<std::string>();
  }
  return labels;
}

void ReadDescribed(const Stmt& q, int first, Described* d) {
  d->display_name = q.Text(first);
  d->description = q.Text(first + 1);
  d->labels = LabelsOf(q.Text(first + 2));
  d->create_time = q.Int(first + 3);
  d->update_time = q.Int(first + 4);
}

Status NotThere(const ResourcePath& path) { return NotFound(path.name() + " not found"); }

Result<int64_t> CountWhere(sqlite3* db, const char* sql, const ResourcePath& p, int keys) {
  Stmt q(db, sql);
  q.Bind(IdAfter(p.tensorboard));
  if (keys > 1) q.Bind(p.experiment);
  if (keys > 2) q.Bind(p.run);
  ASSIGN_OR_RETURN(bool row, q.Step());
  return row ? q.Int(0) : 0;
}

Status UnderLimit(sqlite3* db, const char* sql, const ResourcePath& parent, int keys, size_t limit,
                  const std::string& what) {
  ASSIGN_OR_RETURN(int64_t n, CountWhere(db, sql, parent, keys));
  if (n < static_cast<int64_t>(limit)) return Status::Ok();
  return ResourceExhausted(parent.name() + " has " + std::to_string(limit) + " " + what +
                           ", the most it may have");
}

}  // namespace

int64_t IdAfter(const std::string& id) {
  if (id.empty()) return 0;
  if (id.size() > 18) return -1;
  int64_t v = 0;
  for (char c : id) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

void BindDescribed(Stmt* q, const Described& d) {
  q->Bind(d.display_name).Bind(d.description).Bind(LabelsJson(d.labels));
  q->Bind(int64_t{d.create_time}).Bind(int64_t{d.update_time});
}

Tensorboard TensorboardRow(const Stmt& q) {
  Tensorboard t;
  t.path = {q.Text(1), q.Text(2), std::to_string(q.Int(0)), "", "", ""};
  ReadDescribed(q, 3, &t);
  return t;
}

Experiment ExperimentRow(const Stmt& q, const ResourcePath& tensorboard) {
  Experiment e;
  e.path = tensorboard.Tensorboard();
  e.path.experiment = q.Text(0);
  ReadDescribed(q, 1, &e);
  e.source = q.Text(6);
  return e;
}

Run RunRow(const Stmt& q, const ResourcePath& experiment) {
  Run r;
  r.path = experiment.Experiment();
  r.path.run = q.Text(0);
  ReadDescribed(q, 1, &r);
  return r;
}

TimeSeries TimeSeriesRow(const Stmt& q, const ResourcePath& run) {
  TimeSeries s;
  s.path = run.Run();
  s.path.time_series = std::to_string(q.Int(0));
  ReadDescribed(q, 1, &s);
  s.value_type = q.Text(6);
  s.plugin_name = q.Text(7);
  s.max_step = q.Int(8);
  return s;
}

Result<Tensorboard> ReadTensorboard(sqlite3* db, const ResourcePath& path) {
  Stmt q(db, TY_TB_SELECT_TENSORBOARD " WHERE id = ? AND project = ? AND location = ?");
  q.Bind(IdAfter(path.tensorboard)).Bind(path.project).Bind(path.location);
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return NotThere(path.Tensorboard());
  return TensorboardRow(q);
}

Result<Experiment> ReadExperiment(sqlite3* db, const ResourcePath& path) {
  RETURN_IF_ERROR(ReadTensorboard(db, path).status());
  Stmt q(db, TY_TB_SELECT_EXPERIMENT " WHERE tb = ? AND id = ?");
  q.Bind(IdAfter(path.tensorboard)).Bind(path.experiment);
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return NotThere(path.Experiment());
  return ExperimentRow(q, path);
}

Result<Run> ReadRun(sqlite3* db, const ResourcePath& path) {
  RETURN_IF_ERROR(ReadTensorboard(db, path).status());
  Stmt q(db, TY_TB_SELECT_RUN " WHERE tb = ? AND experiment = ? AND id = ?");
  q.Bind(IdAfter(path.tensorboard)).Bind(path.experiment).Bind(path.run);
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return NotThere(path.Run());
  return RunRow(q, path);
}

Result<TimeSeries> ReadTimeSeries(sqlite3* db, const ResourcePath& path) {
  RETURN_IF_ERROR(ReadTensorboard(db, path).status());
  Stmt q(db, TY_TB_SELECT_TIME_SERIES " WHERE id = ? AND tb = ? AND experiment = ? AND run = ?");
  q.Bind(IdAfter(path.time_series)).Bind(IdAfter(path.tensorboard)).Bind(path.experiment);
  q.Bind(path.run);
  ASSIGN_OR_RETURN(bool row, q.Step());
  if (!row) return NotThere(path);
  return TimeSeriesRow(q, path);
}

int64_t CountRuns(sqlite3* db, const ResourcePath& tensorboard) {
  Result<int64_t> n = CountWhere(db, "SELECT COUNT(*) FROM runs WHERE tb = ?", tensorboard, 1);
  return n.ok() ? *n : 0;
}

Status InsertExperiment(SqliteDb* db, TimeMicros now, const Limits& limits, Experiment* e) {
  RETURN_IF_ERROR(ReadTensorboard(db->get(), e->path).status());
  if (ReadExperiment(db->get(), e->path).ok()) {
    return AlreadyExists(e->path.Experiment().name() + " already exists");
  }
  RETURN_IF_ERROR(UnderLimit(db->get(), "SELECT COUNT(*) FROM experiments WHERE tb = ?", e->path, 1,
                             limits.experiments_per_tensorboard, "experiments"));
  e->create_time = e->update_time = now;
  Stmt q(db->get(), "INSERT INTO experiments (tb, id, " TY_TB_DESCRIBED
                    ", source) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  q.Bind(IdAfter(e->path.tensorboard)).Bind(e->path.experiment);
  BindDescribed(&q, *e);
  q.Bind(e->source);
  return q.Run();
}

Status InsertRun(SqliteDb* db, TimeMicros now, const Limits& limits, Run* r) {
  if (ReadRun(db->get(), r->path).ok()) {
    return AlreadyExists(r->path.Run().name() + " already exists");
  }
  RETURN_IF_ERROR(UnderLimit(db->get(), "SELECT COUNT(*) FROM runs WHERE tb = ? AND experiment = ?",
                             r->path.Experiment(), 2, limits.runs_per_experiment, "runs"));
  r->create_time = r->update_time = now;
  Stmt q(db->get(), "INSERT INTO runs (tb, experiment, id, " TY_TB_DESCRIBED
                    ") VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  q.Bind(IdAfter(r->path.tensorboard)).Bind(r->path.experiment).Bind(r->path.run);
  BindDescribed(&q, *r);
  return q.Run();
}

Status InsertTimeSeries(SqliteDb* db, TimeMicros now, const Limits& limits, TimeSeries* s) {
  Stmt same(db->get(),
            "SELECT 1 FROM time_series WHERE tb = ? AND experiment = ? AND run = ?"
            " AND display_name = ?");
  same.Bind(IdAfter(s->path.tensorboard)).Bind(s->path.experiment).Bind(s->path.run);
  same.Bind(s->display_name);
  ASSIGN_OR_RETURN(bool exists, same.Step());
  if (exists) {
    return AlreadyExists(s->path.Run().name() + " already has a time series named \"" +
                         s->display_name + "\"");
  }
  RETURN_IF_ERROR(UnderLimit(
      db->get(), "SELECT COUNT(*) FROM time_series WHERE tb = ? AND experiment = ? AND run = ?",
      s->path.Run(), 3, limits.series_per_run, "time series"));
  s->create_time = s->update_time = now;
  Stmt q(db->get(),
         "INSERT INTO time_series (tb, experiment, run, display_name, description, value_type,"
         " plugin_name, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  q.Bind(IdAfter(s->path.tensorboard)).Bind(s->path.experiment).Bind(s->path.run);
  q.Bind(s->display_name).Bind(s->description).Bind(s->value_type).Bind(s->plugin_name);
  q.Bind(int64_t{s->create_time}).Bind(int64_t{s->update_time});
  RETURN_IF_ERROR(q.Run());
  s->path.time_series = std::to_string(db->LastRowId());
  return Status::Ok();
}

}  // namespace ty::tensorboard
