#include "executor/background_work.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

namespace ty::executor::internal {

BackgroundWork::~BackgroundWork() { Shutdown(); }

void BackgroundWork::SetEventCallback(EventCallback callback) {
  std::lock_guard<std::mutex> lock(mu_);
  callback_ = std::move(callback);
}

void BackgroundWork::Emit(const ExecutorEvent& event) const {
  EventCallback cb;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cb = callback_;
  }
  if (cb) cb(event);
}

Status BackgroundWork::StartLaunch(std::function<void()> work) {
  if (shutting_down_.load()) return Unavailable("launch: executor is shutting down");
  std::lock_guard<std::mutex> lock(mu_);
  for (uint64_t id : finished_launches_) {
    auto it = launch_threads_.find(id);
    if (it != launch_threads_.end()) {
      it->second.join();
      launch_threads_.erase(it);
    }
  }
  finished_launches_.clear();
  uint64_t id = next_launch_id_++;
  launch_threads_[id] = std::thread([this, id, work = std::move(work)] {
    if (Status s = NoThrow(work); !s.ok()) spdlog::error("launch: {}", s.ToString());
    std::lock_guard<std::mutex> done_lock(mu_);
    finished_launches_.push_back(id);
  });
  return Status::Ok();
}

void BackgroundWork::StartWatcher(const std::string& job_uid, int attempt, const std::string& name,
                                  std::function<void()> work) {
  std::unique_ptr<Watcher> old;
  std::lock_guard<std::mutex> lock(mu_);
  if (shutting_down_.load()) return;
  auto it = watchers_.find(name);
  if (it != watchers_.end()) {
    if (!it->second->done) return;  // Already watched (Recover called twice).
    old = std::move(it->second);    // A finished watcher of an earlier replica.
    watchers_.erase(it);
  }
  auto w = std::make_unique<Watcher>();
  w->job_uid = job_uid;
  w->attempt = attempt;
  Watcher* raw = w.get();
  w->thread = std::thread([this, raw, work = std::move(work)] {
    if (Status s = NoThrow(work); !s.ok()) spdlog::error("watcher: {}", s.ToString());
    std::lock_guard<std::mutex> done_lock(mu_);
    raw->done = true;
    cv_.notify_all();
  });
  watchers_[name] = std::move(w);
  if (old) old->thread.join();  // Already done: returns at once.
}

bool BackgroundWork::IsWatched(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  return watchers_.count(name) > 0;
}

bool BackgroundWork::WaitForWatcher(const std::string& name, DurationMicros timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = watchers_.find(name);
  if (it == watchers_.end()) return true;
  if (it->second->thread.get_id() == std::this_thread::get_id()) return false;
  // Re-finds the watcher on every wake-up: WaitForWatchers may erase it meanwhile.
  return cv_.wait_for(lock, std::chrono::microseconds(timeout), [&] {
    auto found = watchers_.find(name);
    return found == watchers_.end() || found->second->done;
  });
}

bool BackgroundWork::WaitForWatchers(const std::string& job_uid, int attempt,
                                     DurationMicros timeout) {
  std::vector<std::unique_ptr<Watcher>> finished;
  {
    std::unique_lock<std::mutex> lock(mu_);
    bool all_done = cv_.wait_for(lock, std::chrono::microseconds(timeout), [&] {
      for (const auto& [name, w] : watchers_) {
        if (w->job_uid == job_uid && w->attempt == attempt && !w->done) return false;
      }
      return true;
    });
    if (!all_done) return false;
    for (auto it = watchers_.begin(); it != watchers_.end();) {
      if (it->second->job_uid == job_uid && it->second->attempt == attempt) {
        finished.push_back(std::move(it->second));
        it = watchers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : finished) w->thread.join();
  return true;
}

void BackgroundWork::SleepUnlessShuttingDown(int ms) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return shutting_down_.load(); });
}

void BackgroundWork::BeginShutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutting_down_.store(true);
  }
  cv_.notify_all();
}

void BackgroundWork::Shutdown() {
  BeginShutdown();
  std::map<uint64_t, std::thread> launches;
  std::map<std::string, std::unique_ptr<Watcher>> watchers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    launches.swap(launch_threads_);
  }
  for (auto& [id, t] : launches) t.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    watchers.swap(watchers_);
  }
  for (auto& [name, w] : watchers) w->thread.join();
}

Status EnsureBucketDirs(const std::string& bucket_root, const std::vector<std::string>& buckets) {
  if (bucket_root.empty()) return Status::Ok();
  std::error_code ec;
  std::filesystem::create_directories(bucket_root, ec);
  for (const std::string& b : buckets) {
    if (ec) break;
    std::filesystem::create_directories(std::filesystem::path(bucket_root) / b, ec);
  }
  if (ec)
    return Unavailable("cannot make the bucket directories under " + bucket_root + ": " +
                       ec.message());
  return Status::Ok();
}

Status GiveWritableMountsTo(const AttemptSpec& attempt, uint32_t uid) {
  for (const ReplicaLaunch& r : attempt.replicas) {
    for (const Mount& m : r.mounts) {
      if (m.read_only) continue;
      int fd = ::open(m.host_path.c_str(), O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) return Internal("cannot open " + m.host_path + ": " + std::strerror(errno));
      struct stat st = {};
      const bool ok = ::fstat(fd, &st) == 0 &&
                      ((st.st_uid == uid && st.st_gid == uid) || ::fchown(fd, uid, uid) == 0);
      const int err = errno;
      ::close(fd);
      if (!ok) {
        return Internal("cannot give " + m.host_path +
                        " to the replicas' user namespace: " + std::strerror(err));
      }
    }
  }
  return Status::Ok();
}

std::vector<std::string> MountedBuckets(const AttemptSpec& attempt) {
  std::set<std::string> all(attempt.buckets.begin(), attempt.buckets.end());
  all.insert(attempt.visible_buckets.begin(), attempt.visible_buckets.end());
  return {all.begin(), all.end()};
}

Status ValidateAttempt(const AttemptSpec& attempt,
                       const std::function<Status(const ReplicaLaunch&)>& check_replica) {
  if (attempt.job_uid.empty()) return InvalidArgument("launch: job_uid is empty");
  if (attempt.replicas.empty()) return InvalidArgument("launch: attempt has no replicas");
  std::set<std::string> names;
  for (const ReplicaLaunch& r : attempt.replicas) {
    RETURN_IF_ERROR(check_replica(r));
    if (!names.insert(r.name).second) {
      return InvalidArgument("launch: replica name " + r.name + " is not unique");
    }
  }
  return Status::Ok();
}

ExecutorEvent LaunchOutcomeEvent(const AttemptSpec& attempt, const Status& launched,
                                 TimeMicros image_ready_time, TimeMicros now) {
  ExecutorEvent e;
  e.job_uid = attempt.job_uid;
  e.attempt = attempt.attempt;
  e.time = now;
  if (launched.ok()) {
    e.kind = ExecutorEventKind::kAttemptStarted;
    e.image_ready_time = image_ready_time;
  } else {
    e.kind = ExecutorEventKind::kLaunchFailed;
    e.message = launched.message();
  }
  return e;
}

ExecutorEvent ReplicaExitedEvent(const std::string& job_uid, int attempt, int pool, int index,
                                 int exit_code, TimeMicros now) {
  ExecutorEvent e;
  e.kind = ExecutorEventKind::kReplicaExited;
  e.job_uid = job_uid;
  e.attempt = attempt;
  e.pool = pool;
  e.index = index;
  e.exit_code = exit_code;
  e.signal = SignalOf(exit_code);
  e.time = now;
  return e;
}

std::optional<int> SignalOf(int exit_code) {
  if (exit_code > 128 && exit_code < 128 + 65) return exit_code - 128;
  return std::nullopt;
}

void ForEachConcurrently(size_t n, const std::function<bool(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    while (!stop.load()) {
      size_t i = next.fetch_add(1);
      if (i >= n) return;
      if (!fn(i)) stop.store(true);
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(n, kMaxLaunchThreads); ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
}

Status FirstError(const std::vector<Status>& results) {
  for (const Status& s : results) {
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

std::string UniqueHexId(Random& random) {
  static std::atomic<uint32_t> counter{0};
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%x", static_cast<unsigned>(++counter));
  return RandomHex(random, 8) + buf;
}

}  // namespace ty::executor::internal
