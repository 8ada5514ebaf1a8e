// SqliteJobStore: the durable JobStore, one SQLite file in WAL mode.
//
// On-disk layout (schema version kSchemaVersion, kept in `PRAGMA user_version`):
//
//   jobs      uid PK | dialect | project | location | job_id | spec_json | state |
//             create/start/end/update_time | phase times | error_code, error_message
//             (both NULL = no error) | attempt | cancel_requested |
//             ending_kind, ending_code, ending_message (v2; NULL = no stop pending) |
//             uid_num (uid as a number), display_name, labels_json (v3: list fields) |
//             spec_record (v4: the versioned internal spec; '' before) | ... |
//             outbox_json (v11: the last commit's service lines, model/outbox.h)
//             INDEX (dialect, project, location, uid_num): List pages by scope
//             INDEX (state) WHERE not terminal or lines in the outbox (v12): start-up
//             loads live jobs, and finished ones whose last lines may be unwritten
//             UNIQUE (dialect, project, job_id) WHERE dialect = 'ML_V1'
//   replicas  (uid FK -> jobs ON DELETE CASCADE, pos) PK | pool | idx | attempt |
//             task_name | handle | state | exit_code? | signal? | restarts | times
//   events    (uid FK -> jobs ON DELETE CASCADE, seq) PK | time | kind | message
//   deletions uid PK | uid_num | project | location | time (v7: deleted jobs, for their
//             delete operations and so that LastUid never hands a deleted uid out again)
//
// `pos` keeps Job::replicas in order; `seq` numbers a job's events from 1.
// Opening runs every migration newer than the file's version, each in its own
// transaction; a file written by a newer Trainyard is refused (FailedPrecondition)
// rather than misread.
//
// Ownership: the store owns one sqlite3 connection and its prepared statements.
// Thread-safety: all methods are safe from any thread. One mutex serialises use of
// the connection, and each public method is one SQLite transaction, so it is atomic
// with respect to other threads and to other processes/connections on the same file
// (writes take BEGIN IMMEDIATE; busy_timeout waits for other writers).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "jobstore/job_store.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ty::jobstore {

class SqliteJobStore : public JobStore {
 public:
  // The schema this code writes. Files at a higher version are refused.
  static constexpr int kSchemaVersion = 13;
  // What start-up reads (ListLiveJobs), after "SELECT columns FROM jobs". Through the
  // partial index named: left to itself SQLite walks jobs_by_create_time to skip the
  // sort, reading every job ever run (32 ms for 100,000 in memory; 0.03 ms this way).
  static constexpr char kLiveJobsQuery[] =
      "INDEXED BY jobs_live WHERE state NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED') OR "
      "instr(outbox_json, '\"lines\":') > 0 ORDER BY create_time, uid";

  // Opens (creating if missing) the database at `path`; ":memory:" gives a private
  // in-memory database (no WAL there). Applies pending migrations.
  // Returns FailedPrecondition if the file's schema is newer than kSchemaVersion or
  // WAL cannot be enabled, DataLoss if the file is not a database, Internal or
  // Unavailable (locked) otherwise.
  static Result<std::unique_ptr<SqliteJobStore>> Open(const std::string& path);
  ~SqliteJobStore() override;
  SqliteJobStore(const SqliteJobStore&) = delete;
  SqliteJobStore& operator=(const SqliteJobStore&) = delete;

  // UpdateJob keeps the identity given at creation (dialect, project, location and
  // the ml v1 job_id); a job that differs there is InvalidArgument. An empty
  // spec.job_id (a job read back without rebuilding its spec) means "unchanged".
  // ListEvents of an absent job is NotFound.
  Status CommitJob(const model::Job& job, bool create,
                   const std::vector<model::JobEvent>& events) override;
  Result<model::Job> GetJob(const std::string& uid) override;
  Result<model::Job> FindMlJob(const std::string& project, const std::string& job_id) override;
  Result<std::vector<model::Job>> ListJobs() override;
  Result<std::vector<model::Job>> ListLiveJobs() override;
  Result<std::vector<model::Job>> ListEndedSince(TimeMicros since) override;
  Result<std::vector<model::Job>> ListJobsPage(const PageQuery& query) override;
  Result<std::string> LastUid() override;
  Result<std::map<model::JobState, int64_t>> CountJobsByState() override;
  Status DeleteJob(const std::string& uid, TimeMicros when) override;
  Result<Deletion> GetDeletion(const std::string& uid) override;
  Status AppendEvent(const std::string& uid, const model::JobEvent& event) override;
  Result<std::vector<model::JobEvent>> ListEvents(const std::string& uid) override;
  std::vector<std::string> SetAsideRows() const override;
  Status BackupTo(const std::string& path) override;

  // --- Integrity (sqlite_job_store_admin.cc) ---
  struct QuickCheck {
    bool finished = true;  // False: stopped at the time budget, nothing wrong found so far.
    bool ok = true;        // SQLite's quick_check said "ok" (so far).
    std::string detail;    // Its first complaint.
  };
  // SQLite's quick_check of the whole file, stopped after `budget`.
  Result<QuickCheck> CheckIntegrity(DurationMicros budget);
  // Every uid the store knows: its jobs' and its deletions'.
  struct KnownUids {
    std::set<std::string> jobs;
    std::set<std::string> deleted;
  };
  Result<KnownUids> ListKnownUids();

 private:
  // The steps of CommitJob and AppendEvent, inside a write transaction (REQUIRES: mu_).
  Status InsertJobLocked(const model::Job& job);
  Status ReplaceJobLocked(const model::Job& job);
  Status AppendEventLocked(const std::string& uid, const model::JobEvent& event);
  class Statement;
  class Transaction;

  explicit SqliteJobStore(sqlite3* db);

  Status Migrate();  // Called once from Open, before the store is shared.

  // Returns the cached prepared statement for `sql` (compiled on first use).
  // REQUIRES: mu_ held (or the store not yet shared).
  Result<Statement> Prepare(const char* sql);
  Status Exec(const char* sql);  // For statements run rarely (PRAGMA, BEGIN...).

  // Helpers running inside a caller's transaction. REQUIRES: mu_ held.
  Result<bool> JobExists(const std::string& uid);
  Result<model::Job> LoadJob(const char* sql, const std::string& key1, const std::string* key2);
  Status LoadReplicas(model::Job& job);
  Result<std::vector<model::Job>> ListWhere(const std::string& where_and_order, bool replicas);
  Status WriteReplicas(const model::Job& job);
  // Records (once, logged) that the row of `uid` is set aside for `why`.
  // REQUIRES: mu_ held.
  void SetAside(const std::string& uid, const Status& why);

  mutable std::mutex mu_;
  std::map<std::string, std::string> set_aside_;          // uid -> why. GUARDED_BY(mu_).
  sqlite3* db_;                                           // GUARDED_BY(mu_); owned.
  std::unordered_map<std::string, sqlite3_stmt*> stmts_;  // GUARDED_BY(mu_); owned.
};

}  // namespace ty::jobstore
