// A SQLite connection and prepared statements for the TensorBoard store (store.h):
// bind by position, step, read columns. Internal to tensorboard/; not thread-safe (the
// store's mutex guards it).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace ty::tensorboard {

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& Bind(int64_t v);
  Stmt& Bind(double v);
  Stmt& Bind(std::string_view v);
  Stmt& Bind(const std::string& v) { return Bind(std::string_view(v)); }
  Stmt& Bind(const char* v) { return Bind(std::string_view(v)); }

  // True while a row is ready; false when done. Internal on an error (or a statement
  // that did not prepare).
  Result<bool> Step();
  Status Run();  // Steps to the end.
  // Ready to run again with new bindings (a statement prepared once for many rows).
  void Reset();

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string Text(int col) const;

 private:
  sqlite3* const db_;
  sqlite3_stmt* stmt_ = nullptr;
  int next_ = 1;
  std::string prepare_error_;
};

class SqliteDb {
 public:
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  ~SqliteDb() { sqlite3_close(db_); }
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  sqlite3* get() const { return db_; }
  Status Exec(const char* sql);
  int64_t Changes() const { return sqlite3_changes64(db_); }
  int64_t LastRowId() const { return sqlite3_last_insert_rowid(db_); }

 private:
  sqlite3* const db_;
};

// BEGIN IMMEDIATE … COMMIT, rolled back unless Commit() ran.
class Transaction {
 public:
  explicit Transaction(SqliteDb* db) : db_(db) { begun_ = db_->Exec("BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (begun_.ok() && !done_) db_->Exec("ROLLBACK").IgnoreError();
  }
  const Status& begun() const { return begun_; }
  Status Commit() {
    done_ = true;
    return db_->Exec("COMMIT");
  }

 private:
  SqliteDb* const db_;
  Status begun_;
  bool done_ = false;
};

}  // namespace ty::tensorboard
