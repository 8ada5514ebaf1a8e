// LoopCore: the small core every controller runs on (docs/design.md §2). One loop owns
// all job state: tasks (requests, executor events, timers) run one at a time on it;
// blocking backend calls run as "blocking work" off the loop and post results back.
//
// Two modes, same semantics:
//  - kThreaded (the daemon): a loop thread, a worker pool for blocking work, timers
//    on the injected Clock (waits are capped at 1 s, so a clock jump or a manual
//    clock never delays a timer for long).
//  - kManual (tests): nothing runs until the test calls RunUntilIdle() on its own
//    thread, which then is the loop thread; blocking work runs there too, in order.
//    With a ManualClock this makes every scenario deterministic. Halt() drops all
//    queued work, as a killed daemon would (crash-point tests).
//
// Controllers talk through the core, never by calling each other: a controller
// registers, before the loop starts, the message types it receives (Receive<M>);
// any controller Sends a message, which is delivered to every receiver of its type,
// in registration order, as one loop task queued after the sender's task. So no
// call ever comes back into a controller in the middle of its own commit, and
// adding a controller is its Receive registrations and nothing else
// (service/messages.h lists the messages).
//
// Thread-safety: Post/At/Blocking/Call/Send from any thread; Receive before Start.
// Loop-only code asserts OnLoopThread().
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <typeindex>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "service/worker_pool.h"

namespace ty::service {

class LoopCore {
 public:
  enum class Mode { kThreaded, kManual };

  LoopCore(const Clock* clock, Mode mode, int worker_threads);
  ~LoopCore();  // Shutdown().

  // kThreaded: starts the loop thread and the worker pool. kManual: no-op.
  void Start();
  // Stops the loop; queued tasks are dropped, blocking work drains for up to 5 s.
  void Shutdown();

  void Post(std::function<void()> task);
  void At(TimeMicros when, std::function<void()> task);
  // Runs `work` off the loop (worker pool), or queued for RunUntilIdle (manual).
  void Blocking(std::function<void()> work);
  // Runs `task` on the loop and returns its result; in manual mode runs it at once
  // (the caller is the loop thread). Unavailable once shut down.
  template <typename T>
  T Call(std::function<T()> task);

  // Before Start: `receiver` gets every message of type M sent from now on.
  template <typename M>
  void Receive(std::function<void(const M&)> receiver);
  // Delivers `message` to every receiver of M, in one task queued after this one.
  // A message nobody receives is dropped.
  template <typename M>
  void Send(M message);

  bool OnLoopThread() const;
  bool draining() const;
  const Clock* clock() const { return clock_; }

  // --- Manual mode.
  // Runs tasks, blocking work and due timers until none is left; returns how many ran.
  int RunUntilIdle();
  // Drops every queued task, blocking work and timer, and ignores all later posts:
  // the daemon "died" here.
  void Halt();
  // Like Halt(), but blocking work already queued still runs in RunUntilIdle (its
  // results are dropped): the daemon died right after starting those side effects.
  void HaltAfterQueuedBlockingWork();
  // HaltAfterQueuedBlockingWork once the running task returns: what the task goes on
  // to start still starts (crash-point tests: the daemon dies right after a commit's
  // actions began).
  void HaltAfterThisTask();
  bool halted() const;
  // Halted or draining: the daemon "died" (tests) or is shutting down; nothing may be
  // committed or logged any more, even by the task that is still running.
  bool dead() const { return halted() || draining(); }

 private:
  void RunThread();
  void RunTask(const std::function<void()>& task);
  bool PopReady(std::function<void()>* task);  // REQUIRES: mu_ held.

  const Clock* const clock_;
  const Mode mode_;
  const int worker_threads_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;                  // Guarded by mu_.
  std::deque<std::function<void()>> blocking_;               // Manual mode. Guarded by mu_.
  std::multimap<TimeMicros, std::function<void()>> timers_;  // Guarded by mu_.
  bool stopping_ = false;                                    // Guarded by mu_.
  bool draining_ = false;         // HaltAfterQueuedBlockingWork. Guarded by mu_.
  bool halt_after_task_ = false;  // HaltAfterThisTask. Guarded by mu_.
  std::thread thread_;
  std::thread::id loop_thread_id_;
  // By message type; registered before Start, read-only afterwards.
  std::map<std::type_index, std::vector<std::function<void(const void*)>>> receivers_;
  std::unique_ptr<WorkerPool> workers_;
};

template <typename M>
void LoopCore::Receive(std::function<void(const M&)> receiver) {
  receivers_[std::type_index(typeid(M))].push_back(
      [receiver = std::move(receiver)](const void* m) { receiver(*static_cast<const M*>(m)); });
}

template <typename M>
void LoopCore::Send(M message) {
  auto it = receivers_.find(std::type_index(typeid(M)));
  if (it == receivers_.end()) return;
  Post([receivers = &it->second, message = std::move(message)] {
    for (const auto& receive : *receivers) receive(&message);
  });
}

template <typename T>
T LoopCore::Call(std::function<T()> task) {
  if (mode_ == Mode::kManual) {
    if (halted() || draining()) return T(Unavailable("the service is shutting down"));
    return task();
  }
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return T(Unavailable("the service is shutting down"));
    // A throw reaches the caller (a request answers 500), never the loop thread.
    tasks_.push_back([promise, task = std::move(task)] {
      try {
        promise->set_value(task());
      } catch (...) {
        promise->set_exception(std::current_exception());
      }
    });
  }
  cv_.notify_one();
  return future.get();
}

}  // namespace ty::service
