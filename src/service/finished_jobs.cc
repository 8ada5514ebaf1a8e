#include "service/finished_jobs.h"

#include <utility>

namespace ty::service {

namespace {

std::string MlKey(const std::string& project, const std::string& job_id) {
  return project + '\0' + job_id;
}

}  // namespace

const std::string& JobRead::Rendered(
    int variant, const std::function<std::string(const model::Job&)>& render) const {
  std::call_once(once_.at(variant), [&] { rendered_[variant] = render(job_); });
  return rendered_[variant];
}

size_t JobRead::Bytes() const { return 3 * model::ApproxRecordBytes(job_); }

FinishedJobs::FinishedJobs(jobstore::JobStore* inner, size_t max_bytes)
    : ForwardingJobStore(inner), max_bytes_(max_bytes) {}

Result<std::shared_ptr<const JobRead>> FinishedJobs::Read(
    const std::string& uid, const std::function<void(model::Job*)>& restore) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(uid);
    if (it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return it->second.read;
    }
    generation = GenerationOf(uid);
  }
  ASSIGN_OR_RETURN(model::Job job, inner()->GetJob(uid));
  restore(&job);
  const bool finished = model::IsTerminal(job.state);
  auto read = std::make_shared<const JobRead>(std::move(job));
  if (finished) Keep(uid, read, generation);
  return std::shared_ptr<const JobRead>(std::move(read));
}

void FinishedJobs::Keep(const std::string& uid, std::shared_ptr<const JobRead> read,
                        uint64_t generation) {
  const size_t bytes = read->Bytes();
  if (bytes > max_bytes_ / 8) return;
  std::lock_guard<std::mutex> lock(mu_);
  // A write since the read began may have changed or deleted what it read.
  if (GenerationOf(uid) != generation || entries_.count(uid)) return;
  while (bytes_ + bytes > max_bytes_ && !lru_.empty()) Drop(entries_.find(lru_.back()));
  const model::Job& job = read->job();
  if (job.dialect == model::Dialect::kMlV1) ml_uids_[MlKey(job.project, job.spec.job_id)] = uid;
  lru_.push_front(uid);
  entries_[uid] = Entry{std::move(read), lru_.begin(), bytes};
  bytes_ += bytes;
}

void FinishedJobs::Forget(const std::string& uid) {
  std::lock_guard<std::mutex> lock(mu_);
  ++GenerationOf(uid);
  auto it = entries_.find(uid);
  if (it != entries_.end()) Drop(it);
}

void FinishedJobs::Drop(std::unordered_map<std::string, Entry>::iterator it) {
  const model::Job& job = it->second.read->job();
  if (job.dialect == model::Dialect::kMlV1) ml_uids_.erase(MlKey(job.project, job.spec.job_id));
  bytes_ -= it->second.bytes;
  lru_.erase(it->second.lru);
  entries_.erase(it);
}

std::optional<std::string> FinishedJobs::FindFinishedMl(const std::string& project,
                                                        const std::string& job_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = ml_uids_.find(MlKey(project, job_id));
  if (it == ml_uids_.end()) return std::nullopt;
  return it->second;
}

uint64_t& FinishedJobs::GenerationOf(const std::string& uid) {
  return generations_[std::hash<std::string>{}(uid) % generations_.size()];
}

size_t FinishedJobs::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

size_t FinishedJobs::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

// Each write forgets after it is done, so a read that starts later reads the new record
// and one that started earlier does not keep the old one (its generation moved).
Status FinishedJobs::CommitJob(const model::Job& job, bool create,
                               const std::vector<model::JobEvent>& events) {
  Status s = inner()->CommitJob(job, create, events);
  Forget(job.uid);
  return s;
}

Status FinishedJobs::DeleteJob(const std::string& uid, TimeMicros when) {
  Status s = inner()->DeleteJob(uid, when);
  Forget(uid);
  return s;
}

}  // namespace ty::service
