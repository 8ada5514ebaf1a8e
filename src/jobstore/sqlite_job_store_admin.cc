// The SQLite store's integrity check and online backup (issue 31 item 5): what the
// daemon runs at start before it trusts the file, and what `trainyard admin backup`
// fetches while jobs run. Raw SQLite calls under the store's mutex; the statement
// cache of sqlite_job_store.cc is for the hot paths.
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>

#include "jobstore/sqlite_job_store.h"

namespace ty::jobstore {
namespace {

// Pages copied per backup step; the store's mutex is released between steps, so
// writers wait at most one step (~100 ms for 4 MiB of pages here).
constexpr int kBackupPagesPerStep = 1024;

std::string ErrorOf(sqlite3* db) { return db != nullptr ? sqlite3_errmsg(db) : "out of memory"; }

}  // namespace

Result<SqliteJobStore::QuickCheck> SqliteJobStore::CheckIntegrity(DurationMicros budget) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(budget);
  struct Clock {
    std::chrono::steady_clock::time_point deadline;
    bool expired = false;
  } clock{deadline};
  // Every 10,000 virtual-machine steps: past the deadline, SQLite stops the check.
  sqlite3_progress_handler(
      db_, 10000,
      [](void* arg) {
        auto* c = static_cast<Clock*>(arg);
        c->expired = std::chrono::steady_clock::now() > c->deadline;
        return c->expired ? 1 : 0;
      },
      &clock);
  sqlite3_stmt* st = nullptr;
  QuickCheck out;
  int rc = sqlite3_prepare_v2(db_, "PRAGMA quick_check(1)", -1, &st, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(st, 0);
    out.detail = text != nullptr ? reinterpret_cast<const char*>(text) : "";
    out.ok = out.detail == "ok";
  } else if (clock.expired) {
    out.finished = false;
  } else {
    out.ok = false;
    out.detail = ErrorOf(db_);
  }
  sqlite3_finalize(st);
  sqlite3_progress_handler(db_, 0, nullptr, nullptr);
  return out;
}

Result<SqliteJobStore::KnownUids> SqliteJobStore::ListKnownUids() {
  std::lock_guard<std::mutex> lock(mu_);
  KnownUids known;
  for (auto [sql, into] : {std::pair{"SELECT uid FROM jobs", &known.jobs},
                           std::pair{"SELECT uid FROM deletions", &known.deleted}}) {
    sqlite3_stmt* st = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &st, nullptr);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(st, 0);
      if (text != nullptr) into->insert(reinterpret_cast<const char*>(text));
      rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return Internal("list the store's uids: " + ErrorOf(db_));
  }
  return known;
}

Status SqliteJobStore::BackupTo(const std::string& path) {
  // Private from its first byte, as the store itself: it holds jobs' environments.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("create " + path + ": the file exists or cannot be made");
  ::close(fd);
  sqlite3* dest = nullptr;
  if (sqlite3_open_v2(path.c_str(), &dest, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    Status s = Internal("open " + path + ": " + ErrorOf(dest));
    sqlite3_close_v2(dest);
    return s;
  }
  sqlite3_backup* backup = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    backup = sqlite3_backup_init(dest, "main", db_, "main");
  }
  if (backup == nullptr) {
    Status s = Internal("backup to " + path + ": " + ErrorOf(dest));
    sqlite3_close_v2(dest);
    return s;
  }
  int rc = SQLITE_OK;
  while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
    {
      // Writes through this connection between steps are seen by the backup (SQLite
      // copies the changed pages again), so the copy is of one moment: its end.
      std::lock_guard<std::mutex> lock(mu_);
      rc = sqlite3_backup_step(backup, kBackupPagesPerStep);
    }
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) sqlite3_sleep(10);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    sqlite3_backup_finish(backup);
  }
  Status s =
      rc == SQLITE_DONE ? Status::Ok() : Internal("backup to " + path + ": " + ErrorOf(dest));
  sqlite3_close_v2(dest);
  if (!s.ok()) ::unlink(path.c_str());
  return s;
}

}  // namespace ty::jobstore
