// The unfinished jobs a controller publishes for API threads to read without waiting
// for the loop: the loop thread puts and drops, any thread reads. Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model/job.h"
#include "model/work_memory.h"

namespace ty::service {

class PublishedJobs {
 public:
  // Keeps `job` while it is not finished; a finished one is dropped (readers then
  // find it in the store, which already has its final record).
  void Put(const model::Job& job) {
    std::lock_guard<std::mutex> lock(mu_);
    ForgetLocked(job.uid);
    if (!model::IsTerminal(job.state)) {
      jobs_[job.uid] = job;
      const size_t bytes = model::WorkBytes(job);
      work_[job.uid] = bytes;
      work_bytes_ += bytes;
    }
  }
  void Drop(const std::string& uid) {
    std::lock_guard<std::mutex> lock(mu_);
    ForgetLocked(uid);
  }
  // What the jobs held here cost the memory budget (model::WorkBytes, summed).
  size_t WorkBytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return work_bytes_;
  }
  bool Has(const std::string& uid) const {
    std::lock_guard<std::mutex> lock(mu_);
    return jobs_.count(uid) != 0;
  }
  std::optional<model::Job> Get(const std::string& uid) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = jobs_.find(uid);
    if (it == jobs_.end()) return std::nullopt;
    return it->second;
  }
  // Copies of the jobs `keep` takes (the indexer's: those naming a tensorboard).
  std::vector<model::Job> Where(const std::function<bool(const model::Job&)>& keep) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<model::Job> out;
    for (const auto& [uid, job] : jobs_) {
      if (keep(job)) out.push_back(job);
    }
    return out;
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
  void ForgetLocked(const std::string& uid) {
    jobs_.erase(uid);
    auto it = work_.find(uid);
    if (it == work_.end()) return;
    work_bytes_ -= it->second;
    work_.erase(it);
  }

  mutable std::mutex mu_;
  std::map<std::string, model::Job> jobs_;  // By uid. Guarded by mu_.
  std::map<std::string, size_t> work_;      // model::WorkBytes by uid. Guarded by mu_.
  size_t work_bytes_ = 0;                   // Their sum. Guarded by mu_.
};

}  // namespace ty::service
