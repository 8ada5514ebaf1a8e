#include "executor/container/oom_watch.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace ty::executor {

namespace {

// The memory cgroup directory (cgroup v1) of `pid`, or "".
std::string MemoryCgroupOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // "N:memory:/libpod_parent/libpod-<id>"; v2 has "0::/..." (no controller list).
    size_t first = line.find(':');
    size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    if (controllers == "memory") return "/sys/fs/cgroup/memory" + line.substr(second + 1);
  }
  return "";
}

}  // namespace

OomWatch::OomWatch() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  thread_ = std::thread([this] { Run(); });
}

OomWatch::~OomWatch() {
  if (thread_.joinable()) {
    uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  std::lock_guard<std::mutex> lock(mu_);
  while (!entries_.empty()) Forget(entries_.begin()->first);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void OomWatch::Watch(const std::string& key, int pid) {
  if (pid <= 0 || epoll_fd_ < 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.count(key)) return;
  }
  const std::string dir = MemoryCgroupOf(pid);
  if (dir.empty()) return;
  Entry e;
  e.control_fd = open((dir + "/memory.oom_control").c_str(), O_RDONLY | O_CLOEXEC);
  if (e.control_fd < 0) return;
  e.event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  int event_control = open((dir + "/cgroup.event_control").c_str(), O_WRONLY | O_CLOEXEC);
  std::string registration = std::to_string(e.event_fd) + " " + std::to_string(e.control_fd);
  bool ok = e.event_fd >= 0 && event_control >= 0 &&
            write(event_control, registration.data(), registration.size()) ==
                static_cast<ssize_t>(registration.size());
  if (event_control >= 0) close(event_control);
  std::lock_guard<std::mutex> lock(mu_);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = e.event_fd;
  if (!ok || entries_.count(key) || epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, e.event_fd, &ev) != 0) {
    if (e.event_fd >= 0) close(e.event_fd);
    close(e.control_fd);
    return;
  }
  by_fd_[e.event_fd] = key;
  entries_[key] = e;
}

void OomWatch::Run() {
  epoll_event events[32];
  for (;;) {
    int n = epoll_wait(epoll_fd_, events, 32, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_fd_) return;
      uint64_t count = 0;
      (void)!read(fd, &count, sizeof(count));
      auto it = by_fd_.find(fd);
      if (it == by_fd_.end()) continue;
      const std::string key = it->second;
      // The same eventfd fires when the cgroup is removed; then its files are gone.
      char buf[256];
      if (pread(entries_[key].control_fd, buf, sizeof(buf), 0) > 0) {
        oom_.insert(key);
      } else {
        Forget(key);
      }
    }
  }
}

void OomWatch::Forget(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.event_fd, nullptr);
  by_fd_.erase(it->second.event_fd);
  close(it->second.event_fd);
  close(it->second.control_fd);
  entries_.erase(it);
}

bool OomWatch::TakeOomKilled(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  Forget(key);
  return oom_.erase(key) > 0;
}

}  // namespace ty::executor
