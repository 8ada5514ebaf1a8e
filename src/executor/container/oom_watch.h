// Out-of-memory kills the engine does not report. Podman 4.3 on a cgroup v1 host
// (these machines: notes/containers-here.md) says OOMKilled=false for a container the
// kernel killed at its memory limit, and by the time the exit is seen the container's
// cgroup is gone, so nothing can be read afterwards. This registers for the kernel's
// cgroup v1 OOM notification (cgroup.event_control + an eventfd on
// memory.oom_control) of each running container's memory cgroup, and remembers the
// containers whose cgroup saw an OOM while it still existed.
//
// On cgroup v2 hosts (no memory.oom_control) Watch does nothing; the engine's own
// OOMKilled is right there. Thread-safe; one thread waits on all eventfds.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace ty::executor {

class OomWatch {
 public:
  OomWatch();
  ~OomWatch();
  OomWatch(const OomWatch&) = delete;
  OomWatch& operator=(const OomWatch&) = delete;

  // Watches the memory cgroup of host process `pid` (a container's first process)
  // under `key`. Idempotent per key; silently nothing when the cgroup is not v1.
  void Watch(const std::string& key, int pid);
  // Whether an OOM kill happened under `key`; forgets the key.
  bool TakeOomKilled(const std::string& key);

 private:
  struct Entry {
    int event_fd = -1;
    int control_fd = -1;  // memory.oom_control, open: readable while the cgroup exists.
  };
  void Run();
  void Forget(const std::string& key);  // REQUIRES: mu_ held.

  std::mutex mu_;
  std::map<std::string, Entry> entries_;  // Guarded by mu_.
  std::map<int, std::string> by_fd_;      // eventfd -> key. Guarded by mu_.
  std::set<std::string> oom_;             // Guarded by mu_.
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // Stops Run.
  std::thread thread_;
};

}  // namespace ty::executor
