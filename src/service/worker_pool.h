// A fixed set of threads running blocking tasks (executor Launch/Stop/Cleanup) so
// the reconcile loop never blocks on a backend. Tasks post their results back to
// the loop themselves. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ty::service {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  // Runs queued tasks for up to 5 s more, drops the rest, waits for running ones.
  ~WorkerPool();

  void Submit(std::function<void()> task);

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;               // Guarded by mu_.
  bool stopping_ = false;                                 // Guarded by mu_.
  std::chrono::steady_clock::time_point drain_deadline_;  // Guarded by mu_.
  std::vector<std::thread> threads_;
};

}  // namespace ty::service
