// The store's schema, tensorboards and their children (experiments, runs, time
// series). Points and indexing are in store_points.cc.
#include "tensorboard/store.h"

#include <nlohmann/json.hpp>

#include "tensorboard/sqlite_db.h"
#include "tensorboard/store_rows.h"

namespace ty::tensorboard {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS tensorboards (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  project TEXT NOT NULL, location TEXT NOT NULL,
  display_name TEXT NOT NULL, description TEXT NOT NULL, labels TEXT NOT NULL,
  create_time INTEGER NOT NULL, update_time INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS tensorboards_scope ON tensorboards (project, location, id);
CREATE TABLE IF NOT EXISTS experiments (
  tb INTEGER NOT NULL REFERENCES tensorboards (id) ON DELETE CASCADE,
  id TEXT NOT NULL,
  display_name TEXT NOT NULL, description TEXT NOT NULL, labels TEXT NOT NULL,
  source TEXT NOT NULL, create_time INTEGER NOT NULL, update_time INTEGER NOT NULL,
  PRIMARY KEY (tb, id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runs (
  tb INTEGER NOT NULL, experiment TEXT NOT NULL, id TEXT NOT NULL,
  display_name TEXT NOT NULL, description TEXT NOT NULL, labels TEXT NOT NULL,
  create_time INTEGER NOT NULL, update_time INTEGER NOT NULL,
  PRIMARY KEY (tb, experiment, id),
  FOREIGN KEY (tb, experiment) REFERENCES experiments (tb, id) ON DELETE CASCADE) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS time_series (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tb INTEGER NOT NULL, experiment TEXT NOT NULL, run TEXT NOT NULL,
  display_name TEXT NOT NULL, description TEXT NOT NULL,
  value_type TEXT NOT NULL, plugin_name TEXT NOT NULL,
  create_time INTEGER NOT NULL, update_time INTEGER NOT NULL,
  point_count INTEGER NOT NULL DEFAULT 0, dropped INTEGER NOT NULL DEFAULT 0,
  UNIQUE (tb, experiment, run, display_name),
  FOREIGN KEY (tb, experiment, run) REFERENCES runs (tb, experiment, id) ON DELETE CASCADE);
CREATE TABLE IF NOT EXISTS points (
  series INTEGER NOT NULL REFERENCES time_series (id) ON DELETE CASCADE,
  step INTEGER NOT NULL, wall_time INTEGER NOT NULL, value REAL NOT NULL,
  PRIMARY KEY (series, step)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS event_files (
  tb INTEGER NOT NULL REFERENCES tensorboards (id) ON DELETE CASCADE,
  key TEXT NOT NULL, offset INTEGER NOT NULL, bad_records INTEGER NOT NULL,
  corrupt INTEGER NOT NULL,
  PRIMARY KEY (tb, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS marks (
  name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
)sql";

Status CheckDescribed(const Described& d, const std::string& kind) {
  if (d.display_name.empty() && kind == "tensorboard") {
    return InvalidArgument(kind + ".displayName: required").WithField(kind + ".displayName");
  }
  if (d.display_name.size() > 128) {
    return InvalidArgument(kind + ".displayName: at most 128 characters")
        .WithField(kind + ".displayName");
  }
  if (d.description.size() > 8192) {
    return InvalidArgument(kind + ".description: at most 8192 characters")
        .WithField(kind + ".description");
  }
  if (d.labels.size() > 64) {
    return InvalidArgument(kind + ".labels: at most 64 labels").WithField(kind + ".labels");
  }
  return Status::Ok();
}

}  // namespace

Store::Store(std::unique_ptr<SqliteDb> db, const Clock* clock, Limits limits)
    : db_(std::move(db)), clock_(clock), limits_(limits) {}

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, const Clock* clock,
                                           Limits limits) {
  sqlite3* raw = nullptr;
  if (sqlite3_open(path.c_str(), &raw) != SQLITE_OK) {
    std::string err = raw != nullptr ? sqlite3_errmsg(raw) : "out of memory";
    sqlite3_close(raw);
    return Internal("open " + path + ": " + err);
  }
  auto db = std::make_unique<SqliteDb>(raw);
  sqlite3_busy_timeout(raw, 5000);
  if (path != ":memory:") RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode=WAL"));
  RETURN_IF_ERROR(db->Exec("PRAGMA synchronous=NORMAL"));
  RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON"));
  RETURN_IF_ERROR(db->Exec(kSchema));
  return std::unique_ptr<Store>(new Store(std::move(db), clock, limits));
}

// ---- Tensorboards -------------------------------------------------------------------

Result<Tensorboard> Store::CreateTensorboard(Tensorboard t) {
  RETURN_IF_ERROR(CheckDescribed(t, "tensorboard"));
  std::lock_guard<std::mutex> lock(mu_);
  Stmt count(db_->get(), "SELECT COUNT(*) FROM tensorboards WHERE project = ?");
  count.Bind(t.path.project);
  ASSIGN_OR_RETURN(bool row, count.Step());
  if (row && count.Int(0) >= static_cast<int64_t>(limits_.tensorboards_per_project)) {
    return ResourceExhausted("project " + t.path.project + " has " +
                             std::to_string(limits_.tensorboards_per_project) +
                             " tensorboards, the most it may have");
  }
  t.create_time = t.update_time = clock_->Now();
  Stmt insert(db_->get(),
              "INSERT INTO tensorboards (project, location, display_name, description, labels,"
              " create_time, update_time) VALUES (?, ?, ?, ?, ?, ?, ?)");
  insert.Bind(t.path.project).Bind(t.path.location);
  BindDescribed(&insert, t);
  RETURN_IF_ERROR(insert.Run());
  t.path.tensorboard = std::to_string(db_->LastRowId());
  return t;
}

Result<Tensorboard> Store::GetTensorboard(const ResourcePath& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Tensorboard t, ReadTensorboard(db_->get(), path));
  t.run_count = CountRuns(db_->get(), path);
  return t;
}

Result<Page<Tensorboard>> Store::ListTensorboards(const std::string& project,
                                                  const std::string& location,
                                                  const PageRequest& page) const {
  std::lock_guard<std::mutex> lock(mu_);
  const int size = PageSize(page);
  Stmt q(db_->get(), TY_TB_SELECT_TENSORBOARD
         " WHERE project = ? AND location = ? AND id > ? ORDER BY id LIMIT ?");
  q.Bind(project).Bind(location).Bind(IdAfter(page.page_token)).Bind(int64_t{size + 1});
  ASSIGN_OR_RETURN(Page<Tensorboard> out,
                   PageOfRows<Tensorboard>(&q, size, TensorboardRow, [](const Tensorboard& t) {
                     return t.path.tensorboard;
                   }));
  for (Tensorboard& t : out.items) t.run_count = CountRuns(db_->get(), t.path);
  return out;
}

Result<Tensorboard> Store::UpdateTensorboard(const Tensorboard& t,
                                             const std::vector<std::string>& mask) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Tensorboard current, ReadTensorboard(db_->get(), t.path));
  for (const std::string& field : mask) {
    if (field == "display_name" || field == "displayName") {
      current.display_name = t.display_name;
    } else if (field == "description") {
      current.description = t.description;
    } else if (field == "labels") {
      current.labels = t.labels;
    } else {
      return InvalidArgument("update_mask: " + field.substr(0, 100) +
                             " cannot be updated (only displayName, description, labels)")
          .WithField("update_mask");
    }
  }
  if (mask.empty()) static_cast<Described&>(current) = t;
  RETURN_IF_ERROR(CheckDescribed(current, "tensorboard"));
  current.update_time = clock_->Now();
  Stmt q(db_->get(),
         "UPDATE tensorboards SET display_name = ?, description = ?, labels = ?,"
         " create_time = ?, update_time = ? WHERE id = ?");
  BindDescribed(&q, current);
  q.Bind(IdAfter(current.path.tensorboard));
  RETURN_IF_ERROR(q.Run());
  current.run_count = CountRuns(db_->get(), current.path);
  return current;
}

Status Store::DeleteTensorboard(const ResourcePath& path) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ReadTensorboard(db_->get(), path).status());
  Stmt q(db_->get(), "DELETE FROM tensorboards WHERE id = ?");
  q.Bind(IdAfter(path.tensorboard));
  return q.Run();
}

// ---- Experiments and runs -----------------------------------------------------------

Result<Experiment> Store::CreateExperiment(Experiment e) {
  RETURN_IF_ERROR(CheckChildId(e.path.experiment, "tensorboardExperimentId"));
  RETURN_IF_ERROR(CheckDescribed(e, "tensorboardExperiment"));
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(db_.get());
  RETURN_IF_ERROR(tx.begun());
  RETURN_IF_ERROR(InsertExperiment(db_.get(), clock_->Now(), limits_, &e));
  RETURN_IF_ERROR(tx.Commit());
  return e;
}

Result<Experiment> Store::GetExperiment(const ResourcePath& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ReadExperiment(db_->get(), path);
}

Result<Page<Experiment>> Store::ListExperiments(const ResourcePath& tensorboard,
                                                const PageRequest& page) const {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ReadTensorboard(db_->get(), tensorboard).status());
  const int size = PageSize(page);
  Stmt q(db_->get(), TY_TB_SELECT_EXPERIMENT " WHERE tb = ? AND id > ? ORDER BY id LIMIT ?");
  q.Bind(IdAfter(tensorboard.tensorboard)).Bind(page.page_token).Bind(int64_t{size + 1});
  return PageOfRows<Experiment>(
      &q, size, [&](const Stmt& r) { return ExperimentRow(r, tensorboard); },
      [](const Experiment& e) { return e.path.experiment; });
}

Status Store::DeleteExperiment(const ResourcePath& path) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ReadExperiment(db_->get(), path).status());
  Stmt q(db_->get(), "DELETE FROM experiments WHERE tb = ? AND id = ?");
  q.Bind(IdAfter(path.tensorboard)).Bind(path.experiment);
  return q.Run();
}

Result<Run> Store::CreateRun(Run r) {
  RETURN_IF_ERROR(CheckChildId(r.path.run, "tensorboardRunId"));
  RETURN_IF_ERROR(CheckDescribed(r, "tensorboardRun"));
  std::lock_guard<std::mutex> lock(mu_);
  Transaction tx(db_.get());
  RETURN_IF_ERROR(tx.begun());
  RETURN_IF_ERROR(ReadExperiment(db_->get(), r.path.Experiment()).status());
  RETURN_IF_ERROR(InsertRun(db_.get(), clock_->Now(), limits_, &r));
  RETURN_IF_ERROR(tx.Commit());
  return r;
}

Result<Run> Store::GetRun(const ResourcePath& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ReadRun(db_->get(), path);
}

Result<Page<Run>> Store::ListRuns(const ResourcePath& experiment, const PageRequest& page) const {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ReadExperiment(db_->get(), experiment).status());
  const int size = PageSize(page);
  Stmt q(db_->get(),
         TY_TB_SELECT_RUN " WHERE tb = ? AND experiment = ? AND id > ? ORDER BY id LIMIT ?");
  q.Bind(IdAfter(experiment.tensorboard)).Bind(experiment.experiment).Bind(page.page_token);
  q.Bind(int64_t{size + 1});
  return PageOfRows<Run>(
      &q, size, [&](const Stmt& r) { return RunRow(r, experiment); },
      [](const Run& r) { return r.path.run; });
}

Status Store::DeleteRun(const ResourcePath& path) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ReadRun(db_->get(), path).status());
  Stmt q(db_->get(), "DELETE FROM runs WHERE tb = ? AND experiment = ? AND id = ?");
  q.Bind(IdAfter(path.tensorboard)).Bind(path.experiment).Bind(path.run);
  return q.Run();
}

}  // namespace ty::tensorboard
