// A job's log as the daemon's own logs endpoints serve it (`GET <job>/logs`, follow
// streams): one job's log, or for a tuning job its own lines and every trial's,
// merged, each line naming its trial. Every line carries the cursor just after it,
// so a client that loses the connection resumes exactly there.
//
// A study's cursor holds one position per log: "<study>~<trial id>=<pos>~...",
// listing the trials whose log was read. It grows with the trials (about 12 bytes
// each), the price of resuming exactly across logs that grow independently: a cursor
// made of one timestamp would lose a trial's line that arrives after a later-stamped
// line of another trial was served. Lines are merged by timestamp among what each log
// holds when read; a line that arrives late is served next, never dropped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "logs/log_store.h"
#include "model/outbox.h"

namespace ty::service {

struct LogSource {
  std::string uid;       // The job whose log it is.
  int64_t trial_id = 0;  // A study's trial; 0 for the job's own log.
};

struct JobLogLine {
  logs::LogEntry entry;
  int64_t trial_id = 0;
  std::string cursor;  // Resumes right after this line.
};

struct JobLogPage {
  std::vector<JobLogLine> lines;
  std::string next_cursor;  // Resumes after the page; "" when the job has no log yet.
  // ReadJobLogTail: where the page before this one ends; "" at the log's start.
  std::string previous_cursor;
};

// `sources` starts with the job's own log. InvalidArgument for a malformed cursor.
Result<JobLogPage> ReadJobLogs(logs::LogStore* logs, const std::vector<LogSource>& sources,
                               const std::string& cursor, const std::string& task,
                               size_t max_entries);

// The last `max_entries` lines of one job's own log that end before `before` (""= its
// end), oldest first: the tail of a log of any length, paged backwards
// (LogStore::ReadBefore). A tuning job's merged log is read forward only.
Result<JobLogPage> ReadJobLogTail(logs::LogStore* logs, const LogSource& source,
                                  const std::string& before, const std::string& task,
                                  size_t max_entries);

// A line of the service's own in a job's log (task "service", unmarked): what a
// controller says of a job outside its record's outbox. Thread-safe.
void WriteServiceLine(logs::LogStore* logs, TimeMicros now, const std::string& uid,
                      const std::string& message, const std::string& severity);

// A committed record's outbox (model/outbox.h): its lines, each marked with its number
// (the entry's source_time), so that a restart can tell which ones the log holds.
void WriteOutbox(logs::LogStore* logs, TimeMicros now, const std::string& uid,
                 const model::ServiceOutbox& outbox);
// At start-up: writes the lines of the stored outbox that the job's log lacks. Returns
// how many it wrote.
size_t WriteMissingOutboxLines(logs::LogStore* logs, TimeMicros now, const std::string& uid,
                               const model::ServiceOutbox& outbox);

}  // namespace ty::service
