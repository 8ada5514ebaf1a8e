// What the daemon checks of its data directory before it trusts it (issue 31 item 5),
// so that a damaged store is never loss without a word: a directory it cannot write,
// a write-ahead log beside an empty database (SQLite would drop it), a database SQLite
// finds damaged, job logs whose job the store does not know (jobs lost from the WAL).
// Any of them stops the start with what was found and how to go on; with
// --accept-store-loss the daemon starts anyway, says what is lost, and keeps every file
// (a WAL or a lost job's log is moved aside, never deleted).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "jobstore/sqlite_job_store.h"

namespace ty::daemon {

// What was found; each member empty or false when all is well.
struct StoreFindings {
  std::string not_writable;            // Why the data directory cannot be written.
  uint64_t orphan_wal_bytes = 0;       // A WAL beside a database with no pages.
  std::string damage;                  // SQLite's quick_check complaint.
  std::vector<std::string> lost_jobs;  // Uids of job logs the store does not know.
};

// OK when nothing was found; otherwise FailedPrecondition saying what and how to go
// on (pure). A directory that cannot be written stops the start even when loss is
// accepted: nothing could be recorded.
Status JudgeStore(const StoreFindings& findings, bool accept_loss);

// Before the store is opened: a directory that cannot be written, and a WAL that
// SQLite would discard (the database file empty). With `accept_loss` that WAL is moved
// aside (trainyard.db-wal.lost-<unix time>) so SQLite starts afresh without it.
StoreFindings CheckBeforeOpen(const std::string& data_dir, bool accept_loss);

// The WAL as it was before SQLite opened it. SQLite replays a damaged WAL's frames up
// to the damage, drops the rest and checkpoints it away on close, so a start that then
// finds loss keeps this copy for whoever repairs the store (Keep); one that finds
// nothing removes it (the destructor). No copy when there is no WAL or no room.
class WalCopy {
 public:
  explicit WalCopy(const std::string& data_dir);
  ~WalCopy();
  WalCopy(const WalCopy&) = delete;
  WalCopy& operator=(const WalCopy&) = delete;
  // Keeps the copy as trainyard.db-wal.damaged-<unix time>; its path, "" when none.
  std::string Keep();

 private:
  std::string copy_;
};

// After it is opened: quick_check (at most `budget`), and the job logs under
// `logs_dir` whose uid the store does not know. A log of a deleted job (the store
// keeps its deletion) is the deletion's unfinished end: removed here. With
// `accept_loss`, lost jobs' logs are moved to `logs_dir`/lost/.
Result<StoreFindings> CheckAfterOpen(jobstore::SqliteJobStore* store, const std::string& logs_dir,
                                     DurationMicros budget, bool accept_loss);

}  // namespace ty::daemon
