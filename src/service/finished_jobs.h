// FinishedJobs: the job store as the service uses it, remembering finished jobs so that
// reading one (the GETs that clients poll with) costs neither a store transaction nor
// a spec parse nor a render. A finished record never changes again except by delete,
// and every write passes through here, so each write forgets what it touches; nothing
// else ever invalidates an entry. Live jobs are never remembered (they change every
// commit and their readers use what the loop publishes).
//
// Bounded: at most `max_bytes` of remembered records (spec JSON, records and renders
// counted), least recently read first out; one record over an eighth of that is served
// but not kept. Thread-safe: the loop writes, API threads read.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "jobstore/forwarding_job_store.h"
#include "model/job.h"

namespace ty::service {

// One read of a job: the record (spec restored as far as it parses) and, for a
// finished one shared from the cache, its renders made once for every reader.
class JobRead {
 public:
  explicit JobRead(model::Job job) : job_(std::move(job)) {}
  const model::Job& job() const { return job_; }
  // The render for `variant` (the API's encodings, 0..kVariants-1): made by `render`
  // the first time it is asked for, the same string afterwards.
  // (Encodings: names or enum numbers, each as the record's own resource or, for a
  // training pipeline, as its backing CustomJob.)
  static constexpr int kVariants = 4;
  const std::string& Rendered(int variant,
                              const std::function<std::string(const model::Job&)>& render) const;
  // About what this read holds once both renders are made, in bytes (the cache's
  // bound counts it): the record and two renders of about its size.
  size_t Bytes() const;

 private:
  model::Job job_;
  mutable std::array<std::once_flag, kVariants> once_;
  mutable std::array<std::string, kVariants> rendered_;
};

class FinishedJobs : public jobstore::ForwardingJobStore {
 public:
  static constexpr size_t kDefaultMaxBytes = 32u << 20;
  FinishedJobs(jobstore::JobStore* inner, size_t max_bytes = kDefaultMaxBytes);

  // The job `uid` as stored (NotFound if absent): a finished one from memory when it is
  // there, else read and (when finished) remembered. `restore` rebuilds the spec.
  Result<std::shared_ptr<const JobRead>> Read(const std::string& uid,
                                              const std::function<void(model::Job*)>& restore);

  // The uid of the finished ml v1 job `job_id` of `project` if it is remembered (an ml
  // v1 GET names its job by id; this spares it the store's index).
  std::optional<std::string> FindFinishedMl(const std::string& project,
                                            const std::string& job_id) const;

  // Remembered finished jobs and their bytes (tests, /metrics).
  size_t size() const;
  size_t bytes() const;

  // jobstore::JobStore: writes forget the uid they touch; the rest goes to the inner
  // store as it is.
  Status CommitJob(const model::Job& job, bool create,
                   const std::vector<model::JobEvent>& events) override;
  Status DeleteJob(const std::string& uid, TimeMicros when) override;

 private:
  struct Entry {
    std::shared_ptr<const JobRead> read;
    std::list<std::string>::iterator lru;  // Its place in lru_ (front: latest read).
    size_t bytes = 0;                      // As counted when it was kept.
  };
  // Drops `uid` and makes any read of it that started before this call not keep what
  // it read (a write may have raced it).
  void Forget(const std::string& uid);
  void Keep(const std::string& uid, std::shared_ptr<const JobRead> read, uint64_t generation);
  void Drop(std::unordered_map<std::string, Entry>::iterator it);  // REQUIRES: mu_ held.
  uint64_t& GenerationOf(const std::string& uid);                  // REQUIRES: mu_ held.

  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;  // Guarded by mu_.
  std::list<std::string> lru_;                      // Guarded by mu_.
  // (project '\0' job id) -> uid of the remembered ml v1 jobs. Guarded by mu_.
  std::unordered_map<std::string, std::string> ml_uids_;
  size_t bytes_ = 0;  // Guarded by mu_.
  // Writes seen per stripe of uids: a read keeps its record only if no write to its
  // stripe came between its start and its end. Guarded by mu_.
  std::array<uint64_t, 64> generations_{};
};

}  // namespace ty::service
