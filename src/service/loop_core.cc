#include "service/loop_core.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ty::service {

LoopCore::LoopCore(const Clock* clock, Mode mode, int worker_threads)
    : clock_(clock), mode_(mode), worker_threads_(std::max(1, worker_threads)) {
  if (mode_ == Mode::kManual) loop_thread_id_ = std::this_thread::get_id();
}

LoopCore::~LoopCore() { Shutdown(); }

void LoopCore::Start() {
  if (mode_ == Mode::kManual || thread_.joinable()) return;
  workers_ = std::make_unique<WorkerPool>(worker_threads_);
  thread_ = std::thread([this] {
    {
      std::lock_guard<std::mutex> lock(mu_);
      loop_thread_id_ = std::this_thread::get_id();
    }
    RunThread();
  });
}

void LoopCore::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    tasks_.clear();
    blocking_.clear();
    timers_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  workers_.reset();  // Finishes in-flight backend calls; their results are dropped.
}

void LoopCore::Halt() { Shutdown(); }

void LoopCore::HaltAfterQueuedBlockingWork() {
  std::lock_guard<std::mutex> lock(mu_);
  draining_ = true;
  tasks_.clear();
  timers_.clear();
}

void LoopCore::HaltAfterThisTask() {
  std::lock_guard<std::mutex> lock(mu_);
  halt_after_task_ = true;
}

bool LoopCore::draining() const {
  std::lock_guard<std::mutex> lock(mu_);
  return draining_;
}

bool LoopCore::halted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void LoopCore::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || draining_) return;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void LoopCore::At(TimeMicros when, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || draining_) return;
    timers_.emplace(when, std::move(task));
  }
  cv_.notify_one();
}

void LoopCore::Blocking(std::function<void()> work) {
  if (mode_ == Mode::kManual) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && !draining_) blocking_.push_back(std::move(work));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || !workers_) return;
  }
  workers_->Submit(std::move(work));
}

bool LoopCore::OnLoopThread() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::this_thread::get_id() == loop_thread_id_;
}

bool LoopCore::PopReady(std::function<void()>* task) {
  if (draining_) {
    if (blocking_.empty()) {
      stopping_ = true;  // Every side effect begun before the "crash" has run.
      return false;
    }
    *task = std::move(blocking_.front());
    blocking_.pop_front();
    return true;
  }
  if (!tasks_.empty()) {
    *task = std::move(tasks_.front());
    tasks_.pop_front();
    return true;
  }
  if (!blocking_.empty()) {
    *task = std::move(blocking_.front());
    blocking_.pop_front();
    return true;
  }
  if (!timers_.empty() && timers_.begin()->first <= clock_->Now()) {
    *task = std::move(timers_.begin()->second);
    timers_.erase(timers_.begin());
    return true;
  }
  return false;
}

void LoopCore::RunThread() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        if (stopping_) return;
        if (PopReady(&task)) break;
        if (timers_.empty()) {
          cv_.wait(lock);
        } else {
          int64_t wait_us = std::clamp<int64_t>(timers_.begin()->first - clock_->Now(), 1, 1000000);
          cv_.wait_for(lock, std::chrono::microseconds(wait_us));
        }
      }
    }
    RunTask(task);
  }
}

void LoopCore::RunTask(const std::function<void()>& task) {
  // One task's surprise (a library's exception on a record nobody foresaw) is logged,
  // and the loop serves on.
  if (Status s = NoThrow(task); !s.ok()) spdlog::error("loop: a task failed: {}", s.ToString());
  bool halt = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::swap(halt, halt_after_task_);
  }
  if (halt) HaltAfterQueuedBlockingWork();
}

int LoopCore::RunUntilIdle() {
  int ran = 0;
  for (;;) {
    std::function<void()> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || !PopReady(&task)) return ran;
    }
    RunTask(task);
    ++ran;
  }
}

}  // namespace ty::service
