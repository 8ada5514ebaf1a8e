// LogStore: one append-only NDJSON file per job (layout and line format in
// log_store.h and log_codec.h).
//
// Concurrency: one mutex (`mu_`) guards the open-fd cache and the per-job state
// (newest time per task, change generation). Appends write while holding it, so
// lines from concurrent appenders never interleave and readers' generation checks
// cannot miss a write. Reads, tails and scans open their own read-only fd and run
// without the lock: they only ever consume complete lines ('\n'-terminated), so a
// line being written concurrently is simply not seen yet.
#include "logs/log_store.h"

#include <errno.h>
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "common/unique_fd.h"
#include "logs/log_codec.h"

namespace ty::logs {

namespace {

constexpr size_t kMaxOpenFiles = 64;       // Append fds kept open (LRU).
constexpr size_t kChunkBytes = 64 * 1024;  // Read granularity.
constexpr auto kPollInterval = std::chrono::milliseconds(200);

// Job uids become file names: refuse anything that could escape the root.
bool ValidUid(const std::string& uid) {
  if (uid.empty() || uid.size() > 200 || uid[0] == '.') return false;
  return std::all_of(uid.begin(), uid.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

// Cursor = decimal byte offset; "" is the start of the log.
std::optional<uint64_t> ParseCursor(const std::string& cursor) {
  if (cursor.empty()) return 0;
  if (cursor.size() > 19) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), v);
  if (ec != std::errc() || end != cursor.data() + cursor.size()) return std::nullopt;
  return v;
}

std::string ErrnoText() { return std::strerror(errno); }

// Reads exactly `n` bytes at `offset` unless the file is shorter; returns the bytes read.
Result<std::string> ReadAt(int fd, uint64_t offset, size_t n) {
  std::string buf(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, buf.data() + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Internal("read log: " + ErrnoText());
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  buf.resize(got);
  return buf;
}

// Calls `fn(line, end_offset)` for each complete line in [from, to), in order, where
// `end_offset` is the offset just past the line's '\n'. Stops when `fn` returns false.
// A trailing line without '\n' is not passed.
Status ForEachLine(int fd, uint64_t from, uint64_t to,
                   const std::function<bool(std::string_view, uint64_t)>& fn) {
  std::string buf;
  uint64_t buf_start = from;  // File offset of buf[0].
  uint64_t read_pos = from;
  size_t line_start = 0;
  while (true) {
    size_t nl = buf.find('\n', line_start);
    if (nl == std::string::npos) {
      if (read_pos >= to) return Status::Ok();
      buf.erase(0, line_start);
      buf_start += line_start;
      line_start = 0;
      ASSIGN_OR_RETURN(std::string chunk,
                       ReadAt(fd, read_pos,
                              static_cast<size_t>(std::min<uint64_t>(kChunkBytes, to - read_pos))));
      if (chunk.empty()) return Status::Ok();  // Truncated under us.
      read_pos += chunk.size();
      buf += chunk;
      continue;
    }
    std::string_view line(buf.data() + line_start, nl - line_start);
    line_start = nl + 1;
    if (!fn(line, buf_start + nl + 1)) return Status::Ok();
  }
}

// The time of the file's last complete line (0 when there is none, or when that line
// is longer than the tail read here: then the clock alone orders the next entry).
TimeMicros LastLineTime(int fd) {
  constexpr size_t kTailBytes = 64 * 1024;
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size <= 0) return 0;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  const uint64_t from = size > kTailBytes ? size - kTailBytes : 0;
  Result<std::string> tail = ReadAt(fd, from, static_cast<size_t>(size - from));
  if (!tail.ok()) return 0;
  std::string_view text = *tail;
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  const size_t start = text.rfind('\n');
  if (start == std::string_view::npos && from > 0) return 0;
  std::optional<LogEntry> last =
      internal::DecodeLine(start == std::string_view::npos ? text : text.substr(start + 1));
  return last ? last->time : 0;
}

// The size of the file's whole lines: just past its last '\n' (0 when it has none),
// read back from the end a block at a time.
off_t WholeLinesEnd(int fd, off_t size) {
  constexpr size_t kBlock = 64 * 1024;
  off_t end = size;
  while (end > 0) {
    const off_t from = end > static_cast<off_t>(kBlock) ? end - static_cast<off_t>(kBlock) : 0;
    Result<std::string> block =
        ReadAt(fd, static_cast<uint64_t>(from), static_cast<size_t>(end - from));
    if (!block.ok()) return size;  // Unreadable: leave it as it is.
    const size_t nl = block->rfind('\n');
    if (nl != std::string::npos) return from + static_cast<off_t>(nl) + 1;
    end = from;
  }
  return 0;
}

bool TaskMatches(const std::string& filter, const LogEntry& e) {
  return filter.empty() || e.task == filter;
}

}  // namespace

class LogStore::Impl {
 public:
  explicit Impl(std::string root) : root_(std::move(root)) {}
  ~Impl() {
    for (auto& [uid, job] : jobs_) {
      if (job.fd >= 0) close(job.fd);
    }
  }

  Status Append(const std::string& uid, const LogEntry& entry);
  TimeMicros LastEntryTime(const std::string& uid, const std::string& task);
  // Decodes the complete entries from `offset` to the current end, with their
  // positions, into `fn(entry, end_offset)` until it returns false; a malformed
  // line comes as nullptr (only the offset moves). Returns the log's size, or
  // kNoLog when the job has none yet; an offset past the end reads nothing.
  static constexpr uint64_t kNoLog = UINT64_MAX;
  Result<uint64_t> Walk(const std::string& uid, uint64_t offset,
                        const std::function<bool(LogEntry*, uint64_t)>& fn);
  Result<LogPage> Read(const std::string& uid, const std::string& cursor, const std::string& task,
                       size_t max_entries);
  bool WaitForMore(const std::string& uid, const std::string& cursor, int timeout_ms);
  std::vector<LogEntry> Tail(const std::string& uid, const std::string& task, size_t n);
  Result<LogPage> ReadBefore(const std::string& uid, const std::string& before,
                             const std::string& task, size_t n);
  Status Delete(const std::string& uid);

 private:
  struct JobLog {
    int fd = -1;                               // Append fd; -1 when not in the cache.
    std::list<std::string>::iterator lru_pos;  // Valid while fd >= 0.
    std::map<std::string, TimeMicros> newest;  // Per task, max source time seen.
    TimeMicros last_time = 0;                  // The newest entry's `time`.
    bool last_time_read = false;               // `last_time` includes the file's content.
    bool scanned = false;                      // `newest` includes the file's content.
    uint64_t generation = 0;                   // Bumped by every append.
    uint64_t failed_appends = 0;               // Since the last append that landed.
  };

  std::string PathOf(const std::string& uid) const { return root_ + "/" + uid + ".ndjson"; }
  // Up to `n` whole lines of `task` that end at or before byte `end` of the job's log,
  // newest first, with their positions.
  std::vector<LogEntry> Before(const std::string& uid, const std::string& task, size_t n,
                               uint64_t end);
  // Returns the job's append fd, opening it (and evicting the least recently used
  // one) if needed, or -1 with a message on stderr. REQUIRES: mu_ held.
  int AppendFd(const std::string& uid, JobLog& job);
  void CloseFd(JobLog& job);                            // REQUIRES: mu_ held.
  uint64_t GenerationOf(const std::string& uid) const;  // REQUIRES: mu_ held.
  // Newest time per task in the file's complete lines.
  std::map<std::string, TimeMicros> ScanNewest(const std::string& uid);

  const std::string root_;
  std::mutex mu_;
  std::condition_variable changed_;               // Notified on every append/delete.
  std::unordered_map<std::string, JobLog> jobs_;  // GUARDED_BY(mu_)
  std::list<std::string> lru_;                    // GUARDED_BY(mu_); uids with an open fd,
                                                  // most recently used first.
  uint64_t deletions_ = 0;                        // GUARDED_BY(mu_)
};

int LogStore::Impl::AppendFd(const std::string& uid, JobLog& job) {
  if (job.fd >= 0) {
    lru_.splice(lru_.begin(), lru_, job.lru_pos);
    return job.fd;
  }
  if (lru_.size() >= kMaxOpenFiles) {
    auto victim = jobs_.find(lru_.back());
    if (victim != jobs_.end()) CloseFd(victim->second);
  }
  const std::string path = PathOf(uid);
  // O_RDWR, not O_WRONLY: the repair check below reads the last byte.
  int fd = open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);  // The daemon's.
  if (fd < 0) {
    spdlog::warn("logs: cannot open {}: {}", path, ErrnoText());
    return -1;
  }
  // A crash mid-write can leave a line without its '\n': cut back to the last whole
  // line (a cut needs no free space, a full disk included), so the partial record
  // never swallows the next good one.
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') {
      if (ftruncate(fd, WholeLinesEnd(fd, st.st_size)) != 0) {
        spdlog::warn("logs: cannot repair {}: {}", path, ErrnoText());
      }
    }
  }
  lru_.push_front(uid);
  job.fd = fd;
  job.lru_pos = lru_.begin();
  return fd;
}

void LogStore::Impl::CloseFd(JobLog& job) {
  if (job.fd < 0) return;
  close(job.fd);
  job.fd = -1;
  lru_.erase(job.lru_pos);
}

uint64_t LogStore::Impl::GenerationOf(const std::string& uid) const {
  auto it = jobs_.find(uid);
  return it == jobs_.end() ? 0 : it->second.generation;
}

Status LogStore::Impl::Append(const std::string& uid, const LogEntry& entry) {
  if (!ValidUid(uid)) {
    spdlog::warn("logs: refusing log entry for invalid job uid '{}'", uid);
    return InvalidArgument("invalid job uid");
  }
  LogEntry stored = internal::Normalize(entry);
  if (stored.source_time == 0) stored.source_time = stored.time;
  std::lock_guard<std::mutex> lock(mu_);
  JobLog& job = jobs_[uid];
  int fd = AppendFd(uid, job);
  if (fd < 0) return Unavailable("cannot open the log of job " + uid);
  if (!job.last_time_read) {
    job.last_time = std::max(job.last_time, LastLineTime(fd));
    job.last_time_read = true;
  }
  // Sources stamp with different precision and are read at different moments (a
  // replica's lines a poll after they were written, the service's at once), so an
  // entry may arrive stamped before the previous one: it then takes the next
  // microsecond, and the log never goes back in time. Its source time stays.
  stored.time = std::max(stored.time, job.last_time + 1);
  const TimeMicros previous_time = job.last_time;
  job.last_time = stored.time;
  const std::string line = internal::EncodeLine(stored);
  // One write() per line: with O_APPEND a regular file gets it whole, so a reader
  // (even in another process) never sees two lines interleaved.
  const off_t before = lseek(fd, 0, SEEK_END);
  size_t done = 0;
  while (done < line.size()) {
    ssize_t w = write(fd, line.data() + done, line.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const std::string why = ErrnoText();
      // No partial record stays (a cut needs no space); the caller keeps its place
      // and appends the entry again later. Said once per failing stretch, not per line.
      if (before >= 0 && ftruncate(fd, before) != 0) CloseFd(job);
      job.last_time = previous_time;
      if (job.failed_appends++ == 0) {
        spdlog::error("logs: cannot append to {}: {} (its lines are appended once there is room)",
                      PathOf(uid), why);
      }
      return ResourceExhausted("cannot append to the log of job " + uid + ": " + why);
    }
    done += static_cast<size_t>(w);
  }
  if (job.failed_appends > 0) {
    spdlog::info("logs: {} appends again, after {} that failed", PathOf(uid), job.failed_appends);
    job.failed_appends = 0;
  }
  TimeMicros& newest = job.newest[stored.task];
  newest = std::max(newest, stored.source_time);
  job.generation++;
  changed_.notify_all();
  return Status::Ok();
}

std::map<std::string, TimeMicros> LogStore::Impl::ScanNewest(const std::string& uid) {
  std::map<std::string, TimeMicros> newest;
  UniqueFd f(open(PathOf(uid).c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (f.get() < 0 || fstat(f.get(), &st) != 0) return newest;
  Status s = ForEachLine(f.get(), 0, static_cast<uint64_t>(st.st_size),
                         [&](std::string_view line, uint64_t) {
                           std::optional<LogEntry> e = internal::DecodeLine(line);
                           if (e) {
                             TimeMicros& t = newest[e->task];
                             t = std::max(t, e->source_time != 0 ? e->source_time : e->time);
                           }
                           return true;
                         });
  if (!s.ok()) spdlog::warn("logs: scan {}: {}", uid, s.ToString());
  return newest;
}

TimeMicros LogStore::Impl::LastEntryTime(const std::string& uid, const std::string& task) {
  if (!ValidUid(uid)) return 0;
  while (true) {
    uint64_t deletions;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = jobs_.find(uid);
      if (it != jobs_.end() && it->second.scanned) {
        auto t = it->second.newest.find(task);
        return t == it->second.newest.end() ? 0 : t->second;
      }
      deletions = deletions_;
    }
    // Scan once per job per process (after a restart), without blocking appends.
    // Appends meanwhile are recorded in `newest` too, so taking the max of both
    // loses nothing, whichever side saw a line.
    std::map<std::string, TimeMicros> scanned = ScanNewest(uid);
    std::lock_guard<std::mutex> lock(mu_);
    if (deletions != deletions_) continue;  // The file we scanned may be gone: rescan.
    JobLog& job = jobs_[uid];
    if (!job.scanned) {
      for (const auto& [t, time] : scanned) job.newest[t] = std::max(job.newest[t], time);
      job.scanned = true;
    }
    auto t = job.newest.find(task);
    return t == job.newest.end() ? 0 : t->second;
  }
}

Result<uint64_t> LogStore::Impl::Walk(const std::string& uid, uint64_t offset,
                                      const std::function<bool(LogEntry*, uint64_t)>& fn) {
  UniqueFd f(open(PathOf(uid).c_str(), O_RDONLY | O_CLOEXEC));
  if (f.get() < 0) {
    if (errno == ENOENT) return kNoLog;  // No output yet.
    return Internal("open log of job " + uid + ": " + ErrnoText());
  }
  struct stat st {};
  if (fstat(f.get(), &st) != 0) return Internal("stat log of job " + uid + ": " + ErrnoText());
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (offset > size) return size;
  RETURN_IF_ERROR(ForEachLine(f.get(), offset, size, [&](std::string_view line, uint64_t end) {
    std::optional<LogEntry> e = internal::DecodeLine(line);
    if (!e) return fn(nullptr, end);
    e->position = end - line.size() - 1;
    return fn(&*e, end);
  }));
  return size;
}

Result<LogPage> LogStore::Impl::Read(const std::string& uid, const std::string& cursor,
                                     const std::string& task, size_t max_entries) {
  if (!ValidUid(uid)) return InvalidArgument("invalid job uid '" + uid + "'");
  std::optional<uint64_t> offset = ParseCursor(cursor);
  if (!offset) return InvalidArgument("malformed log cursor '" + cursor + "'");
  LogPage page;
  page.next_cursor = cursor;
  // max_entries == 0 means no limit: read every complete line there is now.
  ASSIGN_OR_RETURN(uint64_t size, Walk(uid, *offset, [&](LogEntry* e, uint64_t end) {
                     // Lines of other tasks, and malformed ones, are passed over: the cursor still
                     // moves past them so the next read does not see them again.
                     page.next_cursor = std::to_string(end);
                     if (e != nullptr && TaskMatches(task, *e)) {
                       e->end_position = end;
                       page.entries.push_back(std::move(*e));
                     }
                     return max_entries == 0 || page.entries.size() < max_entries;
                   }));
  if (size != kNoLog && *offset > size) {
    return InvalidArgument("log cursor '" + cursor + "' is past the end");
  }
  return page;
}

bool LogStore::Impl::WaitForMore(const std::string& uid, const std::string& cursor,
                                 int timeout_ms) {
  std::optional<uint64_t> offset = ParseCursor(cursor);
  if (!offset || !ValidUid(uid)) return false;
  const std::string path = PathOf(uid);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 0));
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    // Take the generation before looking at the file: an append after the stat
    // changes it, so the wait below cannot sleep through it.
    const uint64_t seen = GenerationOf(uid);
    lock.unlock();
    struct stat st {};
    bool grown = stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_size) > *offset;
    lock.lock();
    if (grown) return true;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    // Wake on our own appends at once; re-stat at least every kPollInterval in case
    // another process writes the file.
    changed_.wait_until(lock, std::min(deadline, now + kPollInterval),
                        [&] { return GenerationOf(uid) != seen; });
  }
}

std::vector<LogEntry> LogStore::Impl::Before(const std::string& uid, const std::string& task,
                                             size_t n, uint64_t end) {
  std::vector<LogEntry> newest_first;
  if (n == 0 || !ValidUid(uid)) return newest_first;
  UniqueFd f(open(PathOf(uid).c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (f.get() < 0 || fstat(f.get(), &st) != 0) return newest_first;

  // Walk backwards in chunks from `end`. `carry` is the start of a line whose beginning
  // lies in an earlier chunk; before the last '\n' is found, bytes are a partial line
  // still being written and are dropped. `data` starts at file offset `pos`.
  uint64_t pos = std::min(end, static_cast<uint64_t>(st.st_size));
  std::string carry;
  bool seen_newline = false;
  auto take = [&](std::string_view line, uint64_t at) {
    std::optional<LogEntry> e = internal::DecodeLine(line);
    if (!e || !TaskMatches(task, *e)) return;
    e->position = at;
    e->end_position = at + line.size() + 1;
    newest_first.push_back(std::move(*e));
  };
  while (pos > 0 && newest_first.size() < n) {
    size_t k = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, pos));
    pos -= k;
    Result<std::string> chunk = ReadAt(f.get(), pos, k);
    if (!chunk.ok() || chunk->size() != k) break;
    std::string data = std::move(chunk).value() + carry;
    carry.clear();
    size_t line_end = data.size();
    if (!seen_newline) {
      size_t nl = data.rfind('\n');
      if (nl == std::string::npos) continue;  // All partial line.
      seen_newline = true;
      line_end = nl;
    }
    // data[0, line_end) ends just before a '\n'; peel complete lines off its back.
    while (newest_first.size() < n) {
      size_t prev = line_end == 0 ? std::string::npos : data.rfind('\n', line_end - 1);
      if (prev == std::string::npos) {
        if (pos == 0) {
          take(std::string_view(data.data(), line_end), 0);  // The file's first line.
        } else {
          carry = data.substr(0, line_end);
        }
        break;
      }
      take(std::string_view(data.data() + prev + 1, line_end - prev - 1), pos + prev + 1);
      line_end = prev;
    }
  }
  return newest_first;
}

std::vector<LogEntry> LogStore::Impl::Tail(const std::string& uid, const std::string& task,
                                           size_t n) {
  std::vector<LogEntry> newest_first = Before(uid, task, n, UINT64_MAX);
  return std::vector<LogEntry>(newest_first.rbegin(), newest_first.rend());
}

Result<LogPage> LogStore::Impl::ReadBefore(const std::string& uid, const std::string& before,
                                           const std::string& task, size_t n) {
  if (!ValidUid(uid)) return InvalidArgument("invalid job uid '" + uid + "'");
  std::optional<uint64_t> end =
      before.empty() ? std::optional<uint64_t>(UINT64_MAX) : ParseCursor(before);
  if (!end) return InvalidArgument("malformed log cursor '" + before + "'");
  std::vector<LogEntry> newest_first = Before(uid, task, n, *end);
  LogPage page;
  page.entries.assign(std::make_move_iterator(newest_first.rbegin()),
                      std::make_move_iterator(newest_first.rend()));
  if (page.entries.empty()) {
    page.next_cursor = before;
    return page;
  }
  page.next_cursor = CursorAfter(page.entries.back());
  if (page.entries.front().position > 0) {
    page.previous_cursor = std::to_string(page.entries.front().position);
  }
  return page;
}

Status LogStore::Impl::Delete(const std::string& uid) {
  if (!ValidUid(uid)) return InvalidArgument("invalid job uid '" + uid + "'");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(uid);
  if (it != jobs_.end()) {
    CloseFd(it->second);
    jobs_.erase(it);
  }
  deletions_++;
  changed_.notify_all();
  if (unlink(PathOf(uid).c_str()) != 0 && errno != ENOENT) {
    return Internal("delete log of job " + uid + ": " + ErrnoText());
  }
  return Status::Ok();
}

Result<std::unique_ptr<LogStore>> LogStore::Create(const std::string& root_dir) {
  std::error_code ec;
  std::filesystem::create_directories(root_dir, ec);
  if (ec) return Internal("create log directory " + root_dir + ": " + ec.message());
  if (!std::filesystem::is_directory(root_dir, ec)) {
    return Internal("log root " + root_dir + " is not a directory");
  }
  return std::unique_ptr<LogStore>(new LogStore(std::make_unique<Impl>(root_dir)));
}

LogStore::LogStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LogStore::~LogStore() = default;

Status LogStore::Append(const std::string& job_uid, const LogEntry& entry) {
  return impl_->Append(job_uid, entry);
}

TimeMicros LogStore::LastEntryTime(const std::string& job_uid, const std::string& task) {
  return impl_->LastEntryTime(job_uid, task);
}

Result<LogPage> LogStore::Read(const std::string& job_uid, const std::string& cursor,
                               const std::string& task, size_t max_entries) {
  return impl_->Read(job_uid, cursor, task, max_entries);
}

std::string LogStore::CursorAfter(const LogEntry& entry) {
  return std::to_string(entry.end_position);  // Cursors are byte offsets (ParseCursor).
}

bool LogStore::WaitForMore(const std::string& job_uid, const std::string& cursor, int timeout_ms) {
  return impl_->WaitForMore(job_uid, cursor, timeout_ms);
}

std::vector<LogEntry> LogStore::Tail(const std::string& job_uid, const std::string& task,
                                     size_t n) {
  return impl_->Tail(job_uid, task, n);
}

Result<LogPage> LogStore::ReadBefore(const std::string& job_uid, const std::string& before,
                                     const std::string& task, size_t n) {
  return impl_->ReadBefore(job_uid, before, task, n);
}

Status LogStore::Scan(const std::string& job_uid, const std::function<bool(const LogEntry&)>& fn) {
  if (!ValidUid(job_uid)) return InvalidArgument("invalid job uid '" + job_uid + "'");
  Result<uint64_t> walked = impl_->Walk(job_uid, 0, [&](LogEntry* e, uint64_t) {
    return e == nullptr || fn(*e);  // Malformed lines are passed over.
  });
  return walked.status();
}

Status LogStore::Delete(const std::string& job_uid) { return impl_->Delete(job_uid); }

}  // namespace ty::logs
