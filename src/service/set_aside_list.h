// Internal to service/: stored records a start-up could no longer run (a spec, search
// space or tuner that no longer builds). Each is failed, never left unfinished; this
// list says which and why, for /healthz, and the daemon's log says it once.
//
// Thread-safe: the loop adds, API threads read.
#pragma once

#include <spdlog/spdlog.h>

#include <mutex>
#include <string>
#include <vector>

namespace ty::service {

class SetAsideList {
 public:
  // `what`: "job" or "study".
  void Add(const std::string& what, const std::string& uid, const std::string& why) {
    spdlog::error("{} {}: the stored {} can no longer be run: {}", what, uid, what, why);
    std::lock_guard<std::mutex> lock(mu_);
    lines_.push_back(what + " " + uid + ": " + why);
  }
  std::vector<std::string> lines() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;  // Guarded by mu_.
};

}  // namespace ty::service
