#include "jobstore/sqlite_job_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <utility>

#include "jobstore/job_codec.h"

namespace ty::jobstore {

namespace {

// Ordered schema steps. Step N brings a file from version N-1 to N; each runs in its
// own transaction together with the `user_version` bump, so a crash leaves the file
// at a version whose steps all completed. Never edit a released step: add one.
struct Migration {
  int version;
  const char* sql;
};

constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE jobs (
  uid TEXT PRIMARY KEY NOT NULL,
  dialect TEXT NOT NULL,
  project TEXT NOT NULL,
  location TEXT NOT NULL,
  job_id TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  state TEXT NOT NULL,
  create_time INTEGER NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  update_time INTEGER NOT NULL,
  queued_time INTEGER NOT NULL,
  admitted_time INTEGER NOT NULL,
  image_ready_time INTEGER NOT NULL,
  all_running_time INTEGER NOT NULL,
  finished_time INTEGER NOT NULL,
  error_code INTEGER,
  error_message TEXT,
  attempt INTEGER NOT NULL,
  cancel_requested INTEGER NOT NULL
);
CREATE UNIQUE INDEX jobs_ml_job_id ON jobs (dialect, project, job_id) WHERE dialect = 'ML_V1';
CREATE INDEX jobs_by_create_time ON jobs (create_time, uid);
CREATE TABLE replicas (
  uid TEXT NOT NULL REFERENCES jobs (uid) ON DELETE CASCADE,
  pos INTEGER NOT NULL,
  pool INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  task_name TEXT NOT NULL,
  handle TEXT NOT NULL,
  state TEXT NOT NULL,
  exit_code INTEGER,
  signal INTEGER,
  restarts INTEGER NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  PRIMARY KEY (uid, pos)
) WITHOUT ROWID;
CREATE TABLE events (
  uid TEXT NOT NULL REFERENCES jobs (uid) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  time INTEGER NOT NULL,
  kind TEXT NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (uid, seq)
) WITHOUT ROWID;
)sql"},
    // The pending outcome of a stop in progress (model::Job::ending), committed before
    // the stop starts so a restarted daemon finishes what was decided.
    {2, R"sql(
ALTER TABLE jobs ADD COLUMN ending_kind TEXT;
ALTER TABLE jobs ADD COLUMN ending_code INTEGER;
ALTER TABLE jobs ADD COLUMN ending_message TEXT;
)sql"},
    // List fields, so List pages and filters from the store instead of from memory:
    // the uid as a number (pages go by it, newest first) and what filters read.
    {3, R"sql(
ALTER TABLE jobs ADD COLUMN uid_num INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN labels_json TEXT NOT NULL DEFAULT '{}';
UPDATE jobs SET
  uid_num = CAST(uid AS INTEGER),
  display_name = CASE WHEN json_valid(spec_json)
                      THEN COALESCE(json_extract(spec_json, '$.displayName'), '') ELSE '' END,
  labels_json = CASE WHEN json_valid(spec_json) AND json_type(spec_json, '$.labels') = 'object'
                     THEN json_extract(spec_json, '$.labels') ELSE '{}' END;
CREATE INDEX jobs_by_scope ON jobs (dialect, project, location, uid_num);
CREATE INDEX jobs_live ON jobs (state)
  WHERE state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED');
)sql"},
    // The versioned internal spec (model/spec_record.h) beside the wire JSON.
    {4, R"sql(
ALTER TABLE jobs ADD COLUMN spec_record TEXT NOT NULL DEFAULT '';
)sql"},
    // Admission's grant (model::Job::grants) and the count of preempted attempts.
    {5, R"sql(
ALTER TABLE jobs ADD COLUMN grants_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE jobs ADD COLUMN preemptions INTEGER NOT NULL DEFAULT 0;
)sql"},
    // Studies (model::Job::trials) and trial jobs (study_uid, trial_id).
    {6, R"sql(
ALTER TABLE jobs ADD COLUMN trials_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE jobs ADD COLUMN study_uid TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN trial_id INTEGER NOT NULL DEFAULT 0;
)sql"},
    // What is kept of deleted jobs (JobStore::Deletion).
    {7, R"sql(
CREATE TABLE deletions (
  uid TEXT PRIMARY KEY,
  uid_num INTEGER NOT NULL,
  project TEXT NOT NULL,
  location TEXT NOT NULL,
  time INTEGER NOT NULL
) WITHOUT ROWID;
)sql"},
    // What a study's machine remembers beyond its trials (model::StudyProgress).
    {8, R"sql(
ALTER TABLE jobs ADD COLUMN study_json TEXT NOT NULL DEFAULT '';
)sql"},
    // What each record is (model::JobKind), stored instead of searched for in its JSON
    // on every read. Earlier rows get theirs from what told it before: a trial job has
    // its study's uid; in canonical JSON (no spaces) `"trainingTaskDefinition":` and
    // `"studySpec":` (Vertex) or `"hyperparameters":` (ml v1) can only be keys, since
    // a quote inside a string value is escaped.
    {9, R"sql(
ALTER TABLE jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'JOB';
UPDATE jobs SET kind = CASE
  WHEN study_uid != '' THEN 'TRIAL'
  WHEN dialect = 'VERTEX' AND instr(spec_json, '"trainingTaskDefinition":') > 0 THEN 'PIPELINE'
  WHEN dialect = 'VERTEX' AND instr(spec_json, '"studySpec":') > 0 THEN 'STUDY'
  WHEN dialect = 'ML_V1' AND instr(spec_json, '"hyperparameters":') > 0 THEN 'STUDY'
  ELSE 'JOB' END;
)sql"},
    // What the current attempt's image names stood for (model::Job::images).
    {10, R"sql(
ALTER TABLE jobs ADD COLUMN images_json TEXT NOT NULL DEFAULT '[]';
)sql"},
    // The last commit's service lines, not known to be in the job's log yet
    // (model/outbox.h). Earlier rows have none waiting.
    {11, R"sql(
ALTER TABLE jobs ADD COLUMN outbox_json TEXT NOT NULL DEFAULT '{}';
)sql"},
    // Start-up also reads a finished record whose last lines may not be in its log yet
    // (model/outbox.h): the live index takes the records whose outbox holds lines (an
    // outbox's canonical JSON has a "lines" key only then).
    {12, R"sql(
DROP INDEX IF EXISTS jobs_live;
CREATE INDEX jobs_live ON jobs (state)
  WHERE state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED') OR instr(outbox_json, '"lines":') > 0;
)sql"},
    // Finished jobs by end time (ListEndedSince): a start-up reads those that ended
    // after a mark instead of every job ever run.
    {13, R"sql(
CREATE INDEX jobs_ended ON jobs (end_time)
  WHERE state IN ('SUCCEEDED', 'FAILED', 'CANCELLED');
)sql"},
};

static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == SqliteJobStore::kSchemaVersion,
              "one migration step per schema version");

// Maps an SQLite result code to our closed code set; `what` says which operation.
Status SqlError(sqlite3* db, int rc, const std::string& what) {
  std::string msg = what + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Unavailable("store busy: " + msg);
    case SQLITE_CONSTRAINT:
      // Writers check uniqueness themselves first (for a precise message, under the
      // write lock); the schema's constraints are the backstop.
      if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE) {
        return AlreadyExists(msg);
      }
      return rc == SQLITE_CONSTRAINT_FOREIGNKEY ? FailedPrecondition(msg) : Internal(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status(StatusCode::kDataLoss, msg);
    case SQLITE_FULL:
      return ResourceExhausted(msg);
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
      return FailedPrecondition(msg);
    default:
      return Internal(msg);
  }
}

constexpr char kJobColumns[] =
    "uid, dialect, project, location, job_id, spec_json, state, create_time, start_time, "
    "end_time, update_time, queued_time, admitted_time, image_ready_time, all_running_time, "
    "finished_time, error_code, error_message, attempt, cancel_requested, ending_kind, "
    "ending_code, ending_message, uid_num, display_name, labels_json, spec_record, grants_json, "
    "preemptions, trials_json, study_uid, trial_id, study_json, kind, images_json, "
    "outbox_json";

}  // namespace

// A borrowed, cached prepared statement; resets it (and its bindings) when done so
// the next use starts clean even after an error. Binding copies values
// (SQLITE_TRANSIENT) because callers pass temporaries.
class SqliteJobStore::Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& o) noexcept : db_(o.db_), stmt_(std::exchange(o.stmt_, nullptr)) {}
  Statement& operator=(Statement&&) = delete;
  ~Statement() {
    if (stmt_ != nullptr) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }

  Statement& Bind(int i, int64_t v) { return Check(sqlite3_bind_int64(stmt_, i, v)); }
  Statement& Bind(int i, const std::string& v) {
    return Check(
        sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Statement& Bind(int i, const char* v) { return Bind(i, std::string(v)); }
  Statement& Bind(int i, std::optional<int64_t> v) {
    return v ? Bind(i, *v) : Check(sqlite3_bind_null(stmt_, i));
  }

  // SQLITE_ROW or SQLITE_DONE; anything else (including a failed Bind) is an error.
  Result<bool> Step(const std::string& what) {
    if (bind_rc_ != SQLITE_OK) return SqlError(db_, bind_rc_, what);
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return SqlError(db_, rc, what);
  }
  // For statements that return no rows.
  Status Run(const std::string& what) {
    Result<bool> r = Step(what);
    return r.ok() ? Status::Ok() : r.status();
  }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::optional<int64_t> OptInt(int col) const {
    return IsNull(col) ? std::nullopt : std::optional<int64_t>(Int(col));
  }
  int Bytes(int col) const { return sqlite3_column_bytes(stmt_, col); }
  std::string Text(int col) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return p ? std::string(p, sqlite3_column_bytes(stmt_, col)) : std::string();
  }

 private:
  Statement& Check(int rc) {
    if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  int bind_rc_ = SQLITE_OK;
};

// One transaction; rolls back unless Commit() succeeded. Writers use BEGIN IMMEDIATE
// so the write lock is taken up front: a deferred transaction that later upgrades can
// fail with SQLITE_BUSY without waiting on busy_timeout.
class SqliteJobStore::Transaction {
 public:
  static Result<Transaction> Begin(SqliteJobStore& store, bool write) {
    RETURN_IF_ERROR(store.Exec(write ? "BEGIN IMMEDIATE" : "BEGIN"));
    return Transaction(store);
  }
  Transaction(Transaction&& o) noexcept : store_(std::exchange(o.store_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction() {
    if (store_ != nullptr) store_->Exec("ROLLBACK").IgnoreError();
  }
  Status Commit() {
    Status s = store_->Exec("COMMIT");
    if (s.ok()) store_ = nullptr;  // Otherwise the destructor rolls back.
    return s;
  }

 private:
  explicit Transaction(SqliteJobStore& store) : store_(&store) {}
  SqliteJobStore* store_;
};

SqliteJobStore::SqliteJobStore(sqlite3* db) : db_(db) {}

SqliteJobStore::~SqliteJobStore() {
  for (auto& [sql, stmt] : stmts_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

Result<std::unique_ptr<SqliteJobStore>> SqliteJobStore::Open(const std::string& path) {
  sqlite3* db = nullptr;
  // Jobs' records hold their environment (secrets included): the file is made private
  // before SQLite creates it, and SQLite gives its WAL and shared memory the same mode.
  if (path != ":memory:" && !path.empty()) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
  }
  // NOMUTEX: our own mutex serialises the connection, SQLite's would be redundant.
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status s = SqlError(db, rc, "open " + path);
    sqlite3_close_v2(db);
    return s;
  }
  std::unique_ptr<SqliteJobStore> store(new SqliteJobStore(db));
  sqlite3_extended_result_codes(db, 1);
  // Another process (a second daemon, `sqlite3` by hand) may hold the write lock
  // briefly; wait for it rather than failing the request.
  sqlite3_busy_timeout(db, 5000);

  const bool in_memory = path == ":memory:" || path.empty();
  std::string journal_mode;
  rc = sqlite3_exec(
      db, "PRAGMA journal_mode=WAL",
      [](void* out, int n, char** values, char**) {
        if (n > 0 && values[0]) *static_cast<std::string*>(out) = values[0];
        return 0;
      },
      &journal_mode, nullptr);
  if (rc != SQLITE_OK) return SqlError(db, rc, "open " + path + ": enable WAL");
  if (!in_memory && journal_mode != "wal") {
    return FailedPrecondition("open " + path + ": cannot enable WAL (journal_mode=" + journal_mode +
                              ")");
  }
  // In WAL mode synchronous=NORMAL never corrupts the database: a power loss can only
  // drop the last transactions not yet checkpointed, and fsyncs happen at checkpoints
  // instead of on every commit. Every transition is re-derivable on restart from the
  // executor's view (docs/design.md §2-3), so losing the last milliseconds is acceptable.
  RETURN_IF_ERROR(store->Exec("PRAGMA synchronous=NORMAL"));
  // Off by default in SQLite; the replicas/events cascades depend on it.
  RETURN_IF_ERROR(store->Exec("PRAGMA foreign_keys=ON"));
  RETURN_IF_ERROR(store->Migrate().WithContext("open " + path));
  return store;
}

Status SqliteJobStore::Exec(const char* sql) {
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? Status::Ok() : SqlError(db_, rc, sql);
}

Result<SqliteJobStore::Statement> SqliteJobStore::Prepare(const char* sql) {
  auto it = stmts_.find(sql);
  if (it == stmts_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return SqlError(db_, rc, std::string("prepare ") + sql);
    it = stmts_.emplace(sql, stmt).first;
  }
  return Statement(db_, it->second);
}

Status SqliteJobStore::Migrate() {
  auto read_version = [this]() -> Result<int> {
    ASSIGN_OR_RETURN(Statement st, Prepare("PRAGMA user_version"));
    ASSIGN_OR_RETURN(bool row, st.Step("read schema version"));
    if (!row) return Internal("PRAGMA user_version returned no row");
    return static_cast<int>(st.Int(0));
  };
  for (const Migration& m : kMigrations) {
    ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*this, /*write=*/true));
    // Read under the write lock: another process may have migrated meanwhile.
    ASSIGN_OR_RETURN(int version, read_version());
    if (version > kSchemaVersion) {
      return FailedPrecondition("database schema version " + std::to_string(version) +
                                " is newer than this build supports (" +
                                std::to_string(kSchemaVersion) + "); upgrade Trainyard");
    }
    if (version >= m.version) continue;  // Rolls back the empty transaction.
    if (version != m.version - 1) {
      return Internal("schema version " + std::to_string(version) + " has no migration step");
    }
    RETURN_IF_ERROR(Exec(m.sql).WithContext("migrate to schema " + std::to_string(m.version)));
    RETURN_IF_ERROR(Exec(("PRAGMA user_version = " + std::to_string(m.version)).c_str()));
    RETURN_IF_ERROR(txn.Commit());
  }
  // Also catches a newer file when every step above was skipped.
  ASSIGN_OR_RETURN(int version, read_version());
  if (version > kSchemaVersion) {
    return FailedPrecondition("database schema version " + std::to_string(version) +
                              " is newer than this build supports (" +
                              std::to_string(kSchemaVersion) + "); upgrade Trainyard");
  }
  return Status::Ok();
}

Result<bool> SqliteJobStore::JobExists(const std::string& uid) {
  ASSIGN_OR_RETURN(Statement st, Prepare("SELECT 1 FROM jobs WHERE uid = ?"));
  st.Bind(1, uid);
  return st.Step("look up job " + uid);
}

namespace {

// Binds the job's mutable columns to parameters first..first+17 (spec .. ending).
template <typename Stmt>
void BindMutableColumns(Stmt& st, int first, const model::Job& job) {
  int i = first;
  st.Bind(i++, job.spec_json);
  st.Bind(i++, model::JobStateName(job.state));
  st.Bind(i++, job.create_time);
  st.Bind(i++, job.start_time);
  st.Bind(i++, job.end_time);
  st.Bind(i++, job.update_time);
  st.Bind(i++, job.phases.queued);
  st.Bind(i++, job.phases.admitted);
  st.Bind(i++, job.phases.image_ready);
  st.Bind(i++, job.phases.all_running);
  st.Bind(i++, job.phases.finished);
  st.Bind(i++, job.error ? std::optional<int64_t>(job.error->code) : std::nullopt);
  if (job.error) {
    st.Bind(i++, job.error->message);
  } else {
    st.Bind(i++, std::optional<int64_t>());  // NULL
  }
  st.Bind(i++, static_cast<int64_t>(job.attempt));
  st.Bind(i++, static_cast<int64_t>(job.cancel_requested ? 1 : 0));
  const std::optional<model::Ending>& e = job.ending;
  const model::JobError* ending_error = e && e->error ? &*e->error : nullptr;
  if (e) {
    st.Bind(i++, model::EndingKindName(e->kind));
  } else {
    st.Bind(i++, std::optional<int64_t>());
  }
  st.Bind(i++, ending_error ? std::optional<int64_t>(ending_error->code) : std::nullopt);
  if (ending_error) {
    st.Bind(i++, ending_error->message);
  } else {
    st.Bind(i++, std::optional<int64_t>());
  }
}

// The most a column a request fills may hold when read back: a request body is a few
// MiB; a study's trials (10,000 of 100 parameters) some hundreds. A row past them was
// not written by the daemon and is not read into memory.
constexpr int kMaxSpecColumnBytes = 64 << 20;
constexpr int kMaxTrialsColumnBytes = 512 << 20;

// The columns a study's machine keeps as JSON: its trials (29) and progress (32), and any
// job's outbox (35). DataLoss when one does not read back.
template <typename Stmt>
Status ReadJsonColumns(const Stmt& st, model::Job* job) {
  if (st.Text(29) != "[]") {
    ASSIGN_OR_RETURN(job->trials, model::DecodeTrials(st.Text(29)));
  }
  ASSIGN_OR_RETURN(job->study_progress, model::DecodeStudyProgress(st.Text(32)));
  ASSIGN_OR_RETURN(job->outbox, model::DecodeOutbox(st.Text(35)));
  return Status::Ok();
}

// Reads a row selected with kJobColumns. DataLoss for values this code cannot name, or
// out of range, or larger than the bounds above.
template <typename Stmt>
Status CheckColumnSizes(const Stmt& st, const std::string& uid) {
  for (auto [col, max] : {std::pair{5, kMaxSpecColumnBytes}, std::pair{26, kMaxSpecColumnBytes},
                          std::pair{25, kMaxSpecColumnBytes}, std::pair{27, kMaxSpecColumnBytes},
                          std::pair{29, kMaxTrialsColumnBytes}, std::pair{34, kMaxSpecColumnBytes},
                          std::pair{35, kMaxSpecColumnBytes}}) {
    if (st.Bytes(col) > max) {
      return Status(StatusCode::kDataLoss, "job " + uid + ": column " + std::to_string(col) +
                                               " holds " + std::to_string(st.Bytes(col)) +
                                               " bytes, more than any request makes");
    }
  }
  return Status::Ok();
}

// Columns 11-15: when each phase began.
template <typename Stmt>
model::PhaseTimes ReadPhases(const Stmt& st) {
  model::PhaseTimes phases;
  phases.queued = st.Int(11);
  phases.admitted = st.Int(12);
  phases.image_ready = st.Int(13);
  phases.all_running = st.Int(14);
  phases.finished = st.Int(15);
  return phases;
}

template <typename Stmt>
Result<model::Job> ReadJobRow(const Stmt& st) {
  model::Job job;
  job.uid = st.Text(0);
  RETURN_IF_ERROR(CheckColumnSizes(st, job.uid));
  std::optional<model::Dialect> dialect = internal::DialectFromName(st.Text(1));
  std::optional<model::JobState> state = model::JobStateFromName(st.Text(6));
  if (!dialect || !state) {
    return Status(StatusCode::kDataLoss, "job " + job.uid + ": unknown dialect or state in store");
  }
  job.dialect = *dialect;
  job.project = st.Text(2);
  job.location = st.Text(3);
  // The ml v1 id is the one part of `spec` the store restores: a job must stay
  // reachable by its name even when its spec can no longer be parsed.
  job.spec.job_id = st.Text(4);
  job.spec_json = st.Text(5);
  job.state = *state;
  job.create_time = st.Int(7);
  job.start_time = st.Int(8);
  job.end_time = st.Int(9);
  job.update_time = st.Int(10);
  job.phases = ReadPhases(st);
  if (!st.IsNull(16)) job.error = model::JobError{static_cast<int>(st.Int(16)), st.Text(17)};
  job.attempt = static_cast<int>(st.Int(18));
  job.cancel_requested = st.Int(19) != 0;
  if (!st.IsNull(20)) {
    std::optional<model::EndingKind> kind = model::EndingKindFromName(st.Text(20));
    if (!kind) return Status(StatusCode::kDataLoss, "job " + job.uid + ": unknown ending in store");
    job.ending = model::Ending{*kind, std::nullopt};
    if (!st.IsNull(21))
      job.ending->error = model::JobError{static_cast<int>(st.Int(21)), st.Text(22)};
  }
  // Column 23 (uid_num) is the uid again.
  job.spec.display_name = st.Text(24);
  job.spec.labels = internal::LabelsFromJson(st.Text(25));
  job.spec_record = st.Text(26);
  job.grants = internal::GrantsFromJson(st.Text(27));
  job.preemptions = static_cast<int>(st.Int(28));
  RETURN_IF_ERROR(ReadJsonColumns(st, &job).WithContext("job " + job.uid));
  job.study_uid = st.Text(30);
  job.trial_id = st.Int(31);
  if (st.Int(18) < 0 || st.Int(18) > (1 << 20) || st.Int(28) < 0 || st.Int(28) > (1 << 20) ||
      job.trial_id < 0) {
    return Status(StatusCode::kDataLoss,
                  "job " + job.uid + ": its attempt, preemptions or trial id is out of range");
  }
  std::optional<model::JobKind> kind = model::JobKindFromName(st.Text(33));
  if (!kind) return Status(StatusCode::kDataLoss, "job " + job.uid + ": unknown kind in store");
  job.kind = *kind;
  job.images = internal::ImagesFromJson(st.Text(34));
  return job;
}

constexpr char kReplicaColumns[] =
    "pool, idx, attempt, task_name, handle, state, exit_code, signal, restarts, start_time, "
    "end_time";

// Reads kReplicaColumns starting at column `c`.
template <typename Stmt>
Result<model::ReplicaRecord> ReadReplicaRow(const Stmt& st, int c, const std::string& uid) {
  model::ReplicaRecord r;
  r.pool = static_cast<int>(st.Int(c + 0));
  r.index = static_cast<int>(st.Int(c + 1));
  r.attempt = static_cast<int>(st.Int(c + 2));
  r.task_name = st.Text(c + 3);
  r.handle = st.Text(c + 4);
  std::optional<model::ReplicaState> state = model::ReplicaStateFromName(st.Text(c + 5));
  if (!state) return Status(StatusCode::kDataLoss, "job " + uid + ": unknown replica state");
  r.state = *state;
  if (!st.IsNull(c + 6)) r.exit_code = static_cast<int>(st.Int(c + 6));
  if (!st.IsNull(c + 7)) r.signal = static_cast<int>(st.Int(c + 7));
  r.restarts = static_cast<int>(st.Int(c + 8));
  r.start_time = st.Int(c + 9);
  r.end_time = st.Int(c + 10);
  // Indexes the service takes into a spec and its attempts: in range, or no replica.
  if (st.Int(c + 0) < 0 || st.Int(c + 0) >= model::kMaxPools || st.Int(c + 1) < 0 ||
      st.Int(c + 1) > (1 << 20) || st.Int(c + 2) < 0 || st.Int(c + 2) > (1 << 20) ||
      st.Int(c + 8) < 0 || st.Int(c + 8) > (1 << 20)) {
    return Status(StatusCode::kDataLoss, "job " + uid +
                                             ": a replica's pool, index, attempt or "
                                             "restarts is out of range");
  }
  return r;
}

std::optional<int64_t> OptInt64(const std::optional<int>& v) {
  return v ? std::optional<int64_t>(*v) : std::nullopt;
}

}  // namespace

Status SqliteJobStore::WriteReplicas(const model::Job& job) {
  {
    ASSIGN_OR_RETURN(Statement del, Prepare("DELETE FROM replicas WHERE uid = ?"));
    del.Bind(1, job.uid);
    RETURN_IF_ERROR(del.Run("clear replicas of " + job.uid));
  }
  static const std::string kInsert = std::string("INSERT INTO replicas (uid, pos, ") +
                                     kReplicaColumns + ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)";
  for (size_t pos = 0; pos < job.replicas.size(); ++pos) {
    const model::ReplicaRecord& r = job.replicas[pos];
    ASSIGN_OR_RETURN(Statement ins, Prepare(kInsert.c_str()));
    ins.Bind(1, job.uid)
        .Bind(2, static_cast<int64_t>(pos))
        .Bind(3, static_cast<int64_t>(r.pool))
        .Bind(4, static_cast<int64_t>(r.index))
        .Bind(5, static_cast<int64_t>(r.attempt))
        .Bind(6, r.task_name)
        .Bind(7, r.handle)
        .Bind(8, model::ReplicaStateName(r.state))
        .Bind(9, OptInt64(r.exit_code))
        .Bind(10, OptInt64(r.signal))
        .Bind(11, static_cast<int64_t>(r.restarts))
        .Bind(12, r.start_time)
        .Bind(13, r.end_time);
    RETURN_IF_ERROR(ins.Run("write replica of " + job.uid));
  }
  return Status::Ok();
}

Status SqliteJobStore::LoadReplicas(model::Job& job) {
  static const std::string kSelect =
      std::string("SELECT ") + kReplicaColumns + " FROM replicas WHERE uid = ? ORDER BY pos";
  ASSIGN_OR_RETURN(Statement st, Prepare(kSelect.c_str()));
  st.Bind(1, job.uid);
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step("read replicas of " + job.uid));
    if (!row) break;
    ASSIGN_OR_RETURN(model::ReplicaRecord r, ReadReplicaRow(st, 0, job.uid));
    job.replicas.push_back(std::move(r));
  }
  return Status::Ok();
}

Result<model::Job> SqliteJobStore::LoadJob(const char* sql, const std::string& key1,
                                           const std::string* key2) {
  model::Job job;
  {
    ASSIGN_OR_RETURN(Statement st, Prepare(sql));
    st.Bind(1, key1);
    if (key2 != nullptr) st.Bind(2, *key2);
    ASSIGN_OR_RETURN(bool row, st.Step("read job"));
    if (!row) return NotFound("not found");  // Callers replace the message.
    ASSIGN_OR_RETURN(job, ReadJobRow(st));
  }
  RETURN_IF_ERROR(LoadReplicas(job));
  return job;
}

Status SqliteJobStore::CommitJob(const model::Job& job, bool create,
                                 const std::vector<model::JobEvent>& events) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*this, /*write=*/true));
  RETURN_IF_ERROR(create ? InsertJobLocked(job) : ReplaceJobLocked(job));
  for (const model::JobEvent& e : events) RETURN_IF_ERROR(AppendEventLocked(job.uid, e));
  return txn.Commit();
}

Status SqliteJobStore::InsertJobLocked(const model::Job& job) {
  // Checked explicitly (not only via constraint errors) for precise messages.
  ASSIGN_OR_RETURN(bool exists, JobExists(job.uid));
  if (exists) return AlreadyExists("job " + job.uid + " already exists");
  const std::string ml_id = internal::MlJobIdOf(job);
  if (job.dialect == model::Dialect::kMlV1) {
    ASSIGN_OR_RETURN(Statement st, Prepare("SELECT 1 FROM jobs WHERE dialect = 'ML_V1' AND "
                                           "project = ? AND job_id = ?"));
    st.Bind(1, job.project).Bind(2, ml_id);
    ASSIGN_OR_RETURN(bool taken, st.Step("look up ml job"));
    if (taken) {
      return AlreadyExists("job projects/" + job.project + "/jobs/" + ml_id + " already exists");
    }
  }
  {
    static const std::string kInsert =
        std::string("INSERT INTO jobs (") + kJobColumns +
        ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
    ASSIGN_OR_RETURN(Statement st, Prepare(kInsert.c_str()));
    st.Bind(1, job.uid)
        .Bind(2, internal::DialectName(job.dialect))
        .Bind(3, job.project)
        .Bind(4, job.location)
        .Bind(5, ml_id);
    BindMutableColumns(st, 6, job);
    st.Bind(24, internal::UidNumber(job.uid))
        .Bind(25, job.spec.display_name)
        .Bind(26, internal::LabelsToJson(job.spec.labels))
        .Bind(27, job.spec_record)
        .Bind(28, internal::GrantsToJson(job.grants))
        .Bind(29, static_cast<int64_t>(job.preemptions))
        .Bind(30, model::EncodeTrials(job.trials))
        .Bind(31, job.study_uid)
        .Bind(32, job.trial_id)
        .Bind(33, model::EncodeStudyProgress(job.study_progress))
        .Bind(34, model::JobKindName(job.kind))
        .Bind(35, internal::ImagesToJson(job.images))
        .Bind(36, model::EncodeOutbox(job.outbox));
    RETURN_IF_ERROR(st.Run("insert job " + job.uid));
  }
  return WriteReplicas(job);
}

Status SqliteJobStore::ReplaceJobLocked(const model::Job& job) {
  {
    ASSIGN_OR_RETURN(Statement st,
                     Prepare("SELECT dialect, project, location, job_id FROM jobs WHERE uid = ?"));
    st.Bind(1, job.uid);
    ASSIGN_OR_RETURN(bool row, st.Step("read job " + job.uid));
    if (!row) return internal::JobNotFound(job.uid);
    const std::string ml_id = internal::MlJobIdOf(job);
    if (st.Text(0) != internal::DialectName(job.dialect) || st.Text(1) != job.project ||
        st.Text(2) != job.location || (!ml_id.empty() && ml_id != st.Text(3))) {
      return InvalidArgument("UpdateJob cannot change the identity of job " + job.uid);
    }
  }
  {
    ASSIGN_OR_RETURN(
        Statement st,
        Prepare("UPDATE jobs SET spec_json = ?, state = ?, create_time = ?, start_time = ?, "
                "end_time = ?, update_time = ?, queued_time = ?, admitted_time = ?, "
                "image_ready_time = ?, all_running_time = ?, finished_time = ?, error_code = ?, "
                "error_message = ?, attempt = ?, cancel_requested = ?, ending_kind = ?, "
                "ending_code = ?, ending_message = ?, grants_json = ?, preemptions = ?, "
                "trials_json = ?, study_json = ?, images_json = ?, outbox_json = ? "
                "WHERE uid = ?"));
    BindMutableColumns(st, 1, job);
    st.Bind(19, internal::GrantsToJson(job.grants))
        .Bind(20, static_cast<int64_t>(job.preemptions))
        .Bind(21, model::EncodeTrials(job.trials))
        .Bind(22, model::EncodeStudyProgress(job.study_progress))
        .Bind(23, internal::ImagesToJson(job.images))
        .Bind(24, model::EncodeOutbox(job.outbox))
        .Bind(25, job.uid);
    RETURN_IF_ERROR(st.Run("update job " + job.uid));
  }
  return WriteReplicas(job);
}

Result<model::Job> SqliteJobStore::GetJob(const std::string& uid) {
  static const std::string kSelect =
      std::string("SELECT ") + kJobColumns + " FROM jobs WHERE uid = ?";
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*this, /*write=*/false));
  Result<model::Job> job = LoadJob(kSelect.c_str(), uid, nullptr);
  if (!job.ok()) {
    return job.status().code() == StatusCode::kNotFound ? internal::JobNotFound(uid) : job.status();
  }
  RETURN_IF_ERROR(txn.Commit());
  return job;
}

Result<model::Job> SqliteJobStore::FindMlJob(const std::string& project,
                                             const std::string& job_id) {
  static const std::string kSelect = std::string("SELECT ") + kJobColumns +
                                     " FROM jobs WHERE dialect = 'ML_V1' AND project = ? AND "
                                     "job_id = ?";
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*this, /*write=*/false));
  Result<model::Job> job = LoadJob(kSelect.c_str(), project, &job_id);
  if (!job.ok()) {
    if (job.status().code() != StatusCode::kNotFound) return job.status();
    return NotFound("job projects/" + project + "/jobs/" + job_id + " not found");
  }
  RETURN_IF_ERROR(txn.Commit());
  return job;
}

Result<std::vector<model::Job>> SqliteJobStore::ListJobs() {
  return ListWhere("ORDER BY create_time, uid", /*replicas=*/true);
}

Result<std::vector<model::Job>> SqliteJobStore::ListLiveJobs() {
  return ListWhere(kLiveJobsQuery,
                   /*replicas=*/true);
}

Result<std::vector<model::Job>> SqliteJobStore::ListEndedSince(TimeMicros since) {
  // `since` is a number printed by us, never request text: safe in the statement.
  return ListWhere(
      "INDEXED BY jobs_ended WHERE state IN ('SUCCEEDED', 'FAILED', 'CANCELLED') "
      "AND end_time >= " +
          std::to_string(since) + " ORDER BY end_time, uid",
      /*replicas=*/false);
}

Result<std::vector<model::Job>> SqliteJobStore::ListWhere(const std::string& where_and_order,
                                                          bool replicas) {
  const std::string select = std::string("SELECT ") + kJobColumns + " FROM jobs " + where_and_order;
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*this, /*write=*/false));
  std::vector<model::Job> jobs;
  {
    ASSIGN_OR_RETURN(Statement st, Prepare(select.c_str()));
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step("list jobs"));
      if (!row) break;
      Result<model::Job> job = ReadJobRow(st);
      if (!job.ok()) {
        SetAside(st.Text(0), job.status());
        continue;
      }
      jobs.push_back(std::move(job).value());
    }
  }
  if (replicas) {
    for (auto it = jobs.begin(); it != jobs.end();) {
      Status loaded = LoadReplicas(*it);
      if (loaded.code() != StatusCode::kDataLoss) RETURN_IF_ERROR(loaded);
      if (loaded.ok()) {
        ++it;
        continue;
      }
      SetAside(it->uid, loaded);
      it = jobs.erase(it);
    }
  }
  RETURN_IF_ERROR(txn.Commit());
  return jobs;
}

Result<std::vector<model::Job>> SqliteJobStore::ListJobsPage(const PageQuery& query) {
  // jobs_by_scope serves both the range and the order; LIMIT stops the walk.
  static const std::string kSelect =
      std::string("SELECT ") + kJobColumns +
      " FROM jobs WHERE dialect = ? AND project = ? AND location = ? AND uid_num < ? "
      "AND study_uid = '' ORDER BY uid_num DESC LIMIT ?";
  // ml v1 jobs are stored with an empty location.
  static const std::string kSelectAnyLocation =
      std::string("SELECT ") + kJobColumns +
      " FROM jobs WHERE dialect = ? AND project = ? AND uid_num < ? AND study_uid = '' "
      "ORDER BY uid_num DESC LIMIT ?";
  const std::string location = query.dialect == model::Dialect::kMlV1 ? "" : query.location;
  const bool any_location = query.dialect == model::Dialect::kVertex && query.any_location;
  int64_t before = query.before_uid.empty() ? INT64_MAX : internal::UidNumber(query.before_uid);
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*this, /*write=*/false));
  std::vector<model::Job> jobs;
  {
    ASSIGN_OR_RETURN(Statement st,
                     Prepare(any_location ? kSelectAnyLocation.c_str() : kSelect.c_str()));
    st.Bind(1, internal::DialectName(query.dialect)).Bind(2, query.project);
    int next = 3;
    if (!any_location) st.Bind(next++, location);
    st.Bind(next, before).Bind(next + 1, static_cast<int64_t>(query.limit));
    size_t bytes = 0;
    while (query.max_bytes == 0 || bytes < query.max_bytes) {
      ASSIGN_OR_RETURN(bool row, st.Step("list a page of jobs"));
      if (!row) break;
      Result<model::Job> job = ReadJobRow(st);
      if (!job.ok()) {
        SetAside(st.Text(0), job.status());
        continue;
      }
      bytes += model::ApproxRecordBytes(*job);
      jobs.push_back(std::move(job).value());
    }
  }
  RETURN_IF_ERROR(txn.Commit());
  return jobs;
}

void SqliteJobStore::SetAside(const std::string& uid, const Status& why) {
  constexpr size_t kKept = 1000;  // Each is logged; beyond this many only logged.
  if (set_aside_.count(uid) > 0) return;
  spdlog::error("store: the row of job {} cannot be read back and is set aside: {}", uid,
                why.message());
  if (set_aside_.size() < kKept) set_aside_[uid] = why.message();
}

std::vector<std::string> SqliteJobStore::SetAsideRows() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [uid, why] : set_aside_) out.push_back("job " + uid + ": " + why);
  return out;
}

Result<std::string> SqliteJobStore::LastUid() {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Statement st,
                   Prepare("SELECT uid FROM (SELECT uid, uid_num FROM jobs UNION ALL "
                           "SELECT uid, uid_num FROM deletions) ORDER BY uid_num DESC LIMIT 1"));
  ASSIGN_OR_RETURN(bool row, st.Step("read the last uid"));
  return row ? st.Text(0) : std::string();
}

Result<std::map<model::JobState, int64_t>> SqliteJobStore::CountJobsByState() {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Statement st, Prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state"));
  std::map<model::JobState, int64_t> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step("count jobs by state"));
    if (!row) return out;
    if (std::optional<model::JobState> s = model::JobStateFromName(st.Text(0))) {
      out[*s] = st.Int(1);
    }
  }
}

Status SqliteJobStore::DeleteJob(const std::string& uid, TimeMicros when) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*this, /*write=*/true));
  {
    ASSIGN_OR_RETURN(Statement st, Prepare("INSERT OR REPLACE INTO deletions "
                                           "SELECT uid, uid_num, project, location, ?2 "
                                           "FROM jobs WHERE uid = ?1"));
    st.Bind(1, uid).Bind(2, when);
    RETURN_IF_ERROR(st.Run("keep the deletion of " + uid));
    if (sqlite3_changes(db_) == 0) return internal::JobNotFound(uid);
  }
  {
    // Replicas and events go with it (ON DELETE CASCADE).
    ASSIGN_OR_RETURN(Statement st, Prepare("DELETE FROM jobs WHERE uid = ?"));
    st.Bind(1, uid);
    RETURN_IF_ERROR(st.Run("delete job " + uid));
  }
  {
    ASSIGN_OR_RETURN(Statement st, Prepare("DELETE FROM deletions WHERE time < ?1 AND "
                                           "uid_num < (SELECT MAX(uid_num) FROM deletions)"));
    st.Bind(1, when - kDeletionsKeptFor);
    RETURN_IF_ERROR(st.Run("forget old deletions"));
  }
  return txn.Commit();
}

Result<JobStore::Deletion> SqliteJobStore::GetDeletion(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Statement st,
                   Prepare("SELECT project, location, time FROM deletions WHERE uid = ?"));
  st.Bind(1, uid);
  ASSIGN_OR_RETURN(bool row, st.Step("read the deletion of " + uid));
  if (!row) return internal::JobNotFound(uid);
  return Deletion{.uid = uid, .project = st.Text(0), .location = st.Text(1), .time = st.Int(2)};
}

Status SqliteJobStore::AppendEvent(const std::string& uid, const model::JobEvent& event) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*this, /*write=*/true));
  ASSIGN_OR_RETURN(bool exists, JobExists(uid));
  if (!exists) return internal::JobNotFound(uid);
  RETURN_IF_ERROR(AppendEventLocked(uid, event));
  return txn.Commit();
}

Status SqliteJobStore::AppendEventLocked(const std::string& uid, const model::JobEvent& event) {
  ASSIGN_OR_RETURN(Statement st,
                   Prepare("INSERT INTO events (uid, seq, time, kind, message) VALUES (?1, "
                           "(SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE uid = ?1), "
                           "?2, ?3, ?4)"));
  st.Bind(1, uid).Bind(2, event.time).Bind(3, event.kind).Bind(4, event.message);
  return st.Run("append event to " + uid);
}

Result<std::vector<model::JobEvent>> SqliteJobStore::ListEvents(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(*this, /*write=*/false));
  ASSIGN_OR_RETURN(bool exists, JobExists(uid));
  if (!exists) return internal::JobNotFound(uid);
  std::vector<model::JobEvent> events;
  {
    ASSIGN_OR_RETURN(Statement st,
                     Prepare("SELECT time, kind, message FROM events WHERE uid = ? ORDER BY seq"));
    st.Bind(1, uid);
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step("list events of " + uid));
      if (!row) break;
      events.push_back(model::JobEvent{st.Int(0), st.Text(1), st.Text(2)});
    }
  }
  RETURN_IF_ERROR(txn.Commit());
  return events;
}

}  // namespace ty::jobstore
