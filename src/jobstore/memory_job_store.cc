#include "jobstore/memory_job_store.h"

#include <algorithm>

#include "jobstore/job_codec.h"

namespace ty::jobstore {

namespace {}  // namespace

Status MemoryJobStore::CommitJob(const model::Job& job, bool create,
                                 const std::vector<model::JobEvent>& events) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(create ? InsertLocked(job) : ReplaceLocked(job));
  std::vector<model::JobEvent>& history = jobs_[job.uid].events;
  history.insert(history.end(), events.begin(), events.end());
  return Status::Ok();
}

Status MemoryJobStore::InsertLocked(const model::Job& job) {
  if (jobs_.count(job.uid)) return AlreadyExists("job " + job.uid + " already exists");
  std::string ml_id = internal::MlJobIdOf(job);
  if (job.dialect == model::Dialect::kMlV1 && ml_index_.count({job.project, ml_id})) {
    return AlreadyExists("job projects/" + job.project + "/jobs/" + ml_id + " already exists");
  }
  if (job.dialect == model::Dialect::kMlV1) ml_index_[{job.project, ml_id}] = job.uid;
  jobs_[job.uid] = Record{internal::StoredCopy(job), ml_id, {}};
  return Status::Ok();
}

Status MemoryJobStore::ReplaceLocked(const model::Job& job) {
  auto it = jobs_.find(job.uid);
  if (it == jobs_.end()) return internal::JobNotFound(job.uid);
  Record& rec = it->second;
  // Identity is fixed at creation: a caller holding a job read back from the store
  // (spec not rebuilt) has an empty spec.job_id, which means "unchanged".
  std::string ml_id = internal::MlJobIdOf(job);
  if (job.dialect != rec.job.dialect || job.project != rec.job.project ||
      job.location != rec.job.location || (!ml_id.empty() && ml_id != rec.ml_job_id)) {
    return InvalidArgument("UpdateJob cannot change the identity of job " + job.uid);
  }
  // The list fields and the spec record are fixed at creation.
  model::JobSpec kept = std::move(rec.job.spec);
  std::string record = std::move(rec.job.spec_record);
  rec.job = internal::StoredCopy(job);
  rec.job.spec = std::move(kept);
  rec.job.spec_record = std::move(record);
  return Status::Ok();
}

Result<model::Job> MemoryJobStore::GetJob(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(uid);
  if (it == jobs_.end()) return internal::JobNotFound(uid);
  return it->second.job;
}

Result<model::Job> MemoryJobStore::FindMlJob(const std::string& project,
                                             const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ml_index_.find({project, job_id});
  if (it == ml_index_.end()) {
    return NotFound("job projects/" + project + "/jobs/" + job_id + " not found");
  }
  return jobs_.at(it->second).job;
}

Result<std::vector<model::Job>> MemoryJobStore::ListJobs() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<model::Job> out;
  out.reserve(jobs_.size());
  for (const auto& [uid, rec] : jobs_) out.push_back(rec.job);
  // Same order as SqliteJobStore's ORDER BY create_time, uid (uid compared as text).
  std::stable_sort(out.begin(), out.end(), [](const model::Job& a, const model::Job& b) {
    return a.create_time != b.create_time ? a.create_time < b.create_time : a.uid < b.uid;
  });
  return out;
}

Result<std::vector<model::Job>> MemoryJobStore::ListLiveJobs() {
  ASSIGN_OR_RETURN(std::vector<model::Job> all, ListJobs());
  std::vector<model::Job> out;
  for (auto& job : all) {
    if (!model::IsTerminal(job.state) || !job.outbox.lines.empty()) out.push_back(std::move(job));
  }
  return out;
}

Result<std::vector<model::Job>> MemoryJobStore::ListEndedSince(TimeMicros since) {
  ASSIGN_OR_RETURN(std::vector<model::Job> all, ListJobs());
  std::vector<model::Job> out;
  for (auto& job : all) {
    if (!model::IsTerminal(job.state) || job.end_time < since) continue;
    job.replicas.clear();
    out.push_back(std::move(job));
  }
  std::stable_sort(out.begin(), out.end(), [](const model::Job& a, const model::Job& b) {
    return a.end_time < b.end_time;
  });
  return out;
}

Result<std::vector<model::Job>> MemoryJobStore::ListJobsPage(const PageQuery& query) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const model::Job*> in_scope;
  for (const auto& [uid, rec] : jobs_) {
    const model::Job& j = rec.job;
    if (j.dialect != query.dialect || j.project != query.project) continue;
    if (!j.study_uid.empty()) continue;  // Trial jobs are not listed (job_store.h).
    if (query.dialect == model::Dialect::kVertex && !query.any_location &&
        j.location != query.location) {
      continue;
    }
    if (!query.before_uid.empty() && !model::UidLess(j.uid, query.before_uid)) continue;
    in_scope.push_back(&j);
  }
  std::sort(in_scope.begin(), in_scope.end(), [](const model::Job* a, const model::Job* b) {
    return model::UidLess(b->uid, a->uid);
  });
  std::vector<model::Job> out;
  size_t bytes = 0;
  for (size_t i = 0; i < in_scope.size() && i < query.limit; ++i) {
    if (query.max_bytes != 0 && bytes >= query.max_bytes) break;
    out.push_back(*in_scope[i]);
    out.back().replicas.clear();
    bytes += model::ApproxRecordBytes(out.back());
  }
  return out;
}

Result<std::string> MemoryJobStore::LastUid() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string last;
  for (const auto& [uid, rec] : jobs_) {
    if (last.empty() || model::UidLess(last, uid)) last = uid;
  }
  for (const auto& [uid, deletion] : deletions_) {
    if (last.empty() || model::UidLess(last, uid)) last = uid;
  }
  return last;
}

Result<std::map<model::JobState, int64_t>> MemoryJobStore::CountJobsByState() {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<model::JobState, int64_t> out;
  for (const auto& [uid, rec] : jobs_) out[rec.job.state] += 1;
  return out;
}

Status MemoryJobStore::DeleteJob(const std::string& uid, TimeMicros when) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(uid);
  if (it == jobs_.end()) return internal::JobNotFound(uid);
  if (it->second.job.dialect == model::Dialect::kMlV1) {
    ml_index_.erase({it->second.job.project, it->second.ml_job_id});
  }
  deletions_[uid] = {uid, it->second.job.project, it->second.job.location, when};
  jobs_.erase(it);
  std::string newest;
  for (const auto& [u, d] : deletions_) {
    if (newest.empty() || model::UidLess(newest, u)) newest = u;
  }
  std::erase_if(deletions_, [&](const auto& entry) {
    return entry.second.time < when - kDeletionsKeptFor && entry.first != newest;
  });
  return Status::Ok();
}

Result<JobStore::Deletion> MemoryJobStore::GetDeletion(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = deletions_.find(uid);
  if (it == deletions_.end()) return internal::JobNotFound(uid);
  return it->second;
}

Status MemoryJobStore::AppendEvent(const std::string& uid, const model::JobEvent& event) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(uid);
  if (it == jobs_.end()) return internal::JobNotFound(uid);
  it->second.events.push_back(event);
  return Status::Ok();
}

Result<std::vector<model::JobEvent>> MemoryJobStore::ListEvents(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = jobs_.find(uid);
  if (it == jobs_.end()) return internal::JobNotFound(uid);
  return it->second.events;
}

}  // namespace ty::jobstore
