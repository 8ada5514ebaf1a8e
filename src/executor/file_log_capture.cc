#include "executor/file_log_capture.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "common/files.h"

namespace ty::executor::internal {
namespace {

using json = nlohmann::json;

// Lines of `data`; a final unterminated piece counts as a line.
std::vector<std::string> SplitOutputLines(const std::string& data) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string::npos) nl = data.size();
    lines.push_back(data.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

std::string ReadByteRange(const std::string& path, int64_t from, int64_t to) {
  std::string out;
  if (to <= from) return out;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  out.resize(static_cast<size_t>(to - from));
  ssize_t n = pread(fd, out.data(), out.size(), from);
  close(fd);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

int64_t SizeOf(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

// End of the part of [from, size) one batch takes: at most kMaxBatchBytes, up to its
// last newline; all of it when the writer is gone or when the piece holds no newline
// at all (a line longer than a batch is cut).
int64_t BatchEnd(const std::string& path, int64_t from, bool writer_gone) {
  int64_t size = SizeOf(path);
  if (size <= from) return from;
  int64_t to = std::min(size, from + FileLogCapture::kMaxBatchBytes);
  bool full = to - from == FileLogCapture::kMaxBatchBytes;
  if (writer_gone && to == size) return to;
  std::string data = ReadByteRange(path, from, to);
  size_t nl = data.rfind('\n');
  if (nl == std::string::npos) return full || writer_gone ? to : from;
  return from + static_cast<int64_t>(nl) + 1;
}

}  // namespace

FileLogCapture::FileLogCapture(logs::LogSink* sink, const Clock* clock, std::string prefix,
                               std::string job_uid, std::string task)
    : sink_(sink),
      clock_(clock),
      prefix_(std::move(prefix)),
      job_uid_(std::move(job_uid)),
      task_(std::move(task)) {}

bool FileLogCapture::Append(const Batch& b, TimeMicros skip_until) {
  TimeMicros t = b.t0;
  TimeMicros stored = skip_until;  // The batch's last line the sink has.
  Status failed = Status::Ok();
  auto emit = [&](const char* suffix, int64_t from, int64_t to, logs::LogStream stream) {
    for (std::string& line : SplitOutputLines(ReadByteRange(PathOf(suffix), from, to))) {
      TimeMicros time = t++;
      if (time <= skip_until || !failed.ok()) continue;
      logs::LogEntry entry;
      entry.time = time;
      entry.task = task_;
      entry.stream = stream;
      entry.message = std::move(line);
      failed = sink_->Append(job_uid_, entry);
      if (failed.ok()) stored = time;
    }
  };
  emit(".out", b.out_from, b.out_to, logs::LogStream::kStdout);
  emit(".err", b.err_from, b.err_to, logs::LogStream::kStderr);
  if (!failed.ok()) {
    // The sink could not take a line (a full disk): the batch is appended again, from
    // that line on, before anything newer.
    unfinished_ = Unfinished{b, stored};
    return false;
  }
  unfinished_.reset();
  out_off_ = b.out_to;
  err_off_ = b.err_to;
  last_ = std::max(last_, t - 1);
  return true;
}

void FileLogCapture::Resume() {
  Result<std::string> text = ty::ReadFile(PathOf(".cursor"));
  if (!text.ok()) return;  // Nothing was captured yet.
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object()) return;
  Batch b;
  try {
    b.out_from = j.value("out_from", int64_t{0});
    b.out_to = j.value("out_to", int64_t{0});
    b.err_from = j.value("err_from", int64_t{0});
    b.err_to = j.value("err_to", int64_t{0});
    b.t0 = j.value("t0", TimeMicros{0});
  } catch (const json::exception&) {
    return;
  }
  // A cursor is ours, but the bounds are checked anyway: never a read of more than a
  // batch because a file was tampered with.
  if (b.out_to - b.out_from > kMaxBatchBytes || b.err_to - b.err_from > kMaxBatchBytes ||
      b.out_from < 0 || b.err_from < 0) {
    return;
  }
  Append(b, sink_->LastEntryTime(job_uid_, task_));
}

bool FileLogCapture::CaptureNew(bool writer_gone) {
  if (unfinished_) {
    const Unfinished u = *unfinished_;
    if (!Append(u.batch, u.stored)) return false;
  }
  Batch b;
  b.out_from = out_off_;
  b.err_from = err_off_;
  b.out_to = BatchEnd(PathOf(".out"), out_off_, writer_gone);
  b.err_to = BatchEnd(PathOf(".err"), err_off_, writer_gone);
  if (b.out_to <= b.out_from && b.err_to <= b.err_from) return false;
  b.t0 = std::max(clock_->Now(), last_ + 1);
  json j = {{"out_from", b.out_from},
            {"out_to", b.out_to},
            {"err_from", b.err_from},
            {"err_to", b.err_to},
            {"t0", b.t0}};
  if (!WriteFileAtomically(PathOf(".cursor"), j.dump()).ok()) {
    spdlog::warn("executor: cannot write {}", PathOf(".cursor"));
  }
  return Append(b, /*skip_until=*/0);
}

bool FileLogCapture::CaptureAll() {
  while (CaptureNew(/*writer_gone=*/true)) {
  }
  return !unfinished_.has_value();
}

bool FileLogCapture::CaptureAllWaiting(const std::function<bool()>& give_up) {
  std::chrono::milliseconds wait(100);
  while (!CaptureAll()) {
    if (give_up()) return false;
    std::this_thread::sleep_for(wait);
    wait = std::min(wait * 2, std::chrono::milliseconds(2000));
  }
  return true;
}

}  // namespace ty::executor::internal
