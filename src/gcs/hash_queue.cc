#include "gcs/hash_queue.h"

#include "common/status.h"

namespace ty::gcs {

HashQueue::HashQueue(Work work, size_t max_pending)
    : work_(std::move(work)), max_pending_(max_pending), thread_([this] { Run(); }) {}

HashQueue::~HashQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_ = true;
  cv_.notify_all();
  thread_.join();
}

bool HashQueue::Enqueue(const std::string& bucket, const std::string& name) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto key = std::make_pair(bucket, name);
    if (queued_.count(key) > 0) return true;
    if (queued_.size() >= max_pending_ || stopping_) return false;
    queued_.insert(key);
    queue_.push_back(std::move(key));
  }
  cv_.notify_one();
  return true;
}

size_t HashQueue::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_.size();
}

void HashQueue::Run() {
  for (;;) {
    std::pair<std::string, std::string> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      next = queue_.front();
      queue_.pop_front();
    }
    // Still listed in queued_ while it is hashed: a read meanwhile does not queue it again.
    (void)NoThrow([&] { work_(next.first, next.second, stop_); });
    std::lock_guard<std::mutex> lock(mu_);
    queued_.erase(next);
  }
}

}  // namespace ty::gcs
