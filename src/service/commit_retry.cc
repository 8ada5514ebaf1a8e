#include "service/commit_retry.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ty::service {

CommitFailure MeaningOf(const Status& failed_commit) {
  switch (failed_commit.code()) {
    case StatusCode::kResourceExhausted:   // SQLITE_FULL: the disk is full.
    case StatusCode::kUnavailable:         // Busy or locked; the service stopping.
    case StatusCode::kFailedPrecondition:  // Read-only or cannot open: an operator fixes it.
    case StatusCode::kInternal:            // An I/O error.
    case StatusCode::kDataLoss:            // Damaged: /healthz says so until it is repaired.
      return CommitFailure::kRetry;
    default:
      // The job is gone, or a test's simulated death (Aborted): a retry changes nothing.
      return CommitFailure::kDrop;
  }
}

Status SubmitOutcome(Status create_commit, model::Dialect dialect) {
  if (create_commit.code() == StatusCode::kAlreadyExists && dialect == model::Dialect::kMlV1) {
    return AlreadyExists("Field: job.job_id Error: A job with this id already exists.")
        .WithField("job.job_id");
  }
  return create_commit;
}

DurationMicros RetryDelay(int tries) {
  constexpr DurationMicros kFirst = 100'000;
  constexpr DurationMicros kMost = 10'000'000;
  const int doublings = std::clamp(tries - 1, 0, 7);
  return std::min(kFirst << doublings, kMost);
}

StoreWriteHealth Combined(StoreWriteHealth a, const StoreWriteHealth& b) {
  if (b.failing) {
    if (!a.failing || b.since < a.since) a.since = b.since;
    if (!a.failing) a.detail = b.detail;
    a.failing = true;
  }
  a.waiting.insert(b.waiting.begin(), b.waiting.end());
  a.jobs_waiting = a.waiting.size();
  a.failed_writes += b.failed_writes;
  return a;
}

void StoreWriteWatch::Failed(const std::string& what, const std::string& uid, const Status& why,
                             TimeMicros now, bool first) {
  if (first) {
    spdlog::error("{} {}: store write failed ({}); its inputs wait and are committed again", what,
                  uid, why.ToString());
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!health_.failing) health_.since = now;
  health_.failing = true;
  health_.detail = why.message();
  health_.waiting.insert(uid);
  health_.jobs_waiting = health_.waiting.size();
  ++health_.failed_writes;
}

void StoreWriteWatch::Landed(const std::string& what, const std::string& uid) {
  spdlog::info("{} {}: its waiting inputs are committed", what, uid);
  std::lock_guard<std::mutex> lock(mu_);
  health_.waiting.erase(uid);
  health_.jobs_waiting = health_.waiting.size();
  if (health_.waiting.empty()) {
    health_.failing = false;
    health_.since = 0;
  }
}

StoreWriteHealth StoreWriteWatch::health() const {
  std::lock_guard<std::mutex> lock(mu_);
  return health_;
}

bool HeldInputs::Add(const std::string& uid, machines::JobInput input) {
  Held& h = held_[uid];
  bool kept_all = true;
  if (h.inputs.size() >= kMaxPerJob) {
    h.inputs.pop_front();
    kept_all = false;
  }
  h.inputs.push_back(std::move(input));
  return kept_all;
}

std::optional<machines::JobInput> HeldInputs::Front(const std::string& uid) const {
  auto it = held_.find(uid);
  if (it == held_.end() || it->second.inputs.empty()) return std::nullopt;
  return it->second.inputs.front();
}

void HeldInputs::Pop(const std::string& uid) {
  auto it = held_.find(uid);
  if (it == held_.end()) return;
  if (!it->second.inputs.empty()) it->second.inputs.pop_front();
  it->second.tries = 0;
  if (it->second.inputs.empty()) held_.erase(it);
}

int HeldInputs::CountTry(const std::string& uid) {
  auto it = held_.find(uid);
  return it == held_.end() ? 0 : ++it->second.tries;
}

}  // namespace ty::service
