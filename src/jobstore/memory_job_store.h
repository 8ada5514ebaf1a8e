// MemoryJobStore: a JobStore kept in process memory, for unit tests of the service
// and for `--store=memory` runs where durability does not matter.
//
// Same semantics as SqliteJobStore (both pass tests/jobstore/job_store_contract.h):
// `spec` is not kept (only `spec_json`), ml v1 (project, job_id) is unique, and a
// job's identity (dialect, project, location, ml job_id) is fixed at creation.
//
// Thread-safety: every method takes one mutex for its whole duration, so each call
// is atomic with respect to the others.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "jobstore/job_store.h"

namespace ty::jobstore {

class MemoryJobStore : public JobStore {
 public:
  MemoryJobStore() = default;
  MemoryJobStore(const MemoryJobStore&) = delete;
  MemoryJobStore& operator=(const MemoryJobStore&) = delete;

  Status CommitJob(const model::Job& job, bool create,
                   const std::vector<model::JobEvent>& events) override;
  Result<model::Job> GetJob(const std::string& uid) override;
  Result<model::Job> FindMlJob(const std::string& project, const std::string& job_id) override;
  Result<std::vector<model::Job>> ListJobs() override;
  Result<std::vector<model::Job>> ListLiveJobs() override;
  Result<std::vector<model::Job>> ListEndedSince(TimeMicros since) override;
  Result<std::vector<model::Job>> ListJobsPage(const PageQuery& query) override;
  Result<std::string> LastUid() override;
  Result<std::map<model::JobState, int64_t>> CountJobsByState() override;
  Status DeleteJob(const std::string& uid, TimeMicros when) override;
  Result<Deletion> GetDeletion(const std::string& uid) override;
  Status AppendEvent(const std::string& uid, const model::JobEvent& event) override;
  Result<std::vector<model::JobEvent>> ListEvents(const std::string& uid) override;

 private:
  Status InsertLocked(const model::Job& job);   // REQUIRES: mu_ held.
  Status ReplaceLocked(const model::Job& job);  // REQUIRES: mu_ held.
  struct Record {
    model::Job job;         // `spec` default-constructed (internal::StoredCopy).
    std::string ml_job_id;  // Empty for Vertex jobs.
    std::vector<model::JobEvent> events;
  };

  std::mutex mu_;
  std::map<std::string, Record> jobs_;  // GUARDED_BY(mu_); by uid.
  // GUARDED_BY(mu_); (project, job_id) -> uid.
  std::map<std::pair<std::string, std::string>, std::string> ml_index_;
  std::map<std::string, Deletion> deletions_;  // GUARDED_BY(mu_); by uid.
};

}  // namespace ty::jobstore
