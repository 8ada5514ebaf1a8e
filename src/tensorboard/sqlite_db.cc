#include "tensorboard/sqlite_db.h"

namespace ty::tensorboard {

Stmt::Stmt(sqlite3* db, const char* sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
    prepare_error_ = sqlite3_errmsg(db);
    stmt_ = nullptr;
  }
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Stmt& Stmt::Bind(int64_t v) {
  if (stmt_ != nullptr) sqlite3_bind_int64(stmt_, next_, v);
  ++next_;
  return *this;
}

Stmt& Stmt::Bind(double v) {
  if (stmt_ != nullptr) sqlite3_bind_double(stmt_, next_, v);
  ++next_;
  return *this;
}

Stmt& Stmt::Bind(std::string_view v) {
  if (stmt_ != nullptr) {
    sqlite3_bind_text(stmt_, next_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  ++next_;
  return *this;
}

Result<bool> Stmt::Step() {
  if (stmt_ == nullptr) return Internal("tensorboard store: prepare: " + prepare_error_);
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Internal(std::string("tensorboard store: ") + sqlite3_errmsg(db_));
}

Status Stmt::Run() {
  while (true) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

void Stmt::Reset() {
  if (stmt_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  next_ = 1;
}

std::string Stmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

Status SqliteDb::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) == SQLITE_OK) return Status::Ok();
  std::string message = err != nullptr ? err : "unknown error";
  sqlite3_free(err);
  return Internal("tensorboard store: " + message);
}

}  // namespace ty::tensorboard
