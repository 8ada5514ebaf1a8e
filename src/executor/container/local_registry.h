// LocalRegistry: the daemon's own OCI registry (Debian's docker-registry, the CNCF
// distribution registry), standing in for gcr.io and *.pkg.dev (registry_names.h).
// Plain HTTP, no auth, on a loopback address; images are stored under the daemon's
// data directory. A supervising thread starts it, and starts it again should it exit;
// where something already answers the registry API at the address (another daemon's
// registry, or one the operator runs), that one is used and nothing is started.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"

namespace ty::executor {

class LocalRegistry {
 public:
  struct Options {
    std::string binary = "/usr/bin/docker-registry";
    std::string address;      // "HOST:PORT" to listen on (HOST a literal address).
    std::string storage_dir;  // Images; its parent gets the generated config and log.
  };
  explicit LocalRegistry(Options options);
  LocalRegistry(const LocalRegistry&) = delete;
  LocalRegistry& operator=(const LocalRegistry&) = delete;
  ~LocalRegistry();  // Stop().

  // Starts supervising (returns at once; the registry comes up in the background).
  // InvalidArgument for an address that is not HOST:PORT.
  Status Start();
  // Stops the registry it started (not one it found) and the supervisor.
  void Stop();

  // Waits up to `timeout_ms` for `GET /v2/` to answer 200 at the address.
  static bool Answers(const std::string& address, long timeout_ms);

 private:
  void Supervise();
  Status WriteConfig() const;
  pid_t Spawn() const;
  bool SleepUnlessStopping(int ms);

  Options options_;
  std::string config_path_;
  std::string log_path_;
  std::thread supervisor_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<pid_t> child_{0};
};

}  // namespace ty::executor
