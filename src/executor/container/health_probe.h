// HealthProbe: runs a probe (the engine's /_ping) every interval on a thread of its
// own and keeps the last answer, so /healthz and /metrics read it without waiting on
// the engine, and an outage is logged once when it starts and once when it ends.
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "common/time.h"
#include "executor/executor.h"

namespace ty::executor {

class HealthProbe {
 public:
  HealthProbe(std::function<Status()> probe, std::chrono::milliseconds interval,
              const Clock* clock);
  ~HealthProbe();  // Waits for a probe in flight.
  HealthProbe(const HealthProbe&) = delete;
  HealthProbe& operator=(const HealthProbe&) = delete;

  BackendHealth Get() const;

 private:
  void Run();
  void Record(const Status& s);

  const std::function<Status()> probe_;
  const std::chrono::milliseconds interval_;
  const Clock* clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  BackendHealth health_;
  std::thread thread_;  // Last: starts once the members above exist.
};

}  // namespace ty::executor
