// RecordingLogSink: an in-memory LogSink for executor tests (the real LogStore is
// tested in tests/logs). Keeps every entry per job in arrival order; thread-safe.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "logs/log_store.h"

namespace ty::testing {

class RecordingLogSink : public logs::LogSink {
 public:
  // While set, every append is refused as the log store's on a full disk.
  std::atomic<bool> full{false};

  Status Append(const std::string& job_uid, const logs::LogEntry& entry) override {
    if (full) return ResourceExhausted("log append: No space left on device");
    std::lock_guard<std::mutex> lock(mu_);
    entries_[job_uid].push_back(entry);
    cv_.notify_all();
    return Status::Ok();
  }

  TimeMicros LastEntryTime(const std::string& job_uid, const std::string& task) override {
    std::lock_guard<std::mutex> lock(mu_);
    TimeMicros last = 0;
    for (const auto& e : entries_[job_uid]) {
      // As LogStore answers (log_store.h): the source's own order when it has one.
      if (e.task == task) last = std::max(last, e.source_time != 0 ? e.source_time : e.time);
    }
    return last;
  }

  std::vector<logs::LogEntry> Entries(const std::string& job_uid,
                                      const std::string& task = "") const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<logs::LogEntry> out;
    auto it = entries_.find(job_uid);
    if (it == entries_.end()) return out;
    for (const auto& e : it->second) {
      if (task.empty() || e.task == task) out.push_back(e);
    }
    return out;
  }

  std::vector<std::string> Messages(const std::string& job_uid,
                                    const std::string& task = "") const {
    std::vector<std::string> out;
    for (const auto& e : Entries(job_uid, task)) out.push_back(e.message);
    return out;
  }

  // True once some entry of the job has `message`.
  bool WaitForMessage(const std::string& job_uid, const std::string& message, int timeout_ms) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
      for (const auto& e : entries_[job_uid]) {
        if (e.message == message) return true;
      }
      return false;
    });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<logs::LogEntry>> entries_;
};

}  // namespace ty::testing
