// The unfinished jobs a controller publishes for API threads to read without waiting
// for the loop: the loop thread puts and drops, any thread reads. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "model/job.h"

namespace ty::service {

class PublishedJobs {
 public:
  // Keeps `job` while it is not finished; a finished one is dropped (readers then
  // find it in the store, which already has its final record).
  void Put(const model::Job& job) {
    std::lock_guard<std::mutex> lock(mu_);
    if (model::IsTerminal(job.state)) {
      jobs_.erase(job.uid);
    } else {
      jobs_[job.uid] = job;
    }
  }
  void Drop(const std::string& uid) {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.erase(uid);
  }
  std::optional<model::Job> Get(const std::string& uid) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(uid);
    if (it == jobs_.end()) return std::nullopt;
    return it->second;
  }
  // The uid of the ml v1 job `job_id` of `project`, if published.
  std::optional<std::string> FindMl(const std::string& project, const std::string& job_id) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [uid, job] : jobs_) {
      if (job.dialect == model::Dialect::kMlV1 && job.project == project &&
          job.spec.job_id == job_id) {
        return uid;
      }
    }
    return std::nullopt;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, model::Job> jobs_;  // By uid. Guarded by mu_.
};

}  // namespace ty::service
