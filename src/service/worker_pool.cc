#include "service/worker_pool.h"

#include <spdlog/spdlog.h>

#include "common/status.h"

namespace ty::service {

WorkerPool::WorkerPool(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    drain_deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      // On shutdown queued work (mostly cleanups of finished attempts) still runs
      // for a short while, so a daemon that stops right after its jobs end leaves no
      // containers behind; past the deadline the rest is dropped: every intent is
      // in the store, and the next start replays it (recovery).
      if (tasks_.empty()) return;
      if (stopping_ && std::chrono::steady_clock::now() > drain_deadline_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    if (Status s = NoThrow(task); !s.ok()) spdlog::error("worker: a task failed: {}", s.ToString());
  }
}

}  // namespace ty::service
