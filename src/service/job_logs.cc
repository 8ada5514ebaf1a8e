#include "service/job_logs.h"

#include <map>
#include <optional>
#include <set>

namespace ty::service {
namespace {

constexpr char kPartSeparator = '~';

// One log's read state while merging.
struct Reader {
  const LogSource* source = nullptr;
  std::string cursor;
  std::optional<logs::LogEntry> head;  // Its next line, if it has one now.
};

// "<study>~<trial>=<pos>~..." -> the study's cursor and each trial's.
Result<std::map<int64_t, std::string>> ParseStudyCursor(const std::string& cursor) {
  std::map<int64_t, std::string> out;
  size_t start = 0;
  for (bool first = true;; first = false) {
    size_t end = cursor.find(kPartSeparator, start);
    std::string part = cursor.substr(start, end == std::string::npos ? end : end - start);
    if (first) {
      out[0] = part;
    } else {
      size_t eq = part.find('=');
      int64_t trial = 0;
      try {
        trial = eq == std::string::npos ? 0 : std::stoll(part.substr(0, eq));
      } catch (const std::exception&) {
        trial = 0;
      }
      if (trial <= 0) return InvalidArgument("malformed log cursor '" + cursor + "'");
      out[trial] = part.substr(eq + 1);
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::string StudyCursor(const std::vector<Reader>& readers) {
  std::string out = readers.front().cursor;
  for (size_t i = 1; i < readers.size(); ++i) {
    if (readers[i].cursor.empty()) continue;
    out += kPartSeparator + std::to_string(readers[i].source->trial_id) + "=" + readers[i].cursor;
  }
  return out;
}

Status Advance(logs::LogStore* logs, const std::string& task, Reader* r) {
  ASSIGN_OR_RETURN(logs::LogPage page, logs->Read(r->source->uid, r->cursor, task, 1));
  r->head.reset();
  if (!page.entries.empty()) {
    r->head = std::move(page.entries.front());
  } else {
    r->cursor = page.next_cursor;  // Past lines of other tasks.
  }
  return Status::Ok();
}

// A store page as the job's lines, each with the cursor just after it.
JobLogPage LinesOf(logs::LogPage page, const LogSource& source) {
  JobLogPage out;
  out.next_cursor = std::move(page.next_cursor);
  out.previous_cursor = std::move(page.previous_cursor);
  for (size_t i = 0; i < page.entries.size(); ++i) {
    std::string after = logs::LogStore::CursorAfter(page.entries[i]);
    out.lines.push_back({std::move(page.entries[i]), source.trial_id, std::move(after)});
  }
  return out;
}

Result<JobLogPage> ReadOne(logs::LogStore* logs, const LogSource& source, const std::string& cursor,
                           const std::string& task, size_t max_entries) {
  ASSIGN_OR_RETURN(logs::LogPage page, logs->Read(source.uid, cursor, task, max_entries));
  return LinesOf(std::move(page), source);
}

}  // namespace

Result<JobLogPage> ReadJobLogTail(logs::LogStore* logs, const LogSource& source,
                                  const std::string& before, const std::string& task,
                                  size_t max_entries) {
  ASSIGN_OR_RETURN(logs::LogPage page, logs->ReadBefore(source.uid, before, task, max_entries));
  return LinesOf(std::move(page), source);
}

Result<JobLogPage> ReadJobLogs(logs::LogStore* logs, const std::vector<LogSource>& sources,
                               const std::string& cursor, const std::string& task,
                               size_t max_entries) {
  if (sources.size() == 1) return ReadOne(logs, sources.front(), cursor, task, max_entries);
  ASSIGN_OR_RETURN(auto cursors, ParseStudyCursor(cursor));
  std::vector<Reader> readers;
  for (const LogSource& s : sources) {
    auto it = cursors.find(s.trial_id);
    readers.push_back({&s, it == cursors.end() ? "" : it->second, std::nullopt});
    RETURN_IF_ERROR(Advance(logs, task, &readers.back()));
  }
  JobLogPage page;
  while (max_entries == 0 || page.lines.size() < max_entries) {
    Reader* next = nullptr;
    for (Reader& r : readers) {
      if (r.head && (next == nullptr || r.head->time < next->head->time)) next = &r;
    }
    if (next == nullptr) break;
    logs::LogEntry entry = std::move(*next->head);
    next->cursor = logs::LogStore::CursorAfter(entry);
    RETURN_IF_ERROR(Advance(logs, task, next));
    page.lines.push_back({std::move(entry), next->source->trial_id, StudyCursor(readers)});
  }
  page.next_cursor = StudyCursor(readers);
  return page;
}

namespace {

void WriteMarkedLine(logs::LogStore* logs, TimeMicros now, const std::string& uid,
                     const std::string& message, const std::string& severity, int64_t mark) {
  logs::LogEntry entry;
  entry.source_time = mark;
  entry.time = now;
  entry.task = "service";
  entry.stream = logs::LogStream::kService;
  entry.severity = severity;
  entry.message = message;
  // A service line the disk has no room for is not kept for later: the job's record and
  // its events (in the store) tell the same story; the replicas' own lines are retried.
  logs->Append(uid, entry).IgnoreError();
}

}  // namespace

void WriteServiceLine(logs::LogStore* logs, TimeMicros now, const std::string& uid,
                      const std::string& message, const std::string& severity) {
  WriteMarkedLine(logs, now, uid, message, severity, /*mark=*/0);
}

void WriteOutbox(logs::LogStore* logs, TimeMicros now, const std::string& uid,
                 const model::ServiceOutbox& outbox) {
  for (const model::OutboxLine& l : outbox.lines) {
    WriteMarkedLine(logs, now, uid, l.message, l.severity, l.seq);
  }
}

size_t WriteMissingOutboxLines(logs::LogStore* logs, TimeMicros now, const std::string& uid,
                               const model::ServiceOutbox& outbox) {
  if (outbox.lines.empty()) return 0;
  const int64_t first = outbox.lines.front().seq;
  // The outbox's lines are written in order just after their commit, so those the log
  // holds are among its newest service lines: read back from the end (more each time
  // unmarked lines written since fill the read) until a line marked before them, or the
  // log's start. A daemon with many long logs starts without reading them whole.
  std::set<int64_t> written;  // Marks seen; an unmarked line reads back as 0, no line's.
  for (size_t n = 2 * outbox.lines.size() + 16;; n *= 2) {
    const std::vector<logs::LogEntry> newest = logs->Tail(uid, "service", n);
    bool reached = newest.size() < n;
    for (const logs::LogEntry& e : newest) {
      written.insert(e.source_time);
      reached = reached || (e.source_time > 0 && e.source_time < first);
    }
    if (reached) break;
  }
  size_t wrote = 0;
  for (const model::OutboxLine& l : outbox.lines) {
    if (written.count(l.seq) > 0) continue;
    WriteMarkedLine(logs, now, uid, l.message, l.severity, l.seq);
    ++wrote;
  }
  return wrote;
}

}  // namespace ty::service
