#include "service/commit_retry.h"

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

DurationMicros RetryDelay(int tries) {
  constexpr DurationMicros kFirst = 100'000;
  constexpr DurationMicros kMost = 10'000'000;
  const int doublings = std::clamp(tries - 1, 0, 7);
  return std::min(kFirst << doublings, kMost);
}

bool HeldInputs::Add(const std::string& uid, model::JobInput input) {
  Held& h = held_[uid];
  bool kept_all = true;
  if (h.inputs.size() >= kMaxPerJob) {
    h.inputs.pop_front();
    kept_all = false;
  }
  h.inputs.push_back(std::move(input));
  return kept_all;
}

std::optional<model::JobInput> HeldInputs::Front(const std::string& uid) const {
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
