// EventRecorder: collects executor events for tests and lets them wait for one.
// Optionally snapshots the log sink when a kReplicaExited arrives, which is how
// tests check "logs complete before the exit event". Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "executor/executor.h"
#include "executor/recording_log_sink.h"

namespace ty::testing {

class EventRecorder {
 public:
  explicit EventRecorder(RecordingLogSink* sink = nullptr) : sink_(sink) {}

  executor::EventCallback Callback() {
    return [this](const executor::ExecutorEvent& e) {
      std::vector<std::string> snapshot;
      if (sink_ != nullptr && e.kind == executor::ExecutorEventKind::kReplicaExited) {
        snapshot = sink_->Messages(e.job_uid);
      }
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(e);
      snapshots_.push_back(std::move(snapshot));
      cv_.notify_all();
    };
  }

  // Waits until `count` events of `kind` for `job_uid` arrived; returns them all.
  std::vector<executor::ExecutorEvent> WaitFor(const std::string& job_uid,
                                               executor::ExecutorEventKind kind, size_t count,
                                               int timeout_ms = 30000) {
    std::unique_lock<std::mutex> lock(mu_);
    std::vector<executor::ExecutorEvent> found;
    cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
      found.clear();
      for (const auto& e : events_) {
        if (e.job_uid == job_uid && e.kind == kind) found.push_back(e);
      }
      return found.size() >= count;
    });
    return found;
  }

  // Waits for the attempt's kAttemptStarted or kLaunchFailed.
  std::optional<executor::ExecutorEvent> WaitForLaunch(const std::string& job_uid,
                                                       int timeout_ms = 60000) {
    std::unique_lock<std::mutex> lock(mu_);
    std::optional<executor::ExecutorEvent> found;
    cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] {
      for (const auto& e : events_) {
        if (e.job_uid == job_uid && e.kind != executor::ExecutorEventKind::kReplicaExited &&
            e.kind != executor::ExecutorEventKind::kLaunchWaiting &&
            e.kind != executor::ExecutorEventKind::kAttemptPreempted) {
          found = e;
          return true;
        }
      }
      return false;
    });
    return found;
  }

  std::vector<executor::ExecutorEvent> Events(const std::string& job_uid) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<executor::ExecutorEvent> out;
    for (const auto& e : events_) {
      if (e.job_uid == job_uid) out.push_back(e);
    }
    return out;
  }

  // The log messages of the job as they were when its i-th event arrived.
  std::vector<std::string> SnapshotAt(const std::string& job_uid, size_t i) const {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (size_t k = 0; k < events_.size(); ++k) {
      if (events_[k].job_uid != job_uid) continue;
      if (n++ == i) return snapshots_[k];
    }
    return {};
  }

 private:
  RecordingLogSink* sink_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<executor::ExecutorEvent> events_;
  std::vector<std::vector<std::string>> snapshots_;
};

}  // namespace ty::testing
