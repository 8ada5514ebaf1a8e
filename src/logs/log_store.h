// Per-job log capture, storage and follow.
//
// Executors write replica output through the narrow `LogSink` interface; the service
// writes its own lines (task "service"). `LogStore` keeps one append-only NDJSON file
// per job under `<root>/<uid>.ndjson`, so ordering across replicas is the order of
// arrival and a cursor is simply a byte offset (resumable, O(1) seek). docs/design.md
// drew per-replica files; one file per job gives the same durability with a total
// order and a trivial cursor, and per-task reads are a filter.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace ty::logs {

enum class LogStream { kStdout, kStderr, kService };
const char* LogStreamName(LogStream s);  // "stdout", "stderr", "service"

struct LogEntry {
  // When the line was written, as well as its source can tell; never earlier than the
  // job's previous entry (LogStore::Append moves an entry that would go back in time to
  // just after the previous one), so a job's log reads forward in time.
  TimeMicros time = 0;
  std::string task;  // "workerpool0-0", "master-replica-0", or "service".
  LogStream stream = LogStream::kStdout;
  std::string severity;  // Cloud Logging names: "INFO", "ERROR", "WARNING", "DEFAULT", ...
  std::string message;   // One line, no trailing newline.
  // The line as printed when it was a JSON object with a string `message` (or
  // none): kept whole for Cloud Logging's jsonPayload; "" otherwise.
  std::string json_payload;
  // Set by reads: where the entry starts in its job's log. Unique within the job
  // and never changes, so it can name the entry (Cloud Logging's insertId).
  uint64_t position = 0;
  // Set by Read: where the entry's line ends (see CursorAfter).
  uint64_t end_position = 0;
  // The line's place in its source's own order when that is not `time` (0: it is):
  // podman stamps container lines with whole seconds, so the executor numbers the
  // lines of each second for de-duplication while `time` says when the line was seen.
  // LastEntryTime answers in these terms, so a restarted daemon skips exactly the
  // lines it had.
  TimeMicros source_time = 0;
};

class LogSink {
 public:
  virtual ~LogSink() = default;
  // Appends one entry whole, or nothing of it. Never blocks for long. A failure (the
  // disk full) is returned so that the caller keeps its place in its source and
  // appends the entry again later: a line is never lost for want of room.
  virtual Status Append(const std::string& job_uid, const LogEntry& entry) = 0;
  // Source time (`source_time`, else `time`) of the newest entry of `task` in this
  // job, 0 if none. Executors use it after a daemon restart to skip lines already
  // captured.
  virtual TimeMicros LastEntryTime(const std::string& job_uid, const std::string& task) = 0;
};

struct LogPage {
  std::vector<LogEntry> entries;
  std::string next_cursor;  // Opaque; pass back to continue after these entries.
  // ReadBefore: pass back as `before` for the entries before these; "" at the log's start.
  std::string previous_cursor;
};

class LogStore : public LogSink {
 public:
  // Creates `root_dir` if missing. Internal on I/O failure.
  static Result<std::unique_ptr<LogStore>> Create(const std::string& root_dir);
  ~LogStore() override;

  Status Append(const std::string& job_uid, const LogEntry& entry) override;
  TimeMicros LastEntryTime(const std::string& job_uid, const std::string& task) override;

  // Entries after `cursor` ("" = from the start), at most `max_entries`, only of
  // `task` if non-empty. A job with no log yet gives an empty page with cursor "".
  // InvalidArgument for a malformed cursor.
  Result<LogPage> Read(const std::string& job_uid, const std::string& cursor,
                       const std::string& task, size_t max_entries);

  // Calls `fn` for every entry of the job's log, oldest first (arrival order),
  // until it returns false. OK without calls when the job has no log yet.
  Status Scan(const std::string& job_uid, const std::function<bool(const LogEntry&)>& fn);

  // The cursor right after `entry`, one that Read returned: a read from it starts
  // with what followed the entry.
  static std::string CursorAfter(const LogEntry& entry);

  // Blocks until the job's log grows past `cursor` or `timeout_ms` passes.
  // Returns true if there is more to read.
  bool WaitForMore(const std::string& job_uid, const std::string& cursor, int timeout_ms);

  // The last `n` entries of `task` (all tasks if empty), oldest first; for failure
  // messages that carry the last log lines.
  std::vector<LogEntry> Tail(const std::string& job_uid, const std::string& task, size_t n);

  // The last `n` entries of `task` (all tasks if empty) that end before `before` (a
  // cursor: an entry's start; "" = the end of the log's whole lines), oldest first,
  // each with its positions: a log read from its tail, and backwards a page at a time,
  // at a cost of what it returns rather than of the log's length. `next_cursor` is just
  // after the newest entry (where a follow goes on); `previous_cursor` is the oldest
  // entry's start. InvalidArgument for a malformed cursor.
  Result<LogPage> ReadBefore(const std::string& job_uid, const std::string& before,
                             const std::string& task, size_t n);

  // Removes the job's log. OK if there is none.
  Status Delete(const std::string& job_uid);

 private:
  class Impl;
  explicit LogStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ty::logs
