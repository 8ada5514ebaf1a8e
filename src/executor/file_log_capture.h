// Takes a replica's output from files it appends to (<prefix>.out and <prefix>.err)
// into the LogSink, line by line, crash-safely: the local process executor's replicas
// and the Slurm launcher's (which writes them on the shared filesystem) both log this
// way.
//
// Write-ahead: before a batch of lines is appended, its byte ranges and first time go
// to <prefix>.cursor (lines get times t0, t0+1us, ...), so after a daemon crash the
// batch is recomputed identically and the lines whose time is not after
// LogSink::LastEntryTime() are skipped: no line is lost or taken twice. Within one
// batch stdout lines come before stderr lines: two files carry no relative order.
//
// The files are written by replicas, which are hostile: a batch takes at most
// kMaxBatchBytes of each file, and a line longer than that is cut into pieces, so no
// output can make the daemon read a whole file into memory.
//
// Not thread-safe: one capture per watcher thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/time.h"
#include "logs/log_store.h"

namespace ty::executor::internal {

class FileLogCapture {
 public:
  static constexpr int64_t kMaxBatchBytes = 1 << 20;

  // `sink` and `clock` are borrowed. `prefix`: the files' path without suffix.
  FileLogCapture(logs::LogSink* sink, const Clock* clock, std::string prefix, std::string job_uid,
                 std::string task);

  // Re-appends what the sink lacks of the batch in .cursor (a daemon may have died
  // mid-batch) and moves past it; does nothing without a cursor file.
  void Resume();
  // Takes the complete lines written since the last call (everything, a last line
  // without "\n" included, once `writer_gone`), cursor first. Returns whether it took
  // anything; call again while it does when the writer is gone (batches are bounded).
  bool CaptureNew(bool writer_gone);
  // Everything there is, to the end of both files (the writer is gone). False when the
  // sink could not take a line (a full disk): what it lacks is taken by the next call,
  // and the replica's end must not be reported before one returns true.
  bool CaptureAll();
  // CaptureAll until it returns true, waiting 0.1 s doubling to 2 s between tries;
  // stops early (false) once `give_up` says so (the daemon stopping).
  bool CaptureAllWaiting(const std::function<bool()>& give_up);

 private:
  struct Batch {
    int64_t out_from = 0, out_to = 0, err_from = 0, err_to = 0;
    TimeMicros t0 = 0;
  };
  // Appends the batch's lines after `skip_until` and moves past it; false (and the
  // batch kept in unfinished_) when the sink could not take one.
  bool Append(const Batch& b, TimeMicros skip_until);
  std::string PathOf(const char* suffix) const { return prefix_ + suffix; }

  logs::LogSink* sink_;
  const Clock* clock_;
  std::string prefix_, job_uid_, task_;
  int64_t out_off_ = 0, err_off_ = 0;  // Bytes of .out/.err already taken.
  TimeMicros last_ = 0;                // Time of the last line taken.
  struct Unfinished {
    Batch batch;
    TimeMicros stored = 0;  // Its lines up to this time are in the sink.
  };
  std::optional<Unfinished> unfinished_;  // A batch the sink could not take whole.
};

}  // namespace ty::executor::internal
