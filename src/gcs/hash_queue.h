// HashQueue: hashes objects off the caller's thread, one at a time.
//
// A file a replica wrote through /gcs has no cached hashes; reading a large one
// (a 20 GB sparse file took 85 s) on an API I/O thread stalled every other client
// and /healthz. The store hashes small files inline and hands larger ones to this
// queue: one worker thread, at most `max_pending` distinct objects waiting (more are
// dropped and asked for again on the next read), so nothing a replica writes can
// take more than one thread or unbounded memory. Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

namespace ty::gcs {

class HashQueue {
 public:
  // `stop` turns true when the queue is destroyed: a long hash gives up then.
  using Work = std::function<void(const std::string& bucket, const std::string& name,
                                  const std::atomic<bool>& stop)>;
  HashQueue(Work work, size_t max_pending);
  ~HashQueue();  // Stops the hash under way (via `stop`); the rest are dropped.
  HashQueue(const HashQueue&) = delete;
  HashQueue& operator=(const HashQueue&) = delete;

  // False when the queue is full; true when queued or already queued.
  bool Enqueue(const std::string& bucket, const std::string& name);
  size_t pending() const;

 private:
  void Run();

  const Work work_;
  const size_t max_pending_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, std::string>> queue_;
  std::set<std::pair<std::string, std::string>> queued_;
  bool stopping_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;  // Last: starts after the members it reads.
};

}  // namespace ty::gcs
