// ForwardingJobStore: a JobStore that hands every call to another one. The base of
// wrappers that change a few calls and keep the rest (a cache that forgets what is
// written, a test's fault injection), so a method added to JobStore is forwarded in
// one place.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "jobstore/job_store.h"

namespace ty::jobstore {

class ForwardingJobStore : public JobStore {
 public:
  explicit ForwardingJobStore(JobStore* inner) : inner_(inner) {}

  Status CommitJob(const model::Job& job, bool create,
                   const std::vector<model::JobEvent>& events) override {
    return inner_->CommitJob(job, create, events);
  }
  Result<model::Job> GetJob(const std::string& uid) override { return inner_->GetJob(uid); }
  Result<model::Job> FindMlJob(const std::string& project, const std::string& job_id) override {
    return inner_->FindMlJob(project, job_id);
  }
  Result<std::vector<model::Job>> ListJobs() override { return inner_->ListJobs(); }
  Result<std::vector<model::Job>> ListLiveJobs() override { return inner_->ListLiveJobs(); }
  Result<std::vector<model::Job>> ListEndedSince(TimeMicros since) override {
    return inner_->ListEndedSince(since);
  }
  Result<std::vector<model::Job>> ListJobsPage(const PageQuery& query) override {
    return inner_->ListJobsPage(query);
  }
  Result<std::string> LastUid() override { return inner_->LastUid(); }
  Result<std::map<model::JobState, int64_t>> CountJobsByState() override {
    return inner_->CountJobsByState();
  }
  Status DeleteJob(const std::string& uid, TimeMicros when) override {
    return inner_->DeleteJob(uid, when);
  }
  Result<Deletion> GetDeletion(const std::string& uid) override { return inner_->GetDeletion(uid); }
  Status AppendEvent(const std::string& uid, const model::JobEvent& event) override {
    return inner_->AppendEvent(uid, event);
  }
  Result<std::vector<model::JobEvent>> ListEvents(const std::string& uid) override {
    return inner_->ListEvents(uid);
  }
  std::vector<std::string> SetAsideRows() const override { return inner_->SetAsideRows(); }
  Status BackupTo(const std::string& path) override { return inner_->BackupTo(path); }

 protected:
  JobStore* inner() const { return inner_; }

 private:
  JobStore* const inner_;
};

}  // namespace ty::jobstore
